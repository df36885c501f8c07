"""The native half of the package: the ``stgflow`` command's library, in-process."""

from typing import Optional, Sequence, Tuple

__version__: str

def run(args: Sequence[str], stdin: Optional[bytes] = None) -> Tuple[int, bytes, bytes]:
    """Runs ``stgflow ARGS…`` with ``stdin`` as standard input; returns the exit code,
    standard output and standard error. The GIL is released while it runs."""
