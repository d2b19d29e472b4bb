"""Replay tables held in this process as preallocated numpy arrays: no server, no gRPC, no TensorFlow.

A ``LocalTable`` serves one ``TableSpec``: items are written into fixed
arrays (one per leaf of the signature, ``[max_size, *shape]``) in a ring, the
oldest leaving first; samples gather ``[B, ...]`` batches in one indexing
operation per leaf. Prioritized sampling uses a ``SumTree``; the rate
limiters mean what reverb's mean, and ``sample`` / ``insert`` wait on them
(with a timeout) so that actor and learner threads can share a table.
"""

from __future__ import annotations

import threading
import time
from typing import Any, NamedTuple

import numpy as np
import tree

from acme.replay import tables
from acme.replay.sum_tree import SumTree


class SampleInfo(NamedTuple):
    """Per-item facts of a sampled batch (the fields of reverb's ``SampleInfo`` the learners read)."""

    key: np.ndarray  # uint64 [B]: the item's key, for priority updates
    probability: np.ndarray  # float64 [B]: the probability it had of being drawn
    table_size: np.ndarray  # int64 [B]
    priority: np.ndarray  # float64 [B]
    times_sampled: np.ndarray  # int32 [B], this sample included


class ReplaySample(NamedTuple):
    """A sampled batch: ``info`` about each item and its ``data`` (the item's nest with a leading batch axis)."""

    info: SampleInfo
    data: Any


class RateLimiterTimeout(TimeoutError):
    """A sample or insert waited longer than its timeout for the rate limiter."""


