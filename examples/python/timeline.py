"""From Python: generate a stream, run a TD program, a LARS program in Laser's syntax and
an Event Calculus description in RTEC's syntax over it, and draw what each derives as a
timeline of intervals.

    pip install ./python matplotlib
    python examples/python/timeline.py [timeline.png]
"""

import random
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # a file, no window
import matplotlib.pyplot as plt
import pandas as pd

import stgflow

ROOT = Path(__file__).resolve().parents[2]

# Laser's syntax: verified within the last 2 time points, trusted when verified at each of
# the last 6 (the STG paper's rules (6) and (7)).
LARS = """
verified(X) :- time_win(2,0,1,diamond(repair(X)))
trusted(X) :- time_win(6,0,1,box(verified(X)))
"""

# RTEC's syntax: a device is in service from a repair until a warning.
EVENT_CALCULUS = """
initiatedAt(in_service(X)=true, T) :- happensAt(repair(X), T).
terminatedAt(in_service(X)=true, T) :- happensAt(warning(X), T).
"""


def events(devices: int = 5, points: int = 120, seed: int = 7) -> pd.DataFrame:
    """Repairs and warnings of `devices` devices over `points` time points."""
    rng = random.Random(seed)
    rows = []
    for time in range(points):
        for device in range(devices):
            draw = rng.random()
            if draw < 0.10:
                rows.append(("repair", time, f"d{device}"))
            elif draw < 0.14:
                rows.append(("warning", time, f"d{device}"))
    return pd.DataFrame(rows, columns=["predicate", "time", "arg1"])


def derive(stream: pd.DataFrame) -> pd.DataFrame:
    """Each program's intervals over `stream`, one frame, a `program` column naming it."""
    programs = {
        "TD": stgflow.Program.load(ROOT / "datasets" / "examples" / "device_safety.tdl"),
        "LARS": stgflow.Program.from_text(LARS, language="lars"),
        "EC": stgflow.Program.from_text(EVENT_CALCULUS, language="ec"),
    }
    frames = []
    for name, program in programs.items():
        frame = program.run(stream, mode="intervals")
        frames.append(frame.assign(program=name)[["program", "predicate", "arg1", "start", "end"]])
    return pd.concat(frames, ignore_index=True)


def draw(intervals: pd.DataFrame, out: Path) -> None:
    """A row per program, predicate and device; a bar per interval."""
    rows = intervals[["program", "predicate", "arg1"]].drop_duplicates().sort_values(["program", "predicate", "arg1"])
    labels = [f"{p}: {q}({a})" for p, q, a in rows.itertuples(index=False)]
    index = {key: i for i, key in enumerate(rows.itertuples(index=False, name=None))}
    colours = {"TD": "#0072B2", "LARS": "#D55E00", "EC": "#009E73"}  # Okabe and Ito
    figure, axes = plt.subplots(figsize=(10, 0.25 * len(labels) + 1.2))
    for program, predicate, device, start, end in intervals.itertuples(index=False):
        row = index[(program, predicate, device)]
        axes.broken_barh([(start, end - start)], (row - 0.4, 0.8), color=colours[program])
    axes.set_yticks(range(len(labels)), labels, fontsize=7)
    axes.invert_yaxis()
    axes.set_xlabel("time point")
    axes.set_title("What each program derives, as intervals")
    figure.tight_layout()
    figure.savefig(out, dpi=120)


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "timeline.png")
    stream = events()
    intervals = derive(stream)
    draw(intervals, out)
    counts = intervals.groupby(["program", "predicate"]).size()
    for (program, predicate), n in counts.items():
        print(f"{program} {predicate}: {n} intervals")
    print(f"drawn to {out}")


if __name__ == "__main__":
    main()
