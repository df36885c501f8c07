"""The Python package against the command line: the same answers on the device-safety
example, RTEC's voting files and a Laser program; errors with their diagnostics; a
DataFrame, an iterable of facts and a path giving the same results."""

import subprocess
from pathlib import Path

import pandas as pd
import pytest

import stgflow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "datasets" / "examples"
RTEC = ROOT.parent / "shared" / "data" / "rtec"


def cli(*args):
    """What the `stgflow` binary built beside the workspace prints, if it is built."""
    binary = ROOT / "target" / "release" / "stgflow"
    if not binary.exists():
        binary = ROOT / "target" / "debug" / "stgflow"
    if not binary.exists():
        pytest.skip("no stgflow binary built to compare with")
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, check=True).stdout.decode()


def test_version():
    assert stgflow.__version__ == "0.1.0"


def test_device_safety_intervals_are_the_command_lines():
    program = stgflow.Program.load(EXAMPLES / "device_safety.tdl")
    frame = program.run(EXAMPLES / "device_safety.facts", mode="intervals")
    assert list(frame.columns) == ["predicate", "arg1", "start", "end"]
    ours = sorted(f"{r.predicate}({r.arg1}) [{r.start},{r.end})" for r in frame.itertuples())
    theirs = sorted(cli("run", EXAMPLES / "device_safety.tdl", EXAMPLES / "device_safety.facts", "--mode", "intervals").splitlines())
    assert ours == theirs
    assert "trusted(d1) [4,7)" in ours


def test_changes_on_several_workers_are_one_workers():
    program = stgflow.Program.load(EXAMPLES / "device_safety.tdl")
    one = program.run(EXAMPLES / "device_safety.facts", mode="changes", workers=1)
    three = program.run(EXAMPLES / "device_safety.facts", mode="changes", workers=3)
    assert list(one.columns) == ["predicate", "arg1", "time", "change"]
    pd.testing.assert_frame_equal(one, three)
    assert set(one["change"]) == {1, -1}


def test_a_dataframe_an_iterable_and_a_path_give_the_same():
    program = stgflow.Program.load(EXAMPLES / "device_safety.tdl")
    by_path = program.run(EXAMPLES / "device_safety.facts", mode="points")
    facts = []
    for line in (EXAMPLES / "device_safety.facts").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("%"):
            continue
        name, rest = line.split("(", 1)
        values = [v.strip() for v in rest.rstrip(").").split(",")]
        facts.append((name.strip(), values[:-1], int(values[-1])))
    by_facts = program.run(facts, mode="points")
    pd.testing.assert_frame_equal(by_path, by_facts)
    width = max(len(args) for _, args, _ in facts)
    frame = pd.DataFrame(
        [{"predicate": p, "time": t, **{f"a{i}": v for i, v in enumerate(args)}} for p, args, t in facts]
    )
    assert len(frame.columns) == 2 + width
    pd.testing.assert_frame_equal(by_path, program.run(frame, mode="points"))


def test_a_laser_program_gives_laser_lines():
    program = stgflow.Program.from_text("q(X) :- time_win(2,0,1,diamond(p(X)))\n", language="lars")
    stream = ROOT / "python" / "tests" / "p.laser"
    stream.write_text("#timeline 0 3\n0: p(a)\n1: p(b)\n3:\n")
    try:
        frame = program.run(stream, mode="laser")
    finally:
        stream.unlink()
    assert [(r.time, r.facts) for r in frame.itertuples()] == [
        (0, ["q(a)"]),
        (1, ["q(a)", "q(b)"]),
        (2, ["q(a)", "q(b)"]),
        (3, ["q(b)"]),
    ]


