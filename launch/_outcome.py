"""What a launcher backend reports back to ``launch()``."""

from __future__ import annotations

import dataclasses
import time

from launch.errors import NodeError


@dataclasses.dataclass
class Outcome:
    """How a run ended. ``launch()`` turns it into a return or an exception."""

    error: NodeError | None = None
    signum: int | None = None
    timed_out: bool = False
    unfinished: tuple[str, ...] = ()

    def fail(self, error: NodeError) -> None:
        """Records ``error`` unless an earlier failure is already recorded."""
        if self.error is None:
            self.error = error


class Deadline:
    """A point in time (or none); ``remaining()`` never goes below zero."""

    def __init__(self, timeout: float | None) -> None:
        self._end = None if timeout is None else time.monotonic() + timeout

    def expired(self) -> bool:
        return self._end is not None and time.monotonic() >= self._end

    def remaining(self, cap: float | None = None) -> float | None:
        if self._end is None:
            return cap
        left = max(0.0, self._end - time.monotonic())
        return left if cap is None else min(left, cap)
