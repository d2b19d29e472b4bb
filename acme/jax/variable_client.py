"""Keeps a copy of a variable source's parameters, refreshed every few calls."""

from __future__ import annotations

import concurrent.futures
from typing import Any, Sequence

import jax

from acme import core


class VariableClient:
    """Fetches named variables from a ``VariableSource`` (usually the learner).

    ``update()`` fetches every ``update_period`` calls; with ``asynchronous``
    the fetch runs in a background thread and the new values are swapped in
    when they arrive, so acting never waits on a remote learner.
    """

    def __init__(
        self,
        source: core.VariableSource,
        key: str | Sequence[str],
        update_period: int = 1,
        asynchronous: bool = False,
        device: Any | None = None,
    ):
        if update_period < 1:
            raise ValueError(f"update_period must be a positive number of calls, got {update_period}.")
        self._source = source
        self._single = isinstance(key, str)
        self._names = [key] if self._single else list(key)
        self._update_period = update_period
        self._calls = 0
        self._device = device
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1) if asynchronous else None
        self._future: concurrent.futures.Future | None = None
        self._params: Any = None

    def _fetch(self) -> Any:
        values = self._source.get_variables(self._names)
        values = jax.device_put(values, self._device) if self._device is not None else values
        return values[0] if self._single else values

    def update(self, wait: bool = False) -> None:
        """Counts a call; fetches when the period has elapsed (or now, with ``wait``)."""
        if self._future is not None and self._future.done():
            self._params = self._future.result()
            self._future = None
        self._calls += 1
        if not wait and self._calls < self._update_period:
            return
        self._calls = 0
        if wait or self._executor is None:
            self._params = self._fetch()
        elif self._future is None:
            self._future = self._executor.submit(self._fetch)

    def update_and_wait(self) -> None:
        self.update(wait=True)

    @property
    def params(self) -> Any:
        if self._params is None:
            self.update_and_wait()
        return self._params
