"""stgflow from Python: Temporal Datalog stream reasoning over TD programs, LARS programs
in Laser's syntax and RTEC's Event Calculus descriptions.

The engine runs in-process (the native module is the ``stgflow`` command's own library,
with the GIL released while it runs), so a program reads its files and streams exactly
as ``stgflow run`` does and gives the same answers::

    import stgflow
    program = stgflow.Program.load("datasets/examples/device_safety.tdl")
    changes = program.run("datasets/examples/device_safety.facts", mode="changes")

Results come back as a ``pandas.DataFrame``: a ``predicate`` column, one column per
argument (``arg1``, ``arg2``, …, numbers typed as numbers), and ``time`` (``points``),
``time`` and ``change`` (+1 when a fact starts to hold, -1 when it stops: ``changes``) or
``start`` and ``end`` (right-open: ``intervals``). ``mode="rtec"`` gives RTEC's
recognitions as ``fluent``, ``args`` (as RTEC prints them), ``value``, ``start``, ``end``.
"""

from __future__ import annotations

import csv
import io
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from . import _stgflow

__version__: str = _stgflow.__version__

__all__ = ["Program", "ProgramError", "RunError", "Diagnostic", "__version__"]

_EXTENSIONS = {"td": ".tdl", "lars": ".lars", "ec": ".ec"}
_MODES = ("points", "changes", "intervals", "laser", "rtec")

# The records of each mode of lines that the native module reads back as a table.
_KINDS = {"points": "point", "changes": "change", "intervals": "interval"}

# The stream name a table handed over as Arrow columns goes by (errors name it).
_TABLE = "<table>"

# The columns that say when, after a fact's arguments, in each mode of line.
_TIMING = {"points": ["time"], "changes": ["time", "change"], "intervals": ["start", "end"]}


@dataclass(frozen=True)
class Diagnostic:
    """One diagnostic of a program or stream: its code (``E006``), whether it is an
    error, its message and where it points (``file``, ``line``, ``column``; ``None`` where
    it points nowhere)."""

    code: str
    error: bool
    message: str
    file: Optional[str]
    line: Optional[int]
    column: Optional[int]


class ProgramError(Exception):
    """A program stgflow rejects. ``diagnostics`` lists every diagnostic; ``text`` is
    what ``stgflow check`` prints, source excerpts included."""

    def __init__(self, text: str):
        self.text = text
        self.diagnostics = _diagnostics(text)
        errors = [d for d in self.diagnostics if d.error]
        first = errors[0] if errors else None
        summary = f"{first.code}: {first.message}" if first else text.strip()
        super().__init__(summary)


class RunError(Exception):
    """A run that did not end: bad input (``E101``…), a file that cannot be read. ``text``
    is stgflow's message; ``partial`` what was written before it, as a DataFrame."""

    def __init__(self, text: str, partial: Optional[pd.DataFrame] = None):
        self.text = text
        self.diagnostics = _diagnostics(text)
        self.partial = partial
        super().__init__(text.strip().splitlines()[0] if text.strip() else "run failed")


_HEADING = re.compile(r"^\[(?P<code>[EW]\d{3})\] (?P<kind>Error|Warning): (?P<message>.*?)(?: \((?P<at>[^()]*)\))?$")
_PLAIN = re.compile(r"^(?P<kind>error|warning)\[(?P<code>[EW]\d{3})\]: (?P<message>.*)$")
_LOCATION = re.compile(r"^(?P<file>.*):(?P<line>\d+):(?P<column>\d+)$")
_ARROW = re.compile(r"^\s*--> (?P<file>.*):(?P<line>\d+):(?P<column>\d+)$")


def _diagnostics(text: str) -> list:
    """The diagnostics of stgflow's stderr ``text``, in order."""
    found = []
    lines = text.splitlines()
    for n, line in enumerate(lines):
        heading = _HEADING.match(line) or _PLAIN.match(line)
        if not heading:
            continue
        file = row = column = None
        at = heading.groupdict().get("at")
        located = _LOCATION.match(at) if at else None
        if not located and n + 1 < len(lines):
            located = _ARROW.match(lines[n + 1])
        if located:
            file = located.group("file")
            row, column = int(located.group("line")), int(located.group("column"))
        found.append(
            Diagnostic(
                code=heading.group("code"),
                error=heading.group("kind").lower() == "error",
                message=heading.group("message"),
                file=file,
                line=row,
                column=column,
            )
        )
    return found


def _call(args: Sequence[str], stdin: Optional[bytes] = None, tables: Sequence = ()):
    code, out, err = _stgflow.run([str(a) for a in args], stdin, list(tables))
    return code, bytes(out), bytes(err).decode("utf-8", "replace")


Stream = Union[str, os.PathLike, pd.DataFrame, Iterable]


