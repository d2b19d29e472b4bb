"""Loggers: terminal, CSV, TensorBoard, and a default combination of them."""

from __future__ import annotations

from acme.utils.loggers.base import (
    Dispatcher,
    Logger,
    LoggerFactory,
    LoggingData,
    NoOpLogger,
    TimeFilter,
    to_scalars,
)
from acme.utils.loggers.csv import CSVLogger
from acme.utils.loggers.tensorboard import TensorBoardLogger
from acme.utils.loggers.terminal import TerminalLogger
from acme.utils.loggers.trackers import TRACKERS, Tracking


def make_default_logger(
    label: str,
    directory: str | None = None,
    steps_key: str | None = None,
    time_delta: float = 1.0,
    print_fn=None,
    terminal: bool = True,
    tensorboard: bool = True,
    tracking: Tracking | None = None,
) -> Logger:
    """Terminal output (at most one row per ``time_delta`` seconds) plus, when a
    ``directory`` is given, every row in CSV and TensorBoard files under it, and
    with ``tracking`` every row in that experiment tracker too (W&B or MLflow).

    ``tensorboard`` (default True) writes the TensorBoard event files (with
    tensorboardX, on either stack); ``False`` writes only CSV.
    """
    loggers: list[Logger] = []
    if terminal:
        loggers.append(TimeFilter(TerminalLogger(label, print_fn=print_fn), time_delta))
    if directory is not None:
        loggers.append(CSVLogger(directory, label))
        if tensorboard:
            loggers.append(TensorBoardLogger(directory, label, steps_key))
    if tracking is not None:
        loggers.append(tracking.make_logger(label, steps_key))
    return Dispatcher(loggers)


def make_logger_factory(
    directory: str | None = None,
    time_delta: float = 1.0,
    terminal: bool = True,
    print_fn=None,
    tracking: Tracking | None = None,
) -> LoggerFactory:
    """A factory of default loggers writing under one run directory (and to ``tracking``'s tracker)."""

    def factory(label: str, steps_key: str | None = None) -> Logger:
        return make_default_logger(
            label, directory, steps_key, time_delta, print_fn=print_fn, terminal=terminal, tracking=tracking
        )

    return factory


__all__ = [
    "CSVLogger",
    "Dispatcher",
    "Logger",
    "LoggerFactory",
    "LoggingData",
    "NoOpLogger",
    "TensorBoardLogger",
    "TerminalLogger",
    "TRACKERS",
    "Tracking",
    "TimeFilter",
    "make_default_logger",
    "make_logger_factory",
    "to_scalars",
]
