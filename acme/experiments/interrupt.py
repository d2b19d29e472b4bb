"""Ctrl-C or SIGTERM in an in-process run: with checkpoints, finish the episode, save, then stop."""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType
from typing import Callable, NoReturn

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_NAMES = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}
_UNWIND_SECONDS = 10.0  # how long a run stopped by SIGTERM without checkpoints may take to unwind before it is ended


class StopAtNextCheck:
    """Signal handlers that ask the training loop to stop at its next check (the end of a stretch of acting).

    The first SIGINT (Ctrl-C) or SIGTERM (a scheduler's preemption notice)
    only sets ``requested``, so that no step is cut in half; the loop saves a
    checkpoint at its next check and then calls ``stop``. A second signal
    stops at once (the last periodic checkpoint is then the one that resumes).

    With ``enabled=False`` (a run with nothing to save) Ctrl-C stays Python's
    ``KeyboardInterrupt``, and SIGTERM stops at once after saying that nothing
    was saved (exit status 143). A signal that the process inherited as
    ignored (a script's ``cmd &``, ``nohup``) stays ignored, as Unix programs
    do. Use as a context manager; outside the main thread, where Python cannot
    install signal handlers, it does nothing and signals behave as usual.
    """

    def __init__(self, enabled: bool = True, announce: Callable[[str], None] = print) -> None:
        self.signum: int | None = None
        self._saves = enabled
        self._active = threading.current_thread() is threading.main_thread()
        self._announce = announce
        self._previous: dict[int, object] = {}

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        del frame
        if self.requested:
            self._raise(signum, "")
        self.signum = signum
        self._announce(
            f"{_NAMES[signum]}: saving a checkpoint at the next check, then stopping "
            f"({_NAMES[signum]} again stops now, losing the steps since the last checkpoint)."
        )
        sys.stdout.flush()

    def stop(self, reason: str) -> NoReturn:
        """Ends the run after the requested checkpoint: KeyboardInterrupt for Ctrl-C, SystemExit(143) for SIGTERM."""
        assert self.signum is not None, "stop() is for after a signal was received"
        self._raise(self.signum, f"stopped by {_NAMES[self.signum]} {reason}")

    @staticmethod
    def _raise(signum: int, message: str) -> NoReturn:
        if signum == signal.SIGINT:
            raise KeyboardInterrupt(message) if message else KeyboardInterrupt
        if message:
            print(f"{message[0].upper()}{message[1:]}.", file=sys.stderr, flush=True)
        raise SystemExit(128 + signum)

    @staticmethod
    def _stop_unsaved(signum: int, frame: FrameType | None) -> NoReturn:
        del frame
        print(
            f"Stopped by {_NAMES[signum]}; nothing was saved (this run has no checkpoint directory).",
            file=sys.stderr,
            flush=True,
        )
        # SystemExit unwinds the run and closes its logs. Raised wherever the main thread happened to be, it can be
        # swallowed (inside a callback that C++ code made, say) or the exit can wait on a library's thread: the
        # process then ends anyway, with the same status, once the unwinding has had its time.
        timer = threading.Timer(_UNWIND_SECONDS, os._exit, args=(128 + signum,))
        timer.daemon = True
        timer.start()
        raise SystemExit(128 + signum)

    def _handlers(self) -> dict[int, Callable[[int, FrameType | None], None]]:
        """The handler for each signal this context takes over."""
        if self._saves:
            return {signum: self._handle for signum in _SIGNALS}
        return {signal.SIGTERM: self._stop_unsaved}

    def __enter__(self) -> "StopAtNextCheck":
        if not self._active:
            return self
        for signum, handler in self._handlers().items():
            if signal.getsignal(signum) is signal.SIG_IGN:
                continue  # inherited as ignored: stays ignored
            self._previous[signum] = signal.signal(signum, handler)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, previous in self._previous.items():
            if previous is None:  # a handler not installed from Python: fall back to the default
                previous = signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
            signal.signal(signum, previous)  # type: ignore[arg-type]
        self._previous.clear()