class LocalTable:
    """One replay table of ``spec`` in this process; safe to use from several threads."""

    def __init__(self, spec: tables.TableSpec, seed: int = 0):
        if not isinstance(spec, tables.TableSpec):
            raise TypeError(f"spec must be a TableSpec, got {type(spec).__name__}.")
        if isinstance(spec.sampler, tables.Fifo) and spec.max_times_sampled != 1:
            raise ValueError(
                f"Table {spec.name!r}: a Fifo sampler is a queue here, which needs max_times_sampled=1 "
                f"(got {spec.max_times_sampled}); use TableSpec.queue(...)."
            )
        if spec.max_times_sampled and not isinstance(spec.sampler, tables.Fifo):
            raise ValueError(
                f"Table {spec.name!r}: the local backend removes items after max_times_sampled only for a Fifo "
                f"sampler (a queue); got max_times_sampled={spec.max_times_sampled} with {spec.sampler}."
            )
        self._spec = spec
        # A signature that fixes every shape gets preallocated arrays ``[max_size, *shape]``. Without one, or
        # with unknown sizes (variable-length sequences), each slot holds its item's own arrays ("ragged").
        self._leaf_specs = None if spec.signature is None else [_shape_dtype(x) for x in tree.flatten(spec.signature)]
        self._ragged = self._leaf_specs is None or any(None in shape for shape, _ in self._leaf_specs)
        self._structure: Any = spec.signature  # the nest items come back in (the first item's without a signature)
        self._columns: list | None = None
        if self._leaf_specs is not None:
            self._allocate(len(self._leaf_specs))
        self._keys = np.zeros(spec.max_size, np.uint64)
        self._priorities = np.zeros(spec.max_size, np.float64)
        self._times_sampled = np.zeros(spec.max_size, np.int32)
        self._tree = SumTree(spec.max_size) if isinstance(spec.sampler, tables.Prioritized) else None
        self._head = 0  # slot of the oldest item
        self._size = 0
        self._inserts = self._samples = self._deletes = 0
        self._rng = np.random.default_rng(seed)
        self._changed = threading.Condition(threading.Lock())

    def _allocate(self, num_leaves: int) -> None:
        size = self._spec.max_size
        if self._ragged:
            self._columns = [np.empty(size, object) for _ in range(num_leaves)]
        else:
            self._columns = [np.zeros((size, *shape), dtype) for shape, dtype in self._leaf_specs]

    def _gather(self, column: np.ndarray, slots: np.ndarray) -> np.ndarray:
        if not self._ragged:
            return column[slots]
        try:
            return np.stack(list(column[slots]))
        except ValueError:
            raise ValueError(
                f"Table {self.name!r} holds items of different shapes, which cannot be batched; sample them one at "
                "a time, or give the table a signature with fixed shapes."
            ) from None

    @property
    def leaf_specs(self) -> list | None:
        """``(shape, numpy dtype)`` of each leaf of an item from the signature (None for unknown sizes), or None."""
        return self._leaf_specs

    @property
    def spec(self) -> tables.TableSpec:
        return self._spec

    @property
    def name(self) -> str:
        return self._spec.name

    def __len__(self) -> int:
        return self._size

    def info(self) -> dict:
        """``current_size``, ``max_size`` and the numbers of inserts, samples and removals so far."""
        with self._changed:
            return {
                "current_size": self._size,
                "max_size": self._spec.max_size,
                "num_inserts": self._inserts,
                "num_samples": self._samples,
                "num_deletes": self._deletes,
            }

    # -------------------------------------------------------------- the rate limiter

    def _can_insert(self, count: int) -> bool:
        limiter = self._spec.rate_limiter
        if isinstance(limiter, tables.Queue):
            return self._size + count <= limiter.size
        if isinstance(limiter, tables.SampleToInsertRatio):
            if self._size + count <= limiter.min_size_to_sample:
                return True
            return (self._inserts + count) * limiter.samples_per_insert - self._samples <= limiter.bounds[1]
        return True

    def _can_sample(self, count: int) -> bool:
        limiter = self._spec.rate_limiter
        if isinstance(limiter, tables.Queue):
            return self._size >= count
        if isinstance(limiter, tables.SampleToInsertRatio):
            if self._size < limiter.min_size_to_sample:
                return False
            return self._inserts * limiter.samples_per_insert - (self._samples + count) >= limiter.bounds[0]
        return self._size >= max(limiter.min_size, 1)

    def can_insert(self, count: int = 1) -> bool:
        """Whether ``count`` inserts would go through now without waiting."""
        with self._changed:
            return self._can_insert(count)

    def can_sample(self, count: int = 1) -> bool:
        """Whether a batch of ``count`` items could be sampled now without waiting."""
        with self._changed:
            return self._can_sample(count)

    def _wait(self, ready, timeout: float | None, what: str) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not ready():
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise RateLimiterTimeout(
                    f"{what} on table {self.name!r} waited {timeout} s for the rate limiter ({self._size} items, "
                    f"{self._inserts} inserts, {self._samples} samples)."
                )
            self._changed.wait(remaining)

    # -------------------------------------------------------------- inserting

    def insert(self, item: Any, priority: float = 1.0, timeout: float | None = None, wait: bool = True) -> int:
        """Writes one item (a nest matching the signature); returns its key.

        Waits for the rate limiter (at most ``timeout`` seconds, else
        ``RateLimiterTimeout``) unless ``wait`` is False: a caller that takes
        turns with the sampler in one thread inserts at once and lets the
        sampler catch up. When the table is full the oldest item leaves.
        """
        leaves = [np.asarray(leaf) for leaf in tree.flatten(item)]
        expected = self.leaf_specs
        if expected is not None and len(leaves) != len(expected):
            raise ValueError(
                f"Table {self.name!r} stores items of {len(expected)} arrays ({self._spec.signature}); "
                f"got {len(leaves)}."
            )
        for i, leaf in enumerate(leaves):
            if expected is not None and not fits(leaf.shape, expected[i][0]):
                raise ValueError(
                    f"Table {self.name!r}: leaf {i} of shape {leaf.shape} does not fit its signature's shape "
                    f"{expected[i][0]}."
                )
        return self._insert(leaves, item, priority, timeout, wait)

    def insert_checked(
        self, leaves: list, priority: float = 1.0, timeout: float | None = None, wait: bool = True
    ) -> int:
        """``insert`` for an item already flattened and checked against the signature's shapes and dtypes.

        For writers that validate their items themselves (``LocalTrajectoryWriter``);
        only tables with a signature take checked items.
        """
        if self.leaf_specs is None:
            raise ValueError(f"Table {self.name!r} has no signature; insert the item with insert().")
        return self._insert(leaves, None, priority, timeout, wait)

    def _insert(self, leaves: list, item: Any, priority: float, timeout: float | None, wait: bool) -> int:
        expected = self.leaf_specs
        if not (np.isfinite(priority) and priority >= 0):
            raise ValueError(f"priority must be finite and >= 0, got {priority!r}.")
        with self._changed:
            if wait:
                self._wait(lambda: self._can_insert(1), timeout, "An insert")
            if self._columns is None:  # a table without signature: the first item fixes the structure
                self._structure = tree.map_structure(lambda _: None, item)
                self._allocate(len(leaves))
            elif len(leaves) != len(self._columns):
                raise ValueError(f"Table {self.name!r} stores items of {len(self._columns)} arrays; got {len(leaves)}.")
            if self._size == self._spec.max_size:
                self._remove_oldest(1)
            slot = (self._head + self._size) % self._spec.max_size
            for i, (column, leaf) in enumerate(zip(self._columns, leaves)):
                if self._ragged:  # a copy of its own, in the signature's dtype
                    column[slot] = np.array(leaf, dtype=None if expected is None else expected[i][1])
                else:
                    column[slot] = leaf
            key = self._inserts
            self._keys[slot] = key
            self._priorities[slot] = priority
            self._times_sampled[slot] = 0
            if self._tree is not None:
                self._tree.set(slot, self._weight(priority))
            self._size += 1
            self._inserts += 1
            self._changed.notify_all()
        return key

    def _weight(self, priority: Any) -> np.ndarray:
        return np.power(np.asarray(priority, np.float64), self._spec.sampler.exponent)

    def _remove_oldest(self, count: int) -> None:
        slots = (self._head + np.arange(count)) % self._spec.max_size
        if self._tree is not None:
            self._tree.set(slots, 0.0)
        self._head = (self._head + count) % self._spec.max_size
        self._size -= count
        self._deletes += count

    # -------------------------------------------------------------- sampling

    def sample(self, batch_size: int, timeout: float | None = None) -> ReplaySample:
        """A batch of ``batch_size`` items (with replacement, except from a queue), each leaf ``[B, ...]``.

        Waits for the rate limiter (at most ``timeout`` seconds, else ``RateLimiterTimeout``).
        """
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}.")
        with self._changed:
            self._wait(lambda: self._can_sample(batch_size), timeout, "A sample")
            size = self._size
            sampler = self._spec.sampler
            if isinstance(sampler, tables.Fifo):
                slots = (self._head + np.arange(batch_size)) % self._spec.max_size
                probability = np.ones(batch_size)
            elif self._tree is not None and self._tree.total > 0:
                slots = self._tree.sample(self._rng, batch_size)
                probability = self._tree.get(slots) / self._tree.total
            else:  # uniform, or prioritized with every priority zero
                slots = (self._head + self._rng.integers(0, size, batch_size)) % self._spec.max_size
                probability = np.full(batch_size, 1.0 / size)
            counted, counts = np.unique(slots, return_counts=True)  # a slot may be drawn more than once
            self._times_sampled[counted] += counts.astype(np.int32)
            info = SampleInfo(
                key=self._keys[slots].copy(),
                probability=probability,
                table_size=np.full(batch_size, size, np.int64),
                priority=self._priorities[slots].copy(),
                times_sampled=self._times_sampled[slots].copy(),
            )
            data = tree.unflatten_as(self._structure, [self._gather(column, slots) for column in self._columns])
            self._samples += batch_size
            if isinstance(sampler, tables.Fifo):
                self._remove_oldest(batch_size)
            self._changed.notify_all()
        return ReplaySample(info, data)

    def update_priorities(self, keys: np.ndarray, priorities: np.ndarray) -> None:
        """Sets the priorities of the items with ``keys``; keys of items that have left are ignored."""
        keys = np.asarray(keys, np.uint64).reshape(-1)
        priorities = np.asarray(priorities, np.float64).reshape(-1)
        if keys.shape != priorities.shape:
            raise ValueError(f"keys and priorities differ in length: {keys.shape} and {priorities.shape}.")
        if not np.all(np.isfinite(priorities)) or np.any(priorities < 0):
            raise ValueError("priorities must be finite and >= 0.")
        with self._changed:
            slots = (keys % np.uint64(self._spec.max_size)).astype(np.int64)
            live = (self._keys[slots] == keys) & self._is_occupied(slots)
            slots, priorities = slots[live], priorities[live]
            self._priorities[slots] = priorities
            if self._tree is not None:
                self._tree.set(slots, self._weight(priorities))

    def _is_occupied(self, slots: np.ndarray) -> np.ndarray:
        return (slots - self._head) % self._spec.max_size < self._size

    # -------------------------------------------------------------- checkpointing

    def save(self) -> dict:
        """The table's items (oldest first) and counters, as a tree of numpy arrays and ints."""
        with self._changed:
            slots = (self._head + np.arange(self._size)) % self._spec.max_size
            return {
                # Ragged columns are saved as one array per item.
                "columns": [list(column[slots]) if self._ragged else column[slots] for column in self._columns or []],
                "keys": self._keys[slots],
                "priorities": self._priorities[slots],
                "times_sampled": self._times_sampled[slots],
                "counters": [self._inserts, self._samples, self._deletes],
            }

    def restore(self, state: dict) -> None:
        """Replaces the table's contents with ``save()``'s state (of a table with the same spec)."""
        keys = np.asarray(state["keys"], np.uint64)
        size = len(keys)
        columns = list(state["columns"])
        if self._columns is None and columns:
            raise ValueError(f"Table {self.name!r} has no signature, so its items' structure cannot be restored.")
        own_columns = self._columns or []
        if (
            size > self._spec.max_size
            or len(columns) != len(own_columns)
            or any(
                len(c) != size or (not self._ragged and np.shape(c)[1:] != own.shape[1:])
                for c, own in zip(columns, own_columns)
            )
        ):
            raise ValueError(f"Cannot restore table {self.name!r} from a state of other shapes or a larger size.")
        with self._changed:
            slots = (keys % np.uint64(self._spec.max_size)).astype(np.int64)
            self._head = int(slots[0]) if size else 0
            self._size = size
            for own, column in zip(own_columns, columns):
                if self._ragged:
                    for slot, value in zip(slots, column):
                        own[slot] = np.asarray(value)
                else:
                    own[slots] = column
            self._keys[slots] = keys
            self._priorities[:] = 0.0
            self._priorities[slots] = state["priorities"]
            self._times_sampled[slots] = state["times_sampled"]
            if self._tree is not None:
                self._tree.set(np.arange(self._spec.max_size), 0.0)
                self._tree.set(slots, self._weight(self._priorities[slots]))
            self._inserts, self._samples, self._deletes = (int(c) for c in state["counters"])
            self._changed.notify_all()


def _shape_dtype(spec: Any) -> tuple[tuple, np.dtype]:
    """``(shape, numpy dtype)`` of a ``specs.Array``, an array or a ``tf.TensorSpec`` (None for unknown sizes)."""
    shape = getattr(spec, "shape", None)
    if shape is None or not hasattr(spec, "dtype"):
        raise ValueError(f"A table signature holds {spec!r}; expected specs with .shape and .dtype.")
    dims = tuple(None if d is None else int(d) for d in (shape.as_list() if hasattr(shape, "as_list") else shape))
    return dims, np.dtype(getattr(spec.dtype, "as_numpy_dtype", spec.dtype))


def fits(shape: tuple, expected: tuple) -> bool:
    """Whether an array of ``shape`` fits a signature shape ``expected`` (None: any size on that axis)."""
    return len(shape) == len(expected) and all(e is None or s == e for s, e in zip(shape, expected))
