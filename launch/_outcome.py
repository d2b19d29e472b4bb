"""What a launcher backend reports back to ``launch()``."""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable

from launch._signals import Interrupted
from launch.errors import NodeError


@dataclasses.dataclass
class Outcome:
    """How a run ended. ``launch()`` turns it into a return or an exception."""

    error: NodeError | None = None
    signum: int | None = None
    timed_out: bool = False
    unfinished: tuple[str, ...] = ()
    results: dict[str, Any] = dataclasses.field(default_factory=dict)  # label -> what its main returned (not None)

    def returned(self, label: str, value: Any) -> None:
        """Keeps what node ``label``'s function or ``run()`` returned, unless it returned None."""
        if value is not None:
            self.results[label] = value

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


def run_recorded(
    outcome: "Outcome", guard: Any, body: Callable[[], set], shutdown: Callable[[], None], raise_in_handler: bool = True
) -> None:
    """Runs ``body`` under the armed signal ``guard`` and records how it ended in ``outcome``.

    ``body`` returns the labels of the nodes still unfinished (non-empty means
    the deadline passed); ``shutdown`` always runs afterwards.
    """
    try:
        try:
            guard.arm(raise_in_handler=raise_in_handler)
            remaining = body()
        finally:
            guard.disarm()
    except Interrupted as e:
        outcome.signum = e.signum
    except NodeError as e:
        outcome.fail(e)
    else:
        if remaining:
            outcome.timed_out = True
            outcome.unfinished = tuple(sorted(remaining))
    finally:
        shutdown()