@pytest.mark.skipif(not (RTEC / "voting").exists(), reason="RTEC's data are not beside the checkout")
def test_rtecs_voting_files_give_rtecs_recognitions():
    program = stgflow.Program.load(RTEC / "voting" / "rtec" / "rules.prolog", RTEC / "voting" / "rtec" / "voting_static_generator.prolog")
    frame = program.run(RTEC / "voting" / "voting.csv", mode="rtec", args=["--window", "rtec"])
    expected = (RTEC / "voting" / "rtec" / "rtec-recognised-intervals.txt").read_text().split()
    intervals = sum(line.count("),(") + 1 for line in expected if line.startswith("recognitions("))
    assert len(frame) == intervals
    assert set(frame.columns) == {"fluent", "args", "value", "start", "end"}
    assert "status" in set(frame["fluent"])


def test_a_rejected_program_raises_with_every_diagnostic():
    with pytest.raises(stgflow.ProgramError) as raised:
        stgflow.Program.from_text("rising(X, T+1) :- reading(X, T).\nbad(X, T) :- q(Y, T).\n")
    codes = [d.code for d in raised.value.diagnostics if d.error]
    assert codes == ["E006", "E002"]
    assert raised.value.diagnostics[0].line == 1
    assert "E006" in str(raised.value)


def test_warnings_are_kept_and_a_bad_stream_raises_with_what_was_written():
    program = stgflow.Program.from_text("p(T) :- not p(T-1).\nq(X, T) :- r(X, T).\n")
    assert [w.code for w in program.warnings] == ["W003"]
    with pytest.raises(stgflow.RunError) as raised:
        program.run([("r", ["a"], 1), ("r", ["b"], 0)], mode="changes", output=["q"])
    assert raised.value.diagnostics[0].code == "E102"


def test_plan_and_explain():
    program = stgflow.Program.load(EXAMPLES / "device_safety.tdl")
    assert "component" in program.plan()
    why = program.explain(EXAMPLES / "device_safety.facts", "trusted(d1,4)")
    assert "trusted(d1" in why


def test_ctrl_c_stops_a_run_with_keyboard_interrupt_and_the_next_run_runs():
    import _thread
    import threading

    # Flips at every time point for a billion of them: only Ctrl-C ends it.
    program = stgflow.Program.from_text("p(T) :- not p(T-1).\n")
    threading.Timer(0.5, _thread.interrupt_main).start()
    with pytest.raises(KeyboardInterrupt):
        program.run([("q", ["a"], 0)], mode="changes", until=10**9, args=["--output", "p"])
    frame = program.run([("q", ["a"], 0)], mode="changes", until=4, args=["--output", "p"])
    assert list(frame["time"]) == [0, 1, 2, 3, 4]


def _collected(session, frames, rows, deadline=30.0):
    """Takes a session's results until they hold ``rows`` rows (or the deadline)."""
    import time

    end = time.time() + deadline
    while sum(len(f) for f in frames) < rows and time.time() < end:
        frames.append(session.results(timeout=0.2))
    return sum(len(f) for f in frames)


@pytest.mark.parametrize("mode", ["changes", "intervals", "points"])
def test_a_session_gives_what_a_run_over_the_same_facts_gives(mode):
    program = stgflow.Program.load(EXAMPLES / "device_safety.tdl")
    stream = [(t, "repair" if t % 3 == 0 else "warning", [f"d{t % 4}"]) for t in range(0, 40)]
    whole = program.run([(p, a, t) for t, p, a in stream], mode=mode)
    frames = []
    with program.session(mode=mode) as session:
        for t, predicate, arguments in stream[:20]:
            session.push(t, [(predicate, arguments)])
        # Time points 0..18 are complete: their results come without more input.
        complete = whole[whole["start" if mode == "intervals" else "time"] <= 18]
        if mode == "intervals":
            complete = whole[whole["end"] <= 19]
        assert _collected(session, frames, len(complete)) == len(complete)
        for t, predicate, arguments in stream[20:]:
            session.push(t, [(predicate, arguments)])
        frames.append(session.close())
    live = pd.concat(frames, ignore_index=True)
    timing = {"points": ["time"], "changes": ["time", "change"], "intervals": ["start", "end"]}[mode]
    key = [timing[0], "predicate", "arg1"]
    pd.testing.assert_frame_equal(
        live.sort_values(key).reset_index(drop=True),
        whole.sort_values(key).reset_index(drop=True),
        check_dtype=False,
    )


