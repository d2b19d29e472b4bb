"""A logger that writes TensorBoard scalar summaries."""

from __future__ import annotations

import os

from acme.utils import extras
from acme.utils.loggers.base import Logger, LoggingData, to_scalars


class TensorBoardLogger(Logger):
    """Writes numeric values as scalars under ``directory/label``.

    The x-axis is ``data[steps_key]`` when given and present, else a row count.
    TensorFlow (the ``reverb`` extra) is imported only when this logger is built.
    """

    def __init__(self, directory: str, label: str = "logs", steps_key: str | None = None):
        extras.require("tensorflow", "The TensorBoard logger")
        import tensorflow as tf

        self._tf = tf
        self._writer = tf.summary.create_file_writer(os.path.join(directory, label))
        self._label = label
        self._steps_key = steps_key
        self._iteration = 0

    def write(self, data: LoggingData) -> None:
        data = to_scalars(data)
        step = data.get(self._steps_key, self._iteration) if self._steps_key else self._iteration
        with self._writer.as_default():
            for key, value in data.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    self._tf.summary.scalar(f"{self._label}/{key}", value, step=int(step))
        self._iteration += 1

    def close(self) -> None:
        self._writer.flush()
        self._writer.close()