class Program:
    """A TD program (``.tdl``), a LARS program in Laser's syntax (``.lars``) or an Event
    Calculus description (``.ec``; RTEC's own ``.prolog``/``.pl`` files with their
    background knowledge), checked when loaded."""

    def __init__(self, paths: Sequence[Path], keep: Optional[tempfile.TemporaryDirectory] = None):
        self._paths = [Path(p) for p in paths]
        self._keep = keep
        self.warnings = self.check()

    @classmethod
    def load(cls, *paths: Union[str, os.PathLike]) -> "Program":
        """The program in ``paths``: one file, or an event description in several
        (RTEC's rules, then its background knowledge), exactly as ``stgflow run`` reads
        them. Raises ``ProgramError`` with every diagnostic if it is rejected."""
        if not paths:
            raise ValueError("Program.load needs at least one file")
        return cls([Path(p) for p in paths])

    @classmethod
    def from_text(cls, text: str, language: str = "td") -> "Program":
        """A program given as text: ``language`` is ``"td"``, ``"lars"`` (Laser's
        syntax) or ``"ec"`` (RTEC's Event Calculus)."""
        if language not in _EXTENSIONS:
            raise ValueError(f"language must be one of {', '.join(_EXTENSIONS)}, not {language!r}")
        keep = tempfile.TemporaryDirectory(prefix="stgflow-")
        path = Path(keep.name) / f"program{_EXTENSIONS[language]}"
        path.write_text(text, encoding="utf-8")
        return cls([path], keep)

    def check(self) -> list:
        """Validates the program; returns its warnings, raises ``ProgramError``."""
        code, _, err = _call(["check", *self._paths])
        if code != 0:
            raise ProgramError(err)
        return [d for d in _diagnostics(err) if not d.error]

    def plan(self) -> str:
        """The dataflow engine's plan, as ``stgflow check --dump plan`` prints it."""
        code, out, err = _call(["check", "-q", *self._paths, "--dump", "plan"])
        if code != 0:
            raise ProgramError(err)
        return out.decode("utf-8")

    def run(
        self,
        stream: Stream,
        mode: str = "changes",
        workers: Optional[int] = None,
        tick: int = 1,
        output: Optional[Sequence[str]] = None,
        from_: Optional[int] = None,
        until: Optional[int] = None,
        format: Optional[str] = None,
        args: Sequence[str] = (),
    ) -> pd.DataFrame:
        """Runs the program over ``stream`` and returns what it derives.

        ``stream`` is a path (every format and compression ``stgflow run`` reads: TD
        facts, CSV ``time,pred,arg…``, Laser streams, RTEC records, Parquet and Arrow
        files, ``.gz``, ``.zst``), a list of paths, a ``pandas.DataFrame`` or
        ``pyarrow.Table`` with ``predicate``, ``time`` and argument columns (the
        arguments in the order of their columns; a null ends a fact's arguments), or an
        iterable of ``(predicate, args, time)``. A table crosses as Arrow columns. ``mode``, ``workers``, ``tick``,
        ``output`` (the predicates to print), ``from_`` and ``until`` are ``stgflow
        run``'s ``--mode``, ``-w``, ``--tick``, ``--output``, ``--from`` and ``--until``;
        ``args`` passes any other flag through."""
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {', '.join(_MODES)}, not {mode!r}")
        flags = ["--mode", mode, "-q", "--tick", str(tick)]
        if workers is not None:
            flags += ["-w", str(workers)]
        if output:
            flags += ["--output", ",".join(output)]
        if from_ is not None:
            flags += ["--from", str(from_)]
        if until is not None:
            flags += ["--until", str(until)]
        if format is not None:
            flags += ["--format", format]
        flags += list(args)
        facts = table = None
        if isinstance(stream, (str, os.PathLike)):
            streams = [str(stream)]
        elif isinstance(stream, (pd.DataFrame, pa.Table)):
            table = _table_of_stream(stream)
            if table is None:
                facts = _csv_of_frame(stream)
        elif isinstance(stream, (list, tuple)) and stream and all(isinstance(s, (str, os.PathLike)) for s in stream):
            streams = [str(s) for s in stream]
        else:
            facts = _csv_of_facts(stream)
        tables = []
        with tempfile.TemporaryDirectory(prefix="stgflow-run-") as work:
            # A table crosses as its Arrow columns (the C stream interface), nothing
            # formatted or parsed; other facts as a file, not standard input: a batch is
            # replayed as a batch (in parts, in parallel), where standard input is a live
            # stream.
            if table is not None:
                streams = [_TABLE]
                tables = [(_TABLE, table)]
            elif facts is not None:
                streams = [os.path.join(work, "stream.csv")]
                Path(streams[0]).write_bytes(facts)
                flags += ["--format", "csv"]
            command = ["run", *map(str, self._paths), *streams, *flags]
            if mode in _KINDS:
                code, out, err = _stgflow.run_table(command, _KINDS[mode], tables=tables)
                frame = _frame_of_table(out)
                err = bytes(err).decode("utf-8", "replace")
            else:
                code, out, err = _call(command, tables=tables)
                frame = _frame_of_lines(out, mode)
        if code != 0:
            raise RunError(err, frame)
        return frame

    def session(
        self,
        mode: str = "changes",
        workers: Optional[int] = None,
        tick: int = 1,
        output: Optional[Sequence[str]] = None,
        args: Sequence[str] = (),
    ) -> "Session":
        """A live stream: push each time point's facts, take each time point's results
        once it is complete, as ``stgflow run PROGRAM -`` reads a pipe: time point t is
        complete once a fact of a later one is pushed, or the session is closed (a time
        point pushed without facts tells the run nothing). The run evaluates beside
        Python, so results come as it completes time points. ``mode`` is ``points``,
        ``changes`` or ``intervals`` (an interval comes when it ends, those still open
        at ``close``); the other arguments are ``run``'s."""
        if mode not in ("points", "changes", "intervals"):
            raise ValueError(f"a session's mode is points, changes or intervals, not {mode!r}")
        flags = ["--mode", mode, "-q", "--tick", str(tick), "--format", "csv"]
        if workers is not None:
            flags += ["-w", str(workers)]
        if output:
            flags += ["--output", ",".join(output)]
        return Session(_stgflow.Live(["run", *map(str, self._paths), "-", *flags, *args]), mode)

    def explain(self, stream: Union[str, os.PathLike], fact: str, tick: int = 1) -> str:
        """Why ``fact`` (``'trusted(d1,4)'``, its time last) holds or does not, as
        ``stgflow explain`` prints it."""
        code, out, err = _call(["explain", *self._paths, str(stream), fact, "--tick", str(tick)])
        if code != 0:
            raise RunError(err)
        return out.decode("utf-8")


