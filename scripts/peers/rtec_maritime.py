#!/usr/bin/env python3
"""RTEC's maritime application side by side with stgflow, on random streams.

    rtec_maritime.py RTEC_CHECKOUT [--seeds 1,2,3] [--vessels 30] [--seconds 20000] [STGFLOW]

RTEC is fetched, never committed (`fetch github:aartikis/RTEC`); SWI-Prolog (`swipl`)
runs it. For each seed, a stream of maritime input events in RTEC's CSV form is
generated over vessels and areas of RTEC's own lists (`examples/maritime/resources/
auxiliary`): reports of velocity (speed, course, heading; 511 is "no heading"), stops,
slow motion, changes in speed and heading, gaps, areas entered and left, coordinates,
seconds apart. RTEC runs over it in one window (`run_rtec.sh --app=maritime`, window and
step the stream's last time), stgflow with `--mode rtec --window rtec --until LAST`, and
every recognition line is compared.

stgflow reads `intDurGreater` as the last operation of a holdsFor rule whose fluent no
other rule reads (an interval is known to be longer than the duration only that long after
it starts): both run RTEC's rules without the rule of anchoredOrMoored, which loitering
reads, and loitering's. The stream has no `proximity` input (RTEC's CSV form of an input
fluent's intervals), so pilotOps, tugging and rendezVous never hold.

Exit status 1 where a line differs.
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# Of each report kind, its share of the reports.
KINDS = [
    ("velocity", 0.35),
    ("stop", 0.10),
    ("slow_motion", 0.07),
    ("change_in_speed", 0.08),
    ("change_in_heading", 0.06),
    ("gap", 0.04),
    ("area", 0.15),
    ("coord", 0.15),
]
SPEEDS = [0, 0.3, 1, 2, 3, 4.5, 6, 8, 10, 12, 16, 20, 25]
GAPS = [1, 2, 5, 10, 30, 60, 120, 300, 900]


def listed(path, pattern):
    """The first group of `pattern` on every line of `path` that matches it."""
    with open(path) as f:
        return [m.group(1) for m in map(re.compile(pattern).match, f) if m]


def steady(rng, v, t, fishing):
    """From `t`, a stretch of steady fishing or searching in a fishing area: one speed,
    a report every minute or two, a turn every few minutes, for up to a few hours."""
    area = rng.choice(fishing)
    events = [(t, f"entersArea|{t}|{t}|{v}|{area}")]
    end = t + rng.randint(600, 12000)
    speed = rng.choice([3, 4.5, 6, 8])
    turn = t + rng.randint(60, 600)
    while t < end:
        t += rng.choice([30, 60, 90, 120])
        if t >= turn:
            events.append((t, f"change_in_heading|{t}|{t}|{v}"))
            turn = t + rng.choice([300, 600, 900, 1500, 2400])
        else:
            course = rng.randint(0, 359)
            events.append((t, f"velocity|{t}|{t}|{v}|{speed}|{course}|{course}"))
    t += 1
    events.append((t, f"leavesArea|{t}|{t}|{v}|{area}"))
    return t, events


def stream(aux, seed, vessels, seconds, steady_share=0.0):
    """A random narrative of `vessels` vessels over `seconds`, as RTEC's CSV lines. With
    `steady_share` > 0, half the vessels are fishing or search-and-rescue vessels, and
    each report starts a stretch of steady fishing or searching (`steady`) with that
    chance."""
    rng = random.Random(seed)
    info = f"{aux}/vesselInformation/vesselStaticInfo.prolog"
    known = listed(info, r"vesselStaticInfo\((\d+),")
    areas = []
    for kind in ["anchorage", "fishing", "natura", "nearCoast", "nearCoast5k", "nearPorts"]:
        areas += listed(f"{aux}/areaIDs/{kind}_big_areas.prolog", r"bigAreaType\((\w+),")
    fishing = [a for a in areas if a.startswith("fishing")]
    chosen = []
    if steady_share > 0:
        searching = listed(info, r"vesselStaticInfo\((\d+),(?:fishing|sar),")
        chosen = rng.sample(searching, min(len(searching), vessels // 2))
    chosen += rng.sample([v for v in known if v not in chosen], vessels - len(chosen))
    events = []
    for v in chosen:
        t = rng.randint(1, 20)
        inside, started, gap = set(), set(), False
        while t < seconds:
            if not gap and rng.random() < steady_share:
                t, stretch = steady(rng, v, t, fishing)
                events += [(s, line) for s, line in stretch if s < seconds]
                t += rng.choice(GAPS)
                continue
            kind = rng.choices([k for k, _ in KINDS], [w for _, w in KINDS])[0]
            if gap:
                line, gap = f"gap_end|{t}|{t}|{v}", False
            elif kind == "velocity":
                course = rng.randint(0, 359)
                heading = rng.choice([rng.randint(0, 359), (course + rng.randint(-20, 20)) % 360, 511])
                line = f"velocity|{t}|{t}|{v}|{rng.choice(SPEEDS)}|{course}|{heading}"
            elif kind in ("stop", "slow_motion", "change_in_speed"):
                end = kind in started
                started ^= {kind}
                line = f"{kind}_{'end' if end else 'start'}|{t}|{t}|{v}"
            elif kind == "change_in_heading":
                line = f"change_in_heading|{t}|{t}|{v}"
            elif kind == "gap":
                line, gap = f"gap_start|{t}|{t}|{v}", True
            elif kind == "area" and inside and rng.random() < 0.5:
                area = rng.choice(sorted(inside))
                inside.discard(area)
                line = f"leavesArea|{t}|{t}|{v}|{area}"
            elif kind == "area":
                area = rng.choice(areas)
                inside.add(area)
                line = f"entersArea|{t}|{t}|{v}|{area}"
            else:
                line = f"coord|{t}|{t}|{v}|{rng.uniform(-5, -4):.3f}|{rng.uniform(48, 49):.3f}"
            events.append((t, line))
            t += rng.choice(GAPS)
    events.sort(key=lambda e: e[0])
    return [line for _, line in events]


# The holdsFor rules stgflow does not read: a fluent kept by `intDurGreater` that another
# rule reads, and that rule.
UNREAD = ("holdsFor(anchoredOrMoored(", "holdsFor(loitering(")


def without_durations(rules):
    """RTEC's maritime rules without the clauses of UNREAD."""
    with open(rules) as f:
        clauses = re.split(r"(?<=\.)\s*\n", f.read())
    return "\n".join(c for c in clauses if not any(u in c for u in UNREAD)) + "\n"


