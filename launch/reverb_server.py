"""Starting a reverb server without its two side effects that nobody asked for.

``reverb.Server(checkpointer=None)`` does not mean "no checkpoints": reverb then
makes a ``TempDirCheckpointer``, an empty ``/tmp/tmpXXXXXXXX`` directory that is
never removed. And loading a checkpoint writes a "Still reading compressed
trajectory data" line to stderr for every 100 chunks, hundreds of lines on a
resume. Reverb's C++ logging has no level to lower (every message goes to
``std::clog``), so those lines are taken out of what the server writes to file
descriptor 2 while it is being built; everything else it writes there, errors
included, is passed on.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from typing import Any, Iterator, Sequence

_PROGRESS_LINE = b"Still reading compressed trajectory data"


class _NoCheckpointer:
    """A reverb checkpointer that is none: the server runs without checkpointing and makes no directory."""

    def internal_checkpointer(self) -> None:
        return None


def start_reverb_server(tables: Sequence[Any], port: int | None = None, checkpointer: Any = None) -> Any:
    """``reverb.Server(tables, port, checkpointer)``, where ``checkpointer=None`` means no checkpointing.

    With a checkpointer the server loads its newest checkpoint while it starts;
    reverb's progress lines from that load are dropped (see the module docstring).
    """
    import reverb  # heavy: imports TF

    if checkpointer is None:
        return reverb.Server(tables=list(tables), port=port, checkpointer=_NoCheckpointer())
    with _without_progress_lines():
        return reverb.Server(tables=list(tables), port=port, checkpointer=checkpointer)


@contextlib.contextmanager
def _without_progress_lines() -> Iterator[None]:
    """Holds back what is written to file descriptor 2 inside the block, and writes it out when the block ends
    (however it ends) without reverb's checkpoint-loading progress lines."""
    if sys.stderr is not None:
        sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr at all: nothing to filter
        yield
        return
    try:
        with tempfile.TemporaryFile() as held:
            os.dup2(held.fileno(), 2)
            try:
                yield
            finally:
                if sys.stderr is not None:
                    sys.stderr.flush()
                os.dup2(saved, 2)
                held.seek(0)
                kept = [line for line in held.read().splitlines(keepends=True) if _PROGRESS_LINE not in line]
                _write_all(2, b"".join(kept))
    finally:
        os.close(saved)


def _write_all(fd: int, data: bytes) -> None:
    """``os.write`` until all of ``data`` is written (one call may write less)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