def test_a_session_whose_time_goes_back_raises_with_what_came_before():
    program = stgflow.Program.load(EXAMPLES / "device_safety.tdl")
    session = program.session(mode="intervals")
    session.push(1, [("repair", ["d1"])])
    session.push(9, [("repair", ["d2"])])
    session.push(3, [("warning", ["d1"])])
    # The run ends at the bad line: waiting for more returns at once, not after the wait.
    import time

    started, frames = time.time(), []
    while time.time() - started < 20 and not sum(len(f) for f in frames):
        frames.append(session.results(timeout=0.5))
    started = time.time()
    frames.append(session.results(timeout=10))
    assert time.time() - started < 5
    with pytest.raises(stgflow.RunError) as raised:
        session.close()
    assert "E102" in str(raised.value)
    # Time points 1..8 are complete: the intervals open there end at 9.
    partial = pd.concat([*frames, raised.value.partial], ignore_index=True)
    assert sorted(zip(partial["predicate"], partial["start"], partial["end"])) == [("safe", 2, 9), ("trusted", 4, 9)]
    with pytest.raises(ValueError):
        session.push(10, [])


def test_the_timeline_example_runs_and_its_front_ends_agree(tmp_path):
    """`examples/python/timeline.py`: TD's inertia (`safe`) and the Event Calculus's
    (`in_service`) derive the same intervals from one generated stream; the picture is
    written."""
    pytest.importorskip("matplotlib")
    import importlib.util

    spec = importlib.util.spec_from_file_location("timeline", ROOT / "examples" / "python" / "timeline.py")
    timeline = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(timeline)
    intervals = timeline.derive(timeline.events())
    td = intervals[(intervals.program == "TD") & (intervals.predicate == "safe")]
    ec = intervals[(intervals.program == "EC") & (intervals.predicate == "in_service")]
    assert len(td) > 10
    assert sorted(zip(td.arg1, td.start, td.end)) == sorted(zip(ec.arg1, ec.start, ec.end))
    assert set(intervals.program) == {"TD", "LARS", "EC"}
    out = tmp_path / "timeline.png"
    timeline.draw(intervals, out)
    assert out.read_bytes().startswith(b"\x89PNG")


def test_a_parquet_file_of_a_dataframe_gives_the_dataframes_results(tmp_path):
    """A DataFrame written as Parquet (``predicate``, ``time``, argument columns) and read
    by the command as a stream gives what the DataFrame itself gives."""
    pytest.importorskip("pyarrow")
    program = stgflow.Program.load(EXAMPLES / "device_safety.tdl")
    frame = pd.DataFrame(
        [("repair" if t % 3 else "warning", t, f"d{t % 4}") for t in range(60)],
        columns=["predicate", "time", "arg1"],
    )
    path = tmp_path / "events.parquet"
    frame.to_parquet(path, index=False)
    by_frame = program.run(frame, mode="intervals")
    by_parquet = program.run(path, mode="intervals")
    assert len(by_frame) > 5
    pd.testing.assert_frame_equal(by_parquet, by_frame)


def _td_lines(frame, mode):
    """The frame's rows as the command's TD lines (symbols here are bare, floats not whole)."""
    arguments = [c for c in frame.columns if c.startswith("arg")]
    lines = []
    for row in frame.itertuples(index=False):
        values = [getattr(row, c) for c in arguments]
        text = ",".join(str(v) for v in values if not pd.isna(v))
        atom = f"{row.predicate}({text})" if text else row.predicate
        if mode == "points":
            lines.append(f"{row.predicate}({text + ',' if text else ''}{row.time}).")
        elif mode == "changes":
            lines.append(f"{'+' if row.change > 0 else '-'}{atom} @{row.time}")
        else:
            lines.append(f"{atom} [{row.start},{row.end})")
    return sorted(lines)