class Session:
    """A live run of a program (``Program.session``): ``push`` a time point's facts,
    ``results`` gives what the completed time points printed, ``close`` ends the stream
    and gives the rest. Also a context manager that closes it."""

    def __init__(self, live, mode: str):
        self._live = live
        self._mode = mode
        self._closed = False

    def push(self, time: int, facts: Iterable) -> None:
        """The facts ``(predicate, args)`` of time point ``time`` (in time order: a time
        point pushed completes every one before it)."""
        if self._closed:
            raise ValueError("the session is closed")
        self._live.send(_csv_of_facts((p, a, time) for p, a in facts))

    def results(self, timeout: float = 0.0) -> pd.DataFrame:
        """What the run has printed since the last call (it evaluates beside Python, so
        the results of the time points just completed may still be coming), waiting up
        to ``timeout`` seconds for something to come: columns ``predicate``, ``arg1``…,
        then ``time`` (and ``change``), or ``start`` and ``end``."""
        return _frame_of_td(self._live.receive(timeout), self._mode)

    def close(self) -> pd.DataFrame:
        """Ends the stream (its last time point is then complete) and returns the rest of
        the results; raises ``RunError`` (with them) where the run failed."""
        if self._closed:
            raise ValueError("the session is closed")
        self._closed = True
        code, out, err = self._live.close()
        frame = _frame_of_td(bytes(out), self._mode)
        if code != 0:
            raise RunError(bytes(err).decode("utf-8", "replace"), frame)
        return frame

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        if not self._closed:
            self.close()


_TD_LINE = {
    "points": re.compile(r"^(?P<pred>[^(]+)(?:\((?P<args>.*)\))?\.$"),
    "changes": re.compile(r"^(?P<change>[+-])(?P<pred>[^( ]+)(?:\((?P<args>.*)\))? @(?P<time>\d+)$"),
    "intervals": re.compile(r"^(?P<pred>[^( ]+)(?:\((?P<args>.*)\))? \[(?P<start>\d+),(?P<end>\d+)\)$"),
}


def _split_arguments(text: str) -> list:
    """A fact's arguments as printed: split at the commas outside quotes; numbers as
    numbers."""
    values, current, quoted = [], [], False
    for char in text:
        if char == '"':
            quoted = not quoted
        if char == "," and not quoted:
            values.append("".join(current))
            current = []
        else:
            current.append(char)
    values.append("".join(current))
    return [int(v) if re.fullmatch(r"-?\d+", v) else v for v in values]