def lines(path):
    with open(path) as f:
        return sorted(line.strip() for line in f if line.strip())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("rtec")
    parser.add_argument("stgflow", nargs="?", default=os.path.join(HERE, "../../target/release/stgflow"))
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--vessels", type=int, default=30)
    parser.add_argument("--seconds", type=int, default=20000)
    parser.add_argument("--steady", type=float, default=0.0,
                        help="the chance that a report starts a stretch of steady fishing or searching")
    args = parser.parse_args()
    rtec = os.path.abspath(args.rtec)
    stgflow = os.path.abspath(args.stgflow)
    app = f"{rtec}/examples/maritime"
    aux = f"{app}/resources/auxiliary"
    background = [f"{aux}/compare.prolog", f"{aux}/loadStaticData.prolog"]
    scripts = f"{rtec}/execution scripts"
    differing = 0
    with tempfile.TemporaryDirectory() as work:
        rules = f"{work}/rules.prolog"
        with open(rules, "w") as f:
            f.write(without_durations(f"{app}/resources/patterns/rules.prolog"))
        for seed in (int(s) for s in args.seeds.split(",")):
            data = f"{work}/stream-{seed}.csv"
            records = stream(aux, seed, args.vessels, args.seconds, args.steady)
            with open(data, "w") as f:
                f.write("\n".join(records) + "\n")
            last = max(int(line.split("|")[1]) for line in records)
            subprocess.run(
                ["./run_rtec.sh", "--app=maritime", f"--event-description={rules}"]
                + [f"--background-knowledge={b}" for b in background]
                + [f"--window-size={last}", f"--step={last}", "--start-time=0",
                   f"--end-time={last}", "--output-mode=file", f"--input={data}"],
                cwd=scripts, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
            )
            theirs = lines(f"{app}/results/log-swi-{last}-{last}-csv-file-recognised-intervals.txt")
            out = subprocess.run(
                [stgflow, "run", "-q", rules] + background
                + [data, "--mode", "rtec", "--window", "rtec", "--until", str(last)],
                capture_output=True, text=True, check=True,
            ).stdout
            ours = sorted(line for line in out.splitlines() if line)
            only_ours = sorted(set(ours) - set(theirs))
            only_theirs = sorted(set(theirs) - set(ours))
            differing += len(only_ours) + len(only_theirs)
            print(f"seed {seed}: {len(records)} records, time 1..{last}: RTEC {len(theirs)} "
                  f"pairs, stgflow {len(ours)}, lines differing {len(only_ours) + len(only_theirs)}")
            for line in only_ours[:3]:
                print(f"  stgflow: {line}")
            for line in only_theirs[:3]:
                print(f"  RTEC:    {line}")
    sys.exit(1 if differing else 0)


if __name__ == "__main__":
    main()
