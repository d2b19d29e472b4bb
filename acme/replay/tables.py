"""Replay tables described once, without naming a backend.

A builder says what its replay is: a ``TableSpec`` per table (sampling,
removal, size, rate limit and the item signature). A backend serves it: the
local tables of ``acme.replay.local`` in this process, or reverb.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any


def _positive_int(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")


def _positive_number(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a positive, finite number, got {value!r}.")


@dataclasses.dataclass(frozen=True)
class LeafSpec:
    """One leaf of an item: its shape (None for a size each item fixes, e.g. a sequence's length) and dtype.

    Signatures may also hold ``specs.Array``; this is for sizes they cannot leave open.
    """

    shape: tuple
    dtype: Any

    def __post_init__(self):
        shape = tuple(self.shape)
        if not all(d is None or (isinstance(d, int) and not isinstance(d, bool) and d >= 0) for d in shape):
            raise ValueError(f"shape must hold sizes >= 0 or None, got {self.shape!r}.")
        object.__setattr__(self, "shape", shape)


@dataclasses.dataclass(frozen=True)
class Uniform:
    """Every item in the table equally likely."""


@dataclasses.dataclass(frozen=True)
class Prioritized:
    """Item ``i`` drawn with probability ``p_i^exponent / sum_j p_j^exponent`` (priorities set at insert, updatable)."""

    exponent: float = 0.6

    def __post_init__(self):
        if (
            isinstance(self.exponent, bool)
            or not isinstance(self.exponent, (int, float))
            or not (0 <= self.exponent and math.isfinite(self.exponent))
        ):
            raise ValueError(f"exponent must be a finite number >= 0, got {self.exponent!r}.")


@dataclasses.dataclass(frozen=True)
class Fifo:
    """The oldest item first: as a sampler it makes a queue (each item is consumed once), as a remover it evicts
    the oldest."""


Sampler = Uniform | Prioritized | Fifo


@dataclasses.dataclass(frozen=True)
class MinSize:
    """Sampling waits until the table holds ``min_size`` items; inserts never wait."""

    min_size: int = 1

    def __post_init__(self):
        _positive_int(self.min_size, "min_size")


@dataclasses.dataclass(frozen=True)
class SampleToInsertRatio:
    """Keeps ``samples / inserts`` near ``samples_per_insert`` once the table holds ``min_size_to_sample`` items.

    The error ``inserts * samples_per_insert - samples`` must stay within
    ``min_size_to_sample * samples_per_insert ± error_buffer``: a sample that
    would push it below waits for inserts, an insert that would push it above
    waits for samples (reverb's limiter of the same name means the same).
    """

    samples_per_insert: float
    min_size_to_sample: int
    error_buffer: float

    def __post_init__(self):
        _positive_number(self.samples_per_insert, "samples_per_insert")
        _positive_int(self.min_size_to_sample, "min_size_to_sample")
        _positive_number(self.error_buffer, "error_buffer")
        if 2 * self.error_buffer < 2 * max(1.0, self.samples_per_insert):
            raise ValueError(
                f"error_buffer must be at least max(1, samples_per_insert) = {max(1.0, self.samples_per_insert)}, "
                f"got {self.error_buffer}: a smaller one can block both samples and inserts for good."
            )

    @property
    def bounds(self) -> tuple[float, float]:
        """The allowed range of ``inserts * samples_per_insert - samples`` once sampling has begun."""
        offset = self.samples_per_insert * self.min_size_to_sample
        return offset - self.error_buffer, offset + self.error_buffer


@dataclasses.dataclass(frozen=True)
class Queue:
    """A queue of at most ``size`` items: inserts wait while it is full, samples while it is empty."""

    size: int

    def __post_init__(self):
        _positive_int(self.size, "size")


RateLimiter = MinSize | SampleToInsertRatio | Queue


@dataclasses.dataclass(frozen=True)
class TableSpec:
    """One replay table.

    Attributes:
      name: the table's name (adders and datasets refer to it).
      sampler: ``Uniform()``, ``Prioritized(exponent)`` or ``Fifo()``.
      remover: which item leaves when the table is full: ``Fifo()`` (the oldest).
      max_size: the most items the table holds.
      rate_limiter: ``MinSize``, ``SampleToInsertRatio`` or ``Queue``.
      signature: a nest of ``specs.Array`` (shape and dtype of one item's leaves); None (or
        None sizes) lets the first item fix them.
      max_times_sampled: an item is removed after this many samples (0: never).
    """

    name: str
    sampler: Sampler
    remover: Fifo
    max_size: int
    rate_limiter: RateLimiter
    signature: Any = None
    max_times_sampled: int = 0

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}.")
        if not isinstance(self.sampler, (Uniform, Prioritized, Fifo)):
            raise ValueError(f"sampler must be Uniform(), Prioritized(exponent) or Fifo(), got {self.sampler!r}.")
        if not isinstance(self.remover, Fifo):
            raise ValueError(f"remover must be Fifo() (the oldest item leaves first), got {self.remover!r}.")
        _positive_int(self.max_size, "max_size")
        if not isinstance(self.rate_limiter, (MinSize, SampleToInsertRatio, Queue)):
            raise ValueError(f"rate_limiter must be MinSize, SampleToInsertRatio or Queue, got {self.rate_limiter!r}.")
        if (
            isinstance(self.max_times_sampled, bool)
            or not isinstance(self.max_times_sampled, int)
            or (self.max_times_sampled < 0)
        ):
            raise ValueError(f"max_times_sampled must be an integer >= 0, got {self.max_times_sampled!r}.")

    @classmethod
    def queue(cls, name: str, max_size: int, signature: Any) -> "TableSpec":
        """A FIFO queue: each item is sampled once, in insertion order, then removed."""
        return cls(
            name=name,
            sampler=Fifo(),
            remover=Fifo(),
            max_size=max_size,
            rate_limiter=Queue(max_size),
            signature=signature,
            max_times_sampled=1,
        )