@pytest.mark.parametrize("mode", ["points", "changes", "intervals"])
@pytest.mark.parametrize("workers", [1, 3])
def test_the_tables_of_every_mode_and_worker_count_are_the_command_lines(tmp_path, mode, workers):
    """Long names, floats beside nulls, a column of names and numbers, predicates of
    several arities: the table a run returns holds the lines the command prints."""
    program = tmp_path / "mixed.tdl"
    program.write_text(
        "near(X, T) :- ping(X, T).\n"
        "near(X, T) :- ping(X, T-1).\n"
        "pair(X, V, T) :- ping(X, T), level(V, T).\n"
        "count(N, T) :- tick(N, T).\n"
        "#output near, pair, count.\n"
    )
    lines = []
    for t in range(120):
        lines.append(f"{t},ping,{'a_device_with_a_long_name_' if t % 3 else 'd'}{t % 5}")
        if t % 4 == 0:
            lines.append(f"{t},level,{t / 8 + 0.125}")
        if t % 7 == 0:
            lines.append(f"{t},tick,{t % 3}")
    stream = tmp_path / "mixed.csv"
    stream.write_text("\n".join(lines) + "\n")
    frame = stgflow.Program.load(program).run(stream, mode=mode, workers=workers)
    assert len(frame) > 100
    assert frame["arg2"].isna().any() and frame["arg2"].dropna().map(lambda v: isinstance(v, float)).all()
    theirs = sorted(cli("run", program, stream, "--mode", mode, "-w", workers).splitlines())
    assert _td_lines(frame, mode) == theirs
    if mode == "intervals":
        assert list(frame["start"]) == sorted(frame["start"])


def test_a_pyarrow_table_and_a_dataframe_of_mixed_columns_give_what_the_path_gives(tmp_path):
    pa = pytest.importorskip("pyarrow")
    program = stgflow.Program.from_text("q(A, B, T) :- p(A, B, T-2).\nr(A, T) :- s(A, T).\n")
    rows = [("p", t // 2, f"n{t}", t) for t in range(100)] + [("s", t, t, None) for t in range(0, 100, 9)]
    path = tmp_path / "p.csv"
    path.write_text("".join(f"{t},{p},{a}{'' if b is None else f',{b}'}\n" for p, t, a, b in sorted(rows, key=lambda r: r[1])))
    by_path = program.run(path, mode="changes")
    assert len(by_path) > 150
    # Names and numbers in one column: Arrow cannot type it, so it goes as text lines.
    mixed = pd.DataFrame(rows, columns=["predicate", "time", "a", "b"]).astype({"a": object})
    pd.testing.assert_frame_equal(program.run(mixed, mode="changes"), by_path)
    # The rows out of time order, as a pyarrow table of typed columns.
    table = pa.table(
        {
            "predicate": [r[0] for r in rows if r[0] == "p"][::-1],
            "time": [r[1] for r in rows if r[0] == "p"][::-1],
            "a": [r[2] for r in rows if r[0] == "p"][::-1],
            "b": [r[3] for r in rows if r[0] == "p"][::-1],
        }
    )
    only_p = tmp_path / "only_p.csv"
    only_p.write_text("".join(f"{t},{p},{a},{b}\n" for p, t, a, b in rows if p == "p"))
    pd.testing.assert_frame_equal(program.run(table, mode="changes"), program.run(only_p, mode="changes"))


def test_a_tables_bad_row_raises_naming_its_record_batch_with_what_came_before():
    pa = pytest.importorskip("pyarrow")
    program = stgflow.Program.from_text("q(A, T) :- p(A, T).\n")
    table = pa.table({"predicate": ["p", "p", None, "p"], "time": [0, 1, 2, 3], "a": ["x", "y", "z", "w"]})
    with pytest.raises(stgflow.RunError) as raised:
        program.run(table, mode="points")
    error = raised.value
    assert error.diagnostics[0].code == "E101"
    assert "record batch 0, row 2 in it" in str(error)
    # Time point 0 was complete (a row of 1 came) before the bad row: its output is kept.
    assert list(error.partial["arg1"]) == ["x"]
