#!/usr/bin/env python3
"""What 16 cores could give a cluster run over one core, measured on any machine.

    scripts/p16-cluster.py [--runs N] [--processes P] [--workers W] -- BIN run PROGRAM STREAM... [ARGS...]

Runs the command RUNS times (3) alone with `-w 1`, and RUNS times as a loopback cluster of
P processes (2) of W workers each (8), every process started with `-n P -p I -h HOSTS`.
Each process's threads are read from /proc every 10 ms (as ../shared/tools/threadcpu.py
does for one process), so every thread of every process counts. Prints, from medians:
  S16       = total CPU at -w 1 / max(busiest thread of the cluster, the cluster's total CPU / 16)
  inflation = the cluster's total CPU / total CPU at -w 1
Output goes to /dev/null (process 0 writes it).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HZ = os.sysconf("SC_CLK_TCK")


def threads_of(pid, seen):
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                s = f.read().decode(errors="replace")
        except OSError:
            continue
        name = s[s.index("(") + 1 : s.rindex(")")]
        rest = s[s.rindex(")") + 2 :].split()
        ticks = int(rest[11]) + int(rest[12])
        key = (pid, tid)
        if key not in seen or ticks >= seen[key][1]:
            seen[key] = (f"{pid}:{name}", ticks)


def measure(commands):
    """Starts every command, polls their threads until all end; total CPU, threads."""
    procs = [
        subprocess.Popen(c, stdout=subprocess.DEVNULL if i else subprocess.DEVNULL, stderr=subprocess.PIPE)
        for i, c in enumerate(commands)
    ]
    seen = {}
    start = time.time()
    while any(p.poll() is None for p in procs):
        for p in procs:
            threads_of(p.pid, seen)
        time.sleep(0.01)
    wall = time.time() - start
    for p in procs:
        if p.returncode != 0:
            sys.exit(f"a process failed ({p.returncode}): {p.stderr.read().decode()}")
    threads = sorted(((t / HZ, n) for (n, t) in seen.values()), reverse=True)
    return sum(c for c, _ in threads), threads, wall


def main():
    args = sys.argv[1:]
    runs, processes, workers = 3, 2, 8
    while args and args[0] != "--":
        flag, value = args[0], int(args[1])
        if flag == "--runs":
            runs = value
        elif flag == "--processes":
            processes = value
        elif flag == "--workers":
            workers = value
        else:
            sys.exit(__doc__)
        args = args[2:]
    command = args[1:]
    if not command:
        sys.exit(__doc__)
    with tempfile.NamedTemporaryFile("w", suffix=".hosts", delete=False) as hosts:
        base = 2700 + os.getpid() % 500 * 8
        hosts.write("".join(f"127.0.0.1:{base + i}\n" for i in range(processes)))
    alone, cluster = [], []
    for _ in range(runs):
        cpu, _, _ = measure([command + ["-w", "1"]])
        alone.append(cpu)
        cluster_commands = [
            command + ["-w", str(workers), "-n", str(processes), "-p", str(i), "-h", hosts.name]
            for i in range(processes)
        ]
        cluster.append(measure(cluster_commands))
    os.unlink(hosts.name)
    c1 = statistics.median(alone)
    cn = statistics.median(c for c, _, _ in cluster)
    busiest = statistics.median(t[0][0] for _, t, _ in cluster)
    last = cluster[-1][1]
    print(f"-w 1: CPU {c1:.3f} s")
    print(f"{processes} x {workers}: CPU {cn:.3f} s (both processes); busiest threads: "
          + ", ".join(f"{n} {c:.2f}" for c, n in last[:4]))
    print(f"S16 {c1 / max(busiest, cn / 16):.1f}x   inflation {cn / c1:.2f}x")
    print(json.dumps({"cpu_w1": c1, "cpu_cluster": cn, "busiest": busiest}))


if __name__ == "__main__":
    main()
