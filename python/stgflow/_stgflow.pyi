"""The native half of the package: the ``stgflow`` command's library, in-process."""

from typing import Optional, Sequence, Tuple

__version__: str

def run(
    args: Sequence[str], stdin: Optional[bytes] = None, tables: Sequence[Tuple[str, object]] = ()
) -> Tuple[int, bytes, bytes]:
    """Runs ``stgflow ARGS…`` with ``stdin`` as standard input; returns the exit code,
    standard output and standard error. ``tables`` are ``(name, table)`` pairs, each
    table with Arrow's C stream interface (a ``pyarrow.Table``): the stream ``name`` on
    the command line reads its columns. The GIL is released while it runs."""

def run_table(
    args: Sequence[str], kind: str, stdin: Optional[bytes] = None, tables: Sequence[Tuple[str, object]] = ()
) -> Tuple[int, "Table", bytes]:
    """Runs ``stgflow run ARGS…`` (output ``kind``: ``point``, ``change`` or
    ``interval``; ``tables`` as ``run`` takes them); returns the exit code, the output
    as a table and standard error."""

class Table:
    """A run's output as Arrow columns: ``pyarrow.RecordBatchReader.from_stream(table)``
    takes them."""

    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...

class Live:
    """A live run of ``stgflow ARGS…`` reading its standard input from ``send``."""

    def __init__(self, args: Sequence[str]) -> None: ...
    def send(self, data: bytes) -> None:
        """Sends ``data`` to the run's standard input."""
    def receive(self, timeout: float = 0.0) -> bytes:
        """What the run printed since the last call, waiting up to ``timeout`` seconds."""
    def close(self) -> Tuple[int, bytes, bytes]:
        """Ends the input, waits for the run; its exit code, the rest of its output and
        its standard error."""
