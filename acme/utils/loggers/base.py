"""The logger interface and simple combinators."""

from __future__ import annotations

import abc
import math
import time
from typing import Any, Callable, Mapping, Sequence

import numpy as np

LoggingData = Mapping[str, Any]


class Logger(abc.ABC):
    """Writes rows of named scalar values."""

    @abc.abstractmethod
    def write(self, data: LoggingData) -> None:
        """Writes one row."""

    def close(self) -> None:
        """Flushes and releases any resources."""


# (label, steps_key) -> Logger. ``steps_key`` names the x-axis of plots (e.g. "actor_steps").
LoggerFactory = Callable[[str, str | None], Logger]


def to_scalar(value: Any) -> Any:
    """Plain python numbers for numpy and jax scalars; other values unchanged."""
    if hasattr(value, "shape") and getattr(value, "shape", None) == ():
        value = np.asarray(value).item()
    elif isinstance(value, np.generic):
        value = value.item()
    return value


def to_scalars(data: LoggingData) -> dict[str, Any]:
    return {key: to_scalar(value) for key, value in data.items()}


class NoOpLogger(Logger):
    def write(self, data: LoggingData) -> None:
        pass


class Dispatcher(Logger):
    """Writes each row to several loggers."""

    def __init__(self, loggers: Sequence[Logger]):
        self._loggers = list(loggers)

    def write(self, data: LoggingData) -> None:
        data = to_scalars(data)
        for logger in self._loggers:
            logger.write(data)

    def close(self) -> None:
        for logger in self._loggers:
            logger.close()


class TimeFilter(Logger):
    """Passes at most one row every ``time_delta`` seconds to ``to``."""

    def __init__(self, to: Logger, time_delta: float):
        self._to = to
        self._time_delta = time_delta
        self._last = -math.inf

    def write(self, data: LoggingData) -> None:
        now = time.monotonic()
        if now - self._last >= self._time_delta:
            self._last = now
            self._to.write(data)

    def close(self) -> None:
        self._to.close()
