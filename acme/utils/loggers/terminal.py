"""A logger that prints one line per row."""

from __future__ import annotations

import sys
from typing import Callable, TextIO

from acme.utils.loggers.base import Logger, LoggingData, to_scalars


def format_value(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e5 else f"{value:.3e}"
    return str(value)


def format_row(label: str, data: LoggingData) -> str:
    fields = " | ".join(f"{key.replace('_', ' ').title()} = {format_value(v)}" for key, v in sorted(data.items()))
    return f"[{label}] {fields}" if label else fields


class TerminalLogger(Logger):
    """Prints rows as ``[label] Key = value | ...`` through ``print_fn``."""

    def __init__(self, label: str = "", print_fn: Callable[[str], None] | None = None, stream: TextIO = None):
        self._label = label
        self._stream = stream
        self._print_fn = print_fn

    def write(self, data: LoggingData) -> None:
        line = format_row(self._label, to_scalars(data))
        if self._print_fn is not None:
            self._print_fn(line)
        else:
            print(line, file=self._stream or sys.stdout, flush=True)
