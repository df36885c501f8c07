#!/usr/bin/env python3
"""Runs the Laser reasoner (https://github.com/karmaresearch/Laser, a local checkout that
stgflow never downloads or commits) on a rule file and a Laser stream file, and prints
Laser's answers one line per time point: `t: atom atom ...` (derived atoms, sorted).

    LASER_HOME=~/src/Laser pypy3 scripts/peers/laser_driver.py RULES.lars STREAM.laser

RULES.lars: one rule per line in Laser's syntax, `#` comments. STREAM.laser: the format
`stgflow-datasets --format laser` and `stgflow-bench compare` write: `#timeline A B`, then
`t: p(a,b) q(c) s` lines. This file is stgflow's own glue; it only calls Laser's public
classes (`Program(rules, stream).evaluate(t)` over a `TestStream`).
"""
import os
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: LASER_HOME=DIR laser_driver.py RULES STREAM")
    home = os.environ.get("LASER_HOME")
    if not home:
        sys.exit("set LASER_HOME to a checkout of https://github.com/karmaresearch/Laser")
    sys.path.insert(0, home)
    # Laser's `parser` package shadows a built-in module of the same name on Python 3.9
    # (PyPy3 in Debian 12): load it from the checkout by path, first.
    import importlib.util
    package = os.path.join(home, "parser")
    spec = importlib.util.spec_from_file_location(
        "parser", os.path.join(package, "__init__.py"), submodule_search_locations=[package])
    module = importlib.util.module_from_spec(spec)
    sys.modules["parser"] = module
    spec.loader.exec_module(module)
    from stream.teststream import TestStream
    from evalunit.program import Program

    with open(sys.argv[1]) as f:
        rules = [l.strip() for l in f if l.strip() and not l.lstrip().startswith("#")]
    data, start, end = {}, None, None
    with open(sys.argv[2]) as f:
        for line in f:
            line = line.strip()
            if line.startswith("#timeline"):
                _, start, end = line.split()
                start, end = int(start), int(end)
            elif ":" in line:
                t, atoms = line.split(":", 1)
                data[int(t)] = atoms.split()
    if start is None:
        sys.exit("%s: no `#timeline START END` line" % sys.argv[2])
    for t in range(start, end + 1):
        data.setdefault(t, [])
    program = Program(rules, TestStream(data, start, end))
    out = sys.stdout
    for t in range(start, end + 1):
        _, tuples = program.evaluate(t)
        atoms = sorted(tuples.get(t, ()))
        out.write("%d:%s\n" % (t, "".join(" " + a for a in atoms)))


if __name__ == "__main__":
    main()
