"""Replay held by the learner: each item crosses the network once, through a reverb queue, into local tables.

Sampling a reverb table costs about 30 µs of CPU per item on the learner's
side (measured in-process, where no gRPC is involved, so it is reverb's own
per-item work), and an off-policy learner samples ``samples_per_insert`` items
(32 for DQN) for every one an actor inserts. With the replay held by the
learner, actors write to queue tables of the same names and signatures
(``transfer_queues``) and a ``QueueFeed`` moves each item once into the
learner's ``LocalReplay``, whose tables (with the builder's sampler, size and
rate limiter) the learner samples at numpy speed. The rate limiter still
couples acting to learning: while the local table asks for samples first the
feed waits, the queue fills, and the actors' inserts wait on it.
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

from acme.replay import tables
from acme.replay.local import RateLimiterTimeout
from acme.replay.local_client import LocalReplay

_ENDLESS = 2**62  # reverb's sampler takes a sample count; a run never reaches this one
_POLL_SECONDS = 0.1  # how often a feed waiting on the local rate limiter looks whether it was closed


def transfer_queues(table_specs: Sequence[tables.TableSpec], size: int) -> list[tables.TableSpec]:
    """A queue of at most ``size`` items for each table, with its name and signature: what actors write to."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"The transfer queues' size must be a positive integer, got {size!r}.")
    return [tables.TableSpec.queue(spec.name, size, spec.signature) for spec in table_specs]


class QueueFeed:
    """Moves every item of a reverb server's queue tables into the same-named tables of ``replay``.

    One daemon thread per table reads the queue and inserts each item with the
    priority its adder gave it, waiting for the local table's rate limiter.
    ``check()`` re-raises a thread's error; ``close()`` stops the threads (a
    thread blocked on an empty queue ends when the server goes away).
    """

    def __init__(self, client: Any, replay: LocalReplay, table_names: Sequence[str]):
        self._client = client
        self._replay = replay
        self._names = list(table_names)
        for name in self._names:
            replay.table(name)  # a KeyError naming the tables there are
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._moved = 0
        self._error: BaseException | None = None
        self._threads = [
            threading.Thread(target=self._drain, args=(name,), name=f"feed-{name}", daemon=True) for name in self._names
        ]

    def start(self) -> "QueueFeed":
        """Starts the threads; returns this feed."""
        for thread in self._threads:
            thread.start()
        return self

    def _drain(self, name: str) -> None:
        table = self._replay.table(name)
        try:
            samples = self._client.sample(name, _ENDLESS, emit_timesteps=False, unpack_as_table_signature=True)
            for sample in samples:
                while not self._closed.is_set():
                    try:
                        table.insert(sample.data, float(sample.info.priority), timeout=_POLL_SECONDS)
                        break
                    except RateLimiterTimeout:
                        continue
                if self._closed.is_set():
                    return
                with self._lock:
                    self._moved += 1
        except BaseException as error:  # surfaced by check()
            if not self._closed.is_set():
                self._error = error

    def moved(self) -> int:
        """Items moved into the local tables so far."""
        with self._lock:
            return self._moved

    def check(self) -> None:
        """Raises ``RuntimeError`` if a thread has failed (the server went away, an item did not fit its table)."""
        if self._error is not None:
            raise RuntimeError(
                f"Moving replay items into the learner's tables failed: {self._error!r}"
            ) from self._error

    def close(self) -> None:
        """Stops moving items."""
        self._closed.set()
