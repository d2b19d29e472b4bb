"""A logger that appends rows to a CSV file a user can plot."""

from __future__ import annotations

import csv
import os
from typing import Any

from acme.utils.loggers.base import Logger, LoggingData, to_scalars


class CSVLogger(Logger):
    """Writes rows to ``directory/label.csv``.

    Columns are the keys of the rows seen so far; when a new key appears the
    file is rewritten with the wider header, so no value is ever dropped. An
    existing file (a resumed run, a restarted node) is continued, not replaced.
    """

    def __init__(self, directory: str, label: str = "logs"):
        os.makedirs(directory, exist_ok=True)
        self._path = os.path.join(directory, f"{label.replace('/', '_')}.csv")
        self._fields: list[str] = []
        self._rows: list[dict[str, Any]] = []
        self._file = None
        if os.path.exists(self._path):
            with open(self._path, newline="") as f:
                reader = csv.DictReader(f)
                self._fields = list(reader.fieldnames or [])
                self._rows = list(reader)

    @property
    def path(self) -> str:
        return self._path

    def _open(self, rewrite: bool) -> None:
        if self._file is not None:
            self._file.close()
        self._file = open(self._path, "w", newline="")
        writer = csv.DictWriter(self._file, fieldnames=self._fields)
        writer.writeheader()
        if rewrite:
            writer.writerows(self._rows)

    def write(self, data: LoggingData) -> None:
        row = to_scalars(data)
        new_fields = [key for key in row if key not in self._fields]
        self._rows.append(row)
        if new_fields or self._file is None:
            self._fields.extend(new_fields)
            self._open(rewrite=True)
        else:
            csv.DictWriter(self._file, fieldnames=self._fields).writerow(row)
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
