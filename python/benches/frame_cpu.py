"""CPU of ``Program.run`` from a DataFrame to a DataFrame against the command reading the
same facts from a file into a file, alternating, in one sitting (BENCHMARKS.md, "From
Python").

    python python/benches/frame_cpu.py [RUNS]

It generates ♢10's stream (10⁶ fresh names, 1,000 per time point) with the release
``stgflow-datasets``, and prints each side's median CPU (user + system, every thread) and
their ratio.
"""

import re
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

import stgflow

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "datasets" / "bench" / "diamond_10.tdl"
RELEASE = ROOT / "target" / "release"


def cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def main(runs: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="stgflow-frame-"))
    facts = work / "u1m.facts"
    with facts.open("wb") as out:
        subprocess.run(
            [RELEASE / "stgflow-datasets", "unique-atoms", "--atoms-per-point", "1000", "--time-points", "1000", "--constants", "names"],
            stdout=out,
            check=True,
        )
    atom = re.compile(r"p\(([^,]+),([^,]+),(\d+)\)\.")
    rows = [(m[1], m[2], int(m[3])) for m in map(atom.match, facts.read_text().splitlines()) if m]
    frame = pd.DataFrame({"predicate": "p", "time": [r[2] for r in rows], "a": [r[0] for r in rows], "b": [r[1] for r in rows]})
    program = stgflow.Program.load(PROGRAM)
    ours, theirs = [], []
    for _ in range(runs):
        before = cpu(resource.RUSAGE_SELF)
        result = program.run(frame, mode="changes", workers=1)
        ours.append(cpu(resource.RUSAGE_SELF) - before)
        before = cpu(resource.RUSAGE_CHILDREN)
        with (work / "out.txt").open("wb") as out:
            subprocess.run([RELEASE / "stgflow", "run", PROGRAM, facts, "--mode", "changes", "-w", "1"], stdout=out, check=True)
        theirs.append(cpu(resource.RUSAGE_CHILDREN) - before)
    lines = sum(1 for _ in (work / "out.txt").open("rb"))
    assert len(result) == lines, (len(result), lines)
    frame_cpu, command_cpu = statistics.median(ours), statistics.median(theirs)
    print(f"{len(frame)} facts, {lines} changes, {runs} runs each")
    print(f"DataFrame to DataFrame: median CPU {frame_cpu:.3f} s (runs: {', '.join(f'{c:.3f}' for c in ours)})")
    print(f"command, file to file:  median CPU {command_cpu:.3f} s (runs: {', '.join(f'{c:.3f}' for c in theirs)})")
    print(f"ratio {frame_cpu / command_cpu:.2f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
