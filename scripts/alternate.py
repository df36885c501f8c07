#!/usr/bin/env python3
"""Alternate commands and print each one's median wall time, CPU time and peak RSS.

    alternate.py RUNS -- NAME OUT CMD... [';;' NAME OUT CMD...]...

Runs the commands in turn, RUNS rounds, each with its stdout written to the file OUT;
CPU is the child's user + system time (every thread) and RSS its peak resident set, from
wait4.
"""
import os
import statistics as st
import subprocess
import sys
import time

runs = int(sys.argv[1])
commands, current = [], []
for arg in sys.argv[3:]:
    if arg == ";;":
        commands.append(current)
        current = []
    else:
        current.append(arg)
commands.append(current)
times = {c[0]: ([], [], []) for c in commands}
for _ in range(runs):
    for name, out, *cmd in commands:
        with open(out, "wb") as f:
            start = time.perf_counter()
            child = subprocess.Popen(cmd, stdout=f)
            _, status, usage = os.wait4(child.pid, 0)
            wall = time.perf_counter() - start
        if status != 0:
            sys.exit(f"{name} failed: wait status {status}")
        times[name][0].append(wall)
        times[name][1].append(usage.ru_utime + usage.ru_stime)
        times[name][2].append(usage.ru_maxrss / 1024)
for name, (wall, cpu, rss) in times.items():
    print(f"{name:12} wall {st.median(wall):.3f} s  CPU {st.median(cpu):.3f} s"
          f"  RSS {st.median(rss):.0f} MiB  (wall {min(wall):.3f}-{max(wall):.3f})")
