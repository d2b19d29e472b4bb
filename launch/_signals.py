"""SIGINT/SIGTERM handling while a program runs."""

from __future__ import annotations

import signal
import threading
from typing import Any

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """Raised (from a signal handler) into the launching thread to stop waiting."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class SignalGuard:
    """Snapshots the handlers at creation; ``arm`` installs ours, ``restore`` undoes.

    Only active on the main thread (Python delivers signals there only). While
    armed with ``raise_in_handler=True``, the first SIGINT/SIGTERM raises
    ``Interrupted`` in the main thread (interrupting even a blocking service
    constructor); otherwise, and once disarmed (during shutdown), signals are
    only recorded and the backend polls ``check()``. (Raising through Ray's C
    extension turns the exception into a SystemError, so the Ray backend polls.)
    A signal that was ignored when the guard was made (inherited as ignored,
    as by a script's ``cmd &``) stays ignored, even if starting the backend
    (``ray.init``) installed a handler for it.
    """

    def __init__(self) -> None:
        self.enabled = threading.current_thread() is threading.main_thread()
        self.signum: int | None = None
        self._armed = False
        self._raise = False
        self._saved: dict[int, Any] = {}
        if self.enabled:
            self._saved = {sig: signal.getsignal(sig) for sig in _SIGNALS}

    def _handler(self, signum: int, frame: Any) -> None:
        del frame
        if self.signum is None:
            self.signum = signum
            if self._armed and self._raise:
                self._armed = False
                raise Interrupted(signum)

    def arm(self, raise_in_handler: bool = True) -> None:
        """Installs the handlers (call once the backend is started)."""
        if not self.enabled:
            return
        self._armed = True
        self._raise = raise_in_handler
        for sig in _SIGNALS:
            ignored = self._saved.get(sig) is signal.SIG_IGN
            signal.signal(sig, signal.SIG_IGN if ignored else self._handler)

    def set_raise_in_handler(self, raise_in_handler: bool) -> None:
        """Switches between raising from the handler and polling with ``check()``."""
        self._raise = raise_in_handler

    def check(self) -> None:
        """Raises ``Interrupted`` if a signal arrived while armed (polling mode)."""
        if self._armed and self.signum is not None:
            self._armed = False
            raise Interrupted(self.signum)

    def disarm(self) -> None:
        """Keeps recording signals but stops raising (shutdown in progress)."""
        self._armed = False

    def restore(self) -> None:
        """Puts back the handlers that were installed when the guard was made."""
        self._armed = False
        if not self.enabled:
            return
        for sig, handler in self._saved.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)

    def raise_if_signalled(self) -> None:
        """Raises KeyboardInterrupt (SIGINT) or SystemExit(128 + signum) (SIGTERM)."""
        if self.signum is None:
            return
        if self.signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + self.signum)