def _frame_of_td(out: bytes, mode: str) -> pd.DataFrame:
    """TD output lines of ``points``, ``changes`` or ``intervals`` as a frame, with the
    columns ``run`` gives."""
    timing = _TIMING[mode]
    rows = []
    for line in out.decode("utf-8").splitlines():
        found = _TD_LINE[mode].match(line)
        if not found:
            continue
        arguments = found.group("args")
        values = _split_arguments(arguments) if arguments else []
        if mode == "points":
            *values, time = values
            timed = [time]
        elif mode == "changes":
            timed = [int(found.group("time")), 1 if found.group("change") == "+" else -1]
        else:
            timed = [int(found.group("start")), int(found.group("end"))]
        rows.append([found.group("pred"), *values, *timed])
    width = max((len(r) for r in rows), default=1 + len(timing)) - 1 - len(timing)
    columns = ["predicate", *(f"arg{i + 1}" for i in range(width)), *timing]
    # Facts of fewer arguments: their missing arguments empty, the timing columns last.
    rows = [[r[0], *r[1 : len(r) - len(timing)], *[None] * (len(columns) - len(r)), *r[len(r) - len(timing) :]] for r in rows]
    return pd.DataFrame(rows, columns=columns)


def _csv_of_facts(facts: Iterable) -> bytes:
    """``(predicate, args, time)`` triples as CSV ``time,pred,arg…`` lines."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    for predicate, arguments, time in facts:
        writer.writerow([int(time), predicate, *arguments])
    return text.getvalue().encode("utf-8")


def _csv_of_frame(frame: pd.DataFrame) -> bytes:
    """A DataFrame of ``predicate``, ``time`` and argument columns as CSV lines
    ``time,pred,arg…`` in time order (pandas' own writer; empty arguments dropped, so a
    frame of several predicates can carry fewer arguments in some rows)."""
    if "predicate" not in frame.columns or "time" not in frame.columns:
        raise ValueError("a stream DataFrame needs `predicate` and `time` columns")
    arguments = [c for c in frame.columns if c not in ("predicate", "time")]
    ordered = frame[["time", "predicate", *arguments]].sort_values("time", kind="stable")
    text = ordered.to_csv(header=False, index=False, lineterminator="\n")
    # Rows of fewer arguments: pandas writes their missing values as trailing commas.
    return "\n".join(line.rstrip(",") for line in text.splitlines()).encode("utf-8") + b"\n"


def _table_of_stream(stream) -> Optional[pa.Table]:
    """A DataFrame's or Arrow table's ``predicate``, ``time`` and argument columns as an
    Arrow table in time order (a stable sort where it is not); ``None`` for a frame
    Arrow cannot type (a column of numbers and text mixed), which goes as CSV."""
    names = list(stream.columns) if isinstance(stream, pd.DataFrame) else stream.column_names
    if "predicate" not in names or "time" not in names:
        raise ValueError("a stream table needs `predicate` and `time` columns")
    arguments = [c for c in names if c not in ("predicate", "time")]
    if isinstance(stream, pd.DataFrame):
        try:
            table = pa.Table.from_pandas(stream[["predicate", "time", *arguments]], preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return None
    else:
        table = stream.select(["predicate", "time", *arguments])
    time = table.column("time")
    if len(table) > 1 and not pc.all(pc.greater_equal(time.slice(1), time.slice(0, len(table) - 1))).as_py():
        table = table.take(pc.sort_indices(time))
    return table


def _frame_of_table(table) -> pd.DataFrame:
    """The native module's table (Arrow columns in chunks, taken through the Arrow
    PyCapsule interface) as a frame: text columns as pandas' Arrow-backed strings, so
    nothing is copied into Python objects."""
    columns = pa.RecordBatchReader.from_stream(table).read_all()
    strings = pd.StringDtype("pyarrow")
    return columns.to_pandas(types_mapper={pa.string(): strings, pa.large_string(): strings}.get)


_RECOGNITION = re.compile(r"^recognitions\(predictions,(?P<fluent>[^,]+),\[\[(?P<args>.*)\],(?P<value>[^\]]*)\],\[(?P<intervals>.*)\]\)\.$")


def _frame_of_lines(out: bytes, mode: str) -> pd.DataFrame:
    """Standard output of ``rtec`` (RTEC's recognitions, an interval a row) or ``laser``
    (Laser's lines: ``time`` and the line's facts) as a frame."""
    lines = out.decode("utf-8").splitlines()
    if mode == "laser":
        rows = []
        for line in lines:
            time, _, facts = line.partition(":")
            rows.append({"time": int(time), "facts": facts.split()})
        return pd.DataFrame(rows, columns=["time", "facts"])
    rows = []
    for line in lines:
        found = _RECOGNITION.match(line)
        if not found:
            continue
        for interval in re.findall(r"\((\d+),(\d+|inf)\)", found.group("intervals")):
            start, end = interval
            rows.append(
                {
                    "fluent": found.group("fluent"),
                    "args": found.group("args"),
                    "value": found.group("value"),
                    "start": int(start),
                    "end": float("inf") if end == "inf" else int(end),
                }
            )
    return pd.DataFrame(rows, columns=["fluent", "args", "value", "start", "end"])
