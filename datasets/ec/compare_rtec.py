#!/usr/bin/env python3
"""Compare stgflow's `--mode intervals` output with RTEC's recognised-intervals file.

    compare_rtec.py [--from S] [--until E] [--all] OURS.txt RTEC-recognised-intervals.txt [fluent=value ...]

Both use right-open intervals [start, end) in the input's time units (run stgflow with
the data's clock tick, `--tick 40` for CAVIAR). Prints, per fluent-value pair, the number
of intervals on each side, how many are identical, and the first few differences (all
of them with --all).

* `--from S --until E` clips both sides to [S, E): RTEC's window (Ts, Te] reports
  nothing at Ts and ends an interval still open at Te with Te+1 (or `inf`), where
  stgflow's timeline is [first, last] and ends an open interval at last+1. An RTEC end
  of `inf` counts as E.
* A nested fluent of RTEC's, `per(close_ballot(C,M))=true`, is compared with stgflow's
  flattened `per_close_ballot(C,M,true)`.
"""
import re
import sys
from collections import defaultdict


def ours(path):
    out = defaultdict(set)
    for line in open(path):
        m = re.match(r"(\w+)\((.*)\) \[(\d+),(\d+)\)", line.strip())
        if not m:
            continue
        name, args, start, end = m.groups()
        *args, value = args.split(",")
        out[(name, tuple(args), value)].add((int(start), int(end)))
    return out


def flatten(name, args):
    """`per`, `close_ballot(10,3)` → `per_close_ballot`, (10, 3)."""
    m = re.fullmatch(r"(\w+)\((.*)\)", args.strip())
    if m:
        inner, rest = m.groups()
        return f"{name}_{inner}", tuple(a.strip() for a in rest.split(","))
    return name, tuple(a.strip() for a in args.split(","))


def rtec(path):
    out = defaultdict(set)
    pattern = re.compile(r"recognitions\(\w+,(\w+),\[\[(.*?)\],(\w+)\],\[(.*)\]\)\.")
    for line in open(path):
        m = pattern.match(line.strip())
        if not m:
            continue
        name, args, value, intervals = m.groups()
        name, args = flatten(name, args)
        for start, end in re.findall(r"\((\d+),(\w+)\)", intervals):
            out[(name, args, value)].add((int(start), end if end == "inf" else int(end)))
    return out


def clip(intervals, lo, hi):
    clipped = set()
    for start, end in intervals:
        if end == "inf":
            end = hi if hi is not None else end
        if lo is not None:
            start = max(start, lo)
        if hi is not None and end != "inf":
            end = min(end, hi)
        if end == "inf" or start < end:
            clipped.add((start, end))
    return clipped


def main():
    argv = sys.argv[1:]
    lo = hi = None
    show = 12
    while argv and argv[0].startswith("--"):
        flag = argv.pop(0)
        if flag == "--from":
            lo = int(argv.pop(0))
        elif flag == "--until":
            hi = int(argv.pop(0))
        elif flag == "--all":
            show = None
        else:
            sys.exit(f"unknown option {flag}\n{__doc__}")
    if len(argv) < 2:
        sys.exit(__doc__)
    a, b = ours(argv[0]), rtec(argv[1])
    wanted = set(argv[2:])
    by_pair = defaultdict(lambda: [0, 0, 0, []])
    for key in sorted(set(a) | set(b)):
        pair = f"{key[0]}={key[2]}"
        if wanted and pair not in wanted:
            continue
        mine, theirs = clip(a.get(key, set()), lo, hi), clip(b.get(key, set()), lo, hi)
        stats = by_pair[pair]
        stats[0] += len(mine)
        stats[1] += len(theirs)
        stats[2] += len(mine & theirs)
        for i in sorted(mine - theirs, key=str):
            stats[3].append(f"  only ours: {key[0]}({','.join(key[1])})={key[2]} {i}")
        for i in sorted(theirs - mine, key=str):
            stats[3].append(f"  only RTEC: {key[0]}({','.join(key[1])})={key[2]} {i}")
    for pair, (n_ours, n_rtec, same, diffs) in sorted(by_pair.items()):
        print(f"{pair}: ours {n_ours}, RTEC {n_rtec}, identical {same}")
        for line in diffs[:show]:
            print(line)


if __name__ == "__main__":
    main()
