"""Ctrl-C in a checkpointed in-process run: finish the episode, save, then stop."""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType
from typing import Callable, Optional


class StopAtEpisodeEnd:
    """A SIGINT handler that asks the training loop to stop at the next episode boundary.

    Mid-episode, transitions may still sit in the adder and would be missing
    from a replay checkpoint, so the first Ctrl-C only sets ``requested``; the
    loop saves a checkpoint when the episode ends and then raises
    KeyboardInterrupt. A second Ctrl-C raises KeyboardInterrupt at once (the
    last periodic checkpoint is then the one that resumes). Use as a context
    manager; outside the main thread, where Python cannot install signal
    handlers, it does nothing and Ctrl-C behaves as usual.
    """

    def __init__(self, enabled: bool = True, announce: Callable[[str], None] = print) -> None:
        self.requested = False
        self._enabled = enabled and threading.current_thread() is threading.main_thread()
        self._announce = announce
        self._previous: Optional[object] = None

    def _handle(self, signum: int, frame: Optional[FrameType]) -> None:
        del signum, frame
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        self._announce("Ctrl-C: saving a checkpoint when this episode ends, then stopping "
                       "(Ctrl-C again stops now, losing the steps since the last checkpoint).")
        sys.stdout.flush()

    def __enter__(self) -> "StopAtEpisodeEnd":
        if self._enabled:
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._enabled:
            previous = self._previous if self._previous is not None else signal.default_int_handler
            signal.signal(signal.SIGINT, previous)  # type: ignore[arg-type]
