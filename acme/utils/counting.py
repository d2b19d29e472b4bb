"""Thread-safe step counters that can be shared between components and processes."""

from __future__ import annotations

import threading
from typing import Mapping

Number = int | float


class Counter:
    """Counts named quantities (steps, episodes, ...), optionally into a parent.

    A child with ``prefix="actor"`` adds ``steps=5`` to its parent as
    ``actor_steps=5``, so several components can share one parent counter; in a
    distributed run the parent is a handle to a counter node.
    """

    def __init__(self, parent: "Counter" | None = None, prefix: str = ""):
        self._parent = parent
        self._prefix = prefix
        self._counts: dict[str, Number] = {}
        self._lock = threading.Lock()

    def _key(self, key: str) -> str:
        return f"{self._prefix}_{key}" if self._prefix else key

    def increment(self, **counts: Number) -> dict[str, Number]:
        """Adds ``counts`` and returns every count after the update (parent's included)."""
        for key, value in counts.items():
            if not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"Counter increments must be non-negative numbers, got {key}={value!r}.")
        if self._parent is not None:
            self._parent.increment(**{self._key(k): v for k, v in counts.items()})
        with self._lock:
            for key, value in counts.items():
                self._counts[key] = self._counts.get(key, 0) + value
        return self.get_counts()

    def get_counts(self) -> dict[str, Number]:
        """Every count, prefixed; with a parent, the parent's counts (which include ours)."""
        if self._parent is not None:
            return self._parent.get_counts()
        with self._lock:
            return {self._key(k): v for k, v in self._counts.items()}

    def get_steps_key(self) -> str:
        return self._key("steps")

    def save(self) -> Mapping[str, Number]:
        with self._lock:
            return dict(self._counts)

    def restore(self, state: Mapping[str, Number]) -> None:
        with self._lock:
            self._counts = dict(state)
