#!/usr/bin/env python3
"""Issue 23's grid: Laser's micro-benchmark programs (♢, □ and @ at windows 10 and 100, ♢10
`and not(s)`) on streams of fresh names, stgflow `--mode laser` against Laser under PyPy3
(through laser_driver.py; `PYPY` names another interpreter), CPU time side by side in
one sitting.

    LASER_HOME=~/src/Laser-py3 python3 scripts/peers/laser_grid.py [--rounds N] [--warmup W]
        [--rows d10:s2e5,at10:s1e6,…] [--no-laser] STGFLOW [STGFLOW_AFTER]

Per row: Laser once (its output kept as the reference), each build's peak RSS once, W
unmeasured runs of each build (`--warmup`, 3), then N rounds, each a run of each build
with the output to a file and one to /dev/null, under `perf stat -e
task-clock,user_time,system_time`; medians. Every build's output is
compared with Laser's (`same`). The programs, and the streams where missing (written by
stgflow-datasets next to the first build, in this checkout's target/release or on PATH),
go to $OUT (default /tmp/laser-grid); the table is printed as Markdown and the runs are
kept in $OUT/grid.json. Needs `perf` and GNU `time`. This script only calls Laser's
public classes through laser_driver.py and never fetches Laser.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

PROGRAMS = {
    "d10": ("♢10", "q(A,B) :- time_win(10,0,1,diamond(p(A,B)))"),
    "d100": ("♢100", "q(A,B) :- time_win(100,0,1,diamond(p(A,B)))"),
    "b10": ("□10", "q(A,B) :- time_win(10,0,1,box(p(A,B)))"),
    "b100": ("□100", "q(A,B) :- time_win(100,0,1,box(p(A,B)))"),
    "at10": ("@10", "q(T,A,B) :- time_win(10,0,1,@(T,p(A,B)))"),
    "at100": ("@100", "q(T,A,B) :- time_win(100,0,1,@(T,p(A,B)))"),
    "d10s": ("♢10 `and not(s)`", "q(A,B) :- time_win(10,0,1,diamond(p(A,B))) and not(s)"),
}
# Name: (time points, every how many a 0-ary `s` is added; 0 for never), 100 atoms each.
STREAMS = {"s2e5": (2000, 0), "s2e5s": (2000, 7), "s1e6": (10000, 0), "s1e6s": (10000, 7)}
SIZES = {"s2e5": "2·10⁵", "s2e5s": "2·10⁵", "s1e6": "10⁶", "s1e6s": "10⁶"}
ROWS = "d10:s2e5,d100:s2e5,b10:s2e5,b100:s2e5,at10:s2e5,at100:s2e5,d10s:s2e5s,d10:s1e6,at10:s1e6,d10s:s1e6s,b10:s1e6"
EVENTS = ("task-clock", "user_time", "system_time")


def stat(command, out, env=None):
    """CPU, user and system time in ms of one run of `command`, its output to `out`."""
    with open(out, "w") as sink:
        run = subprocess.run(["perf", "stat", "-x,", "-e", ",".join(EVENTS)] + command,
                             stdout=sink, stderr=subprocess.PIPE, text=True, env=env)
    if run.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (run.returncode, " ".join(command), run.stderr[-2000:]))
    times = {}
    for line in run.stderr.splitlines():
        fields = line.split(",")
        for event in EVENTS:
            if len(fields) > 2 and fields[2].startswith(event):
                try:
                    value = float(fields[0])
                except ValueError:
                    continue
                times[event] = value if event == "task-clock" else value / 1e6
    return times


def peak_rss_mb(command):
    run = subprocess.run(["/usr/bin/time", "-f", "%M"] + command,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return int(run.stderr.split()[-1]) / 1024


def median(runs, event):
    values = [run[event] for run in runs if event in run]
    return statistics.median(values) if values else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("builds", nargs="+", help="one or two stgflow binaries (before, after)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=3,
                        help="unmeasured runs of each build per row, after Laser's run")
    parser.add_argument("--rows", default=ROWS, help="program:stream pairs, comma-separated")
    parser.add_argument("--no-laser", action="store_true", help="compare the builds only")
    args = parser.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    builds = [os.path.abspath(b) for b in args.builds]
    out = os.environ.get("OUT", "/tmp/laser-grid")
    os.makedirs(out, exist_ok=True)
    if not shutil.which("perf"):
        sys.exit("needs `perf` (linux-perf)")
    if not os.path.exists("/usr/bin/time"):
        sys.exit("needs GNU time at /usr/bin/time (for the peak RSS)")
    repo = os.path.dirname(os.path.dirname(here))
    candidates = [os.path.join(os.path.dirname(builds[0]), "stgflow-datasets"),
                  os.path.join(repo, "target", "release", "stgflow-datasets"),
                  shutil.which("stgflow-datasets") or ""]
    datasets = next((c for c in candidates if c and os.path.exists(c)), None)
    if datasets is None:
        sys.exit("no stgflow-datasets: cargo build --release -p stgflow-datasets")
    env = dict(os.environ)
    if not args.no_laser and not env.get("LASER_HOME"):
        sys.exit("set LASER_HOME to a checkout of Laser converted for Python 3 (BENCHMARKS.md)")
    rows = [row.split(":") for row in args.rows.split(",")]
    for program, stream in rows:
        with open(os.path.join(out, program + ".lars"), "w") as f:
            f.write(PROGRAMS[program][1] + "\n")
        path = os.path.join(out, stream + ".laser")
        if not os.path.exists(path):
            points, extra = STREAMS[stream]
            subprocess.run([datasets, "unique-atoms", "--constants", "names", "--atoms-per-point",
                            "100", "--time-points", str(points), "--extra-every", str(extra),
                            "--format", "laser", "--out", path], check=True)
    results = {}
    for program, stream in rows:
        lars, laser_in = (os.path.join(out, f) for f in (program + ".lars", stream + ".laser"))
        reference = os.path.join(out, "laser.%s.%s" % (program, stream))
        row = {}
        if not args.no_laser:
            driver = [os.environ.get("PYPY", "pypy3"), "-W", "ignore",
                      os.path.join(here, "laser_driver.py"), lars, laser_in]
            row["laser"] = stat(driver, reference, env)
        written = os.path.join(out, "out.grid")
        for build in builds:
            command = [build, "run", lars, laser_in, "--mode", "laser"]
            with open(written, "w") as f:
                subprocess.run(command, stdout=f, check=True)
            same = None
            if not args.no_laser:
                same = subprocess.run(["cmp", "-s", written, reference]).returncode == 0
            row[build] = {"rss": peak_rss_mb(command), "same": same, "file": [], "null": []}
        # Unmeasured runs first: on this project's machine, a virtual machine that hands
        # freed memory back to its host, the first runs after Laser's (up to 2 GB freed)
        # took their memory back from the host, at twice the CPU (@10 after □100's
        # Laser: 138–177 ms with 74–98 ms of system time, then 68–79 ms). File and
        # /dev/null rounds alternate, so that a slow spell falls on both.
        for _ in range(args.warmup):
            for build in builds:
                command = [build, "run", lars, laser_in, "--mode", "laser"]
                stat(command, written)
        for _ in range(args.rounds):
            for target in ("file", "null"):
                for build in builds:
                    command = [build, "run", lars, laser_in, "--mode", "laser"]
                    row[build][target].append(stat(command, written if target == "file" else "/dev/null"))
        results["%s:%s" % (program, stream)] = row
        line = "%s:%s" % (program, stream)
        for build in builds:
            b = row[build]
            line += "  %s: file %.1f ms, /dev/null %.1f ms, same %s" % (
                os.path.basename(build), median(b["file"], "task-clock"),
                median(b["null"], "task-clock"), b["same"])
        print(line, file=sys.stderr, flush=True)
    with open(os.path.join(out, "grid.json"), "w") as f:
        json.dump(results, f)
    last = builds[-1]
    head = "| program, stream | Laser: CPU |"
    head += " before: CPU to a file (to `/dev/null`) |" if len(builds) > 1 else ""
    head += " now: CPU to a file (user + sys), to `/dev/null`, RSS | Laser ÷ stgflow, to a file | to `/dev/null` |"
    print(head)
    print("|---" * head.count(" |") + "|")
    for (program, stream), (key, row) in zip(rows, results.items()):
        laser = row.get("laser", {}).get("task-clock", float("nan")) / 1000
        cells = ["%s, %s" % (PROGRAMS[program][0], SIZES[stream]), "%.2f s" % laser]
        ratios = []
        for build in builds:
            b = row[build]
            f, n = median(b["file"], "task-clock"), median(b["null"], "task-clock")
            if build == last:
                cells.append("%.0f ms (%.0f + %.0f), %.0f ms, %.0f MB" % (
                    f, median(b["file"], "user_time"), median(b["file"], "system_time"), n, b["rss"]))
            else:
                cells.append("%.0f ms (%.0f ms)" % (f, n))
            ratios.append((laser * 1000 / f, laser * 1000 / n))
        cells.append(" → ".join("%.1f×" % r[0] for r in ratios))
        cells.append(" → ".join("%.1f×" % r[1] for r in ratios))
        print("| " + " | ".join(cells) + " |")
    differ = [k for k, row in results.items() for b in builds if row[b]["same"] is False]
    if differ:
        sys.exit("output differs from Laser's: %s" % ", ".join(differ))


if __name__ == "__main__":
    main()
