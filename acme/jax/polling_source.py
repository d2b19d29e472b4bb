"""A variable source that keeps a recent copy of a remote source's variables."""

from __future__ import annotations

import threading
from typing import Any, Sequence

import jax

from acme import core

CLOSE_SECONDS = 10.0  # how long ``close`` waits for a fetch in flight


class PollingVariableSource(core.VariableSource):
    """Fetches ``names`` from ``source`` every ``interval`` seconds in a background thread.

    ``get_variables`` answers from the latest copy without a remote call, so an
    actor can refresh its parameters every step at no cost; the first call
    waits for the first fetch. Use it around a handle to a learner in another
    process.
    """

    def __init__(self, source: core.VariableSource, names: Sequence[str], interval: float = 0.2):
        if interval <= 0:
            raise ValueError(f"interval must be a positive number of seconds, got {interval}.")
        self._source = source
        self._names = list(names)
        self._interval = interval
        self._values: dict[str, Any] = {}
        self._error: BaseException | None = None
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="variable-poller", daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.is_set():
            try:
                values = self._source.get_variables(self._names)
                self._values = dict(zip(self._names, values))
                self._ready.set()
            except BaseException as error:  # surfaced to the caller of get_variables
                self._error = error
                self._ready.set()
                return
            self._stop.wait(self._interval)

    def get_variables(self, names: Sequence[str]) -> list:
        self._ready.wait()
        if self._error is not None:
            raise RuntimeError(f"Fetching variables {self._names} failed: {self._error!r}") from self._error
        unknown = [name for name in names if name not in self._values]
        if unknown:
            raise KeyError(f"This source polls {self._names}; {unknown} were not requested.")
        return [self._values[name] for name in names]

    def close(self, timeout: float = CLOSE_SECONDS) -> None:
        """Stops polling and waits up to ``timeout`` seconds for a fetch in flight to end: a thread still inside
        a jax call when the interpreter exits aborts the process (C++ ``terminate`` as Python ends the thread)."""
        self._stop.set()
        self._thread.join(timeout)


def to_host(variables: Any) -> Any:
    """Numpy copies of (possibly on-device) variables, cheap to send to another process."""
    return jax.device_get(variables)
