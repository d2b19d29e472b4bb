"""A logger that writes TensorBoard scalar summaries, with tensorboardX: no TensorFlow needed, on either stack."""

from __future__ import annotations

import os

from acme.utils.loggers.base import Logger, LoggingData, to_scalars


class TensorBoardLogger(Logger):
    """Writes numeric values as scalars ``<label>/<key>`` in event files under ``directory/label``.

    The x-axis is ``data[steps_key]`` when given and present, else a row count.
    """

    def __init__(self, directory: str, label: str = "logs", steps_key: str | None = None):
        self._directory = os.path.join(directory, label)
        self._writer = None  # made at the first write: a logger that never writes leaves no file and no thread
        self._label = label
        self._steps_key = steps_key
        self._iteration = 0

    def write(self, data: LoggingData) -> None:
        if self._writer is None:
            from tensorboardX import SummaryWriter

            # Flushed every 10 s (tensorboardX: 120 s), so that a run killed without warning keeps nearly all of it.
            self._writer = SummaryWriter(self._directory, flush_secs=10)
        data = to_scalars(data)
        step = data.get(self._steps_key, self._iteration) if self._steps_key else self._iteration
        for key, value in data.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                self._writer.add_scalar(f"{self._label}/{key}", value, global_step=int(step))
        self._iteration += 1

    def close(self) -> None:
        if self._writer is not None:
            self._writer.flush()
            self._writer.close()
