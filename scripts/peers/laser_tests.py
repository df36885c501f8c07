#!/usr/bin/env python3
"""Runs Laser's own unit tests (`test.py` of https://github.com/karmaresearch/Laser, a
local checkout converted to Python 3 that stgflow never downloads or commits) with a
recording `Program`, then runs each test's rules and stream through stgflow
(`--mode laser`) and compares the answers at every time point the test evaluates.

    LASER_HOME=~/src/Laser-py3 python3 scripts/peers/laser_tests.py [STGFLOW] [TEST…]

Prints one line per test (`same`, `differs: …` with the first differences, or `rejected:`
with stgflow's first error) and the counts; the cases are left in $OUT (default
/tmp/laser-tests) as `prog.lars`, `stream.laser` and `laser.expected`. This file is
stgflow's own glue: it only wraps Laser's public classes (`Program`, `TestStream`).
"""
import os
import subprocess
import sys
import unittest


def record(home):
    """Laser's tests, each as (rules, data, start, end, [(t, answers at t)])."""
    sys.path.insert(0, home)
    os.chdir(home)
    import evalunit.program as program_module
    import stream.teststream as stream_module

    recorded, current = {}, [None]

    class Stream(stream_module.TestStream):
        def __init__(self, data, start, end):
            super().__init__(data, start, end)
            self.data, self.start, self.end = data, start, end

    class Program(program_module.Program):
        def __init__(self, rules, stream):
            super().__init__(rules, stream)
            self.record = {"rules": list(rules), "data": stream.data, "start": stream.start,
                           "end": stream.end, "answers": []}
            recorded.setdefault(current[0], []).append(self.record)

        def evaluate(self, now):
            holds, tuples = super().evaluate(now)
            self.record["answers"].append((now, sorted(tuples.get(now, ()))))
            return holds, tuples

    import test
    test.Program, test.TestStream = Program, Stream
    names = sorted((n for n in dir(test.Test) if n.startswith("test")), key=lambda n: (len(n), n))
    with open(os.devnull, "w") as quiet:
        for name in names:
            current[0] = name
            result = unittest.TextTestRunner(stream=quiet).run(test.Test(name))
            if not result.wasSuccessful():
                print(f"{name}: Laser fails its own test", file=sys.stderr)
    return recorded


def main():
    home = os.environ.get("LASER_HOME")
    if not home:
        sys.exit("set LASER_HOME to a Python 3 checkout of https://github.com/karmaresearch/Laser")
    args = sys.argv[1:]
    stgflow = os.path.abspath(args.pop(0)) if args and not args[0].startswith("test") else "stgflow"
    out = os.path.abspath(os.environ.get("OUT", "/tmp/laser-tests"))
    recorded = record(os.path.abspath(home))
    counts = {}
    for name, programs in recorded.items():
        if args and name not in args:
            continue
        r = programs[0]
        case = os.path.join(out, name)
        os.makedirs(case, exist_ok=True)
        with open(f"{case}/prog.lars", "w") as f:
            f.write("".join(rule.strip() + "\n" for rule in r["rules"]))
        with open(f"{case}/stream.laser", "w") as f:
            f.write(f"#timeline {r['start']} {r['end']}\n")
            for t in sorted(r["data"]):
                if r["start"] <= t <= r["end"]:
                    atoms = [a.replace(" ", "") for a in r["data"][t] if a.strip()]
                    f.write(f"{t}:{''.join(' ' + a for a in atoms)}\n")
        # Laser answers nothing after the timeline's end: those evaluations are left out.
        expected = {now: f"{now}:" + "".join(" " + a for a in atoms)
                    for now, atoms in r["answers"] if now <= r["end"]}
        with open(f"{case}/laser.expected", "w") as f:
            f.write("".join(line + "\n" for line in expected.values()))
        run = subprocess.run([stgflow, "run", f"{case}/prog.lars", f"{case}/stream.laser",
                              "--mode", "laser"], capture_output=True, text=True)
        if run.returncode != 0:
            errors = [l for l in run.stderr.splitlines() if "Error" in l or l.startswith("error")]
            status = "rejected: " + (errors[0] if errors else run.stderr.strip()[:200])
        else:
            got = {int(l.split(":")[0]): l for l in run.stdout.splitlines() if ":" in l}
            diffs = [(e, got.get(now)) for now, e in expected.items() if got.get(now) != e]
            status = "same" if not diffs else "differs: " + "; ".join(
                f"Laser [{e}] stgflow [{g}]" for e, g in diffs[:3])
        kind = status.split(":")[0]
        counts[kind] = counts.get(kind, 0) + 1
        print(f"{name:8} {status}")
    print(counts)


if __name__ == "__main__":
    main()
