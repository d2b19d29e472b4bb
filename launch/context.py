"""Lets node code ask whether the program is shutting down.

Each launch installs a stop event: process-wide in the launching process
(threads launcher) or in the worker process (Ray launcher), plus a per-thread
copy in the threads the launcher itself starts, so threads left over from an
earlier launch keep seeing their own (set) event.
"""

from __future__ import annotations

import threading

_local = threading.local()
_lock = threading.Lock()
_process_event: threading.Event | None = None


def _current() -> threading.Event | None:
    event = getattr(_local, "event", None)
    return event if event is not None else _process_event


def stop_requested() -> bool:
    """True once the launcher has asked the program to stop.

    Long-running node code (a service's ``run()`` loop, a function looping
    forever) should poll this (or ``wait_for_stop``) and return when it is
    True. Outside a launched program it returns False.
    """
    event = _current()
    return event is not None and event.is_set()


def wait_for_stop(timeout: float | None = None) -> bool:
    """Blocks until stop is requested or ``timeout`` seconds pass.

    Returns ``stop_requested()``; convenient as ``while not wait_for_stop(0.1):``.
    """
    event = _current()
    if event is None:
        if timeout is None:
            raise RuntimeError("wait_for_stop() without timeout outside a launched program")
        threading.Event().wait(timeout)
        return False
    return event.wait(timeout)


def _activate(event: threading.Event) -> None:
    """Makes ``event`` the process-wide stop event."""
    global _process_event
    with _lock:
        _process_event = event


def _deactivate(event: threading.Event) -> None:
    global _process_event
    with _lock:
        if _process_event is event:
            _process_event = None


def _bind_thread(event: threading.Event) -> None:
    """Binds ``event`` to the calling thread (threads launcher node threads)."""
    _local.event = event
