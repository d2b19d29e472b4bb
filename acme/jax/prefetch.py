"""A background thread that keeps the next batches ready (optionally on device)."""

from __future__ import annotations

import queue
import threading
from typing import Callable, Iterator, TypeVar

from acme import core

T = TypeVar("T")
_END = object()
CLOSE_SECONDS = 10.0  # how long ``close`` waits for the thread's element in flight


class PrefetchIterator(core.PrefetchingIterator[T]):
    """Pulls from ``iterator`` in a daemon thread into a bounded queue.

    ``ready()`` says whether ``next`` would return without waiting; this is
    how an in-process experiment steps its learner exactly as often as the
    replay's rate limiter lets it. ``transform`` (e.g. ``jax.device_put``) runs
    in the background thread. An error in the source (or in ``transform``) is
    raised by ``next``, and by every later ``next``, as a ``RuntimeError``
    naming the source (``name``, by default the iterator's own description)
    and chained to the original error.
    """

    def __init__(
        self,
        iterator: Iterator[T],
        buffer_size: int = 2,
        transform: Callable[[T], T] | None = None,
        name: str | None = None,
    ):
        if buffer_size < 1:
            raise ValueError(f"buffer_size must be at least 1, got {buffer_size}.")
        self.name = name or getattr(iterator, "__qualname__", None) or repr(iterator)
        self._source = iterator
        self._transform = transform
        self._queue: "queue.Queue" = queue.Queue(maxsize=buffer_size)
        self._retrieved = 0
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._fill, name="prefetch", daemon=True)
        self._thread.start()

    def _fill(self) -> None:
        try:
            for element in self._source:
                if self._transform is not None:
                    element = self._transform(element)
                while not self._closed.is_set():
                    try:
                        self._queue.put(element, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if self._closed.is_set():
                    return
        except BaseException as error:  # surfaced to the consumer
            if not self._closed.is_set():
                self._queue.put(error)
            return
        self._queue.put(_END)

    def __iter__(self):
        return self

    def __next__(self) -> T:
        element = self._queue.get()
        if element is _END:
            self._queue.put(_END)
            raise StopIteration
        if isinstance(element, BaseException):
            self._queue.put(element)  # the source is gone: every later call fails the same way, none waits
            raise RuntimeError(
                f"The data source {self.name} failed in the prefetch thread: {type(element).__name__}: {element}"
            ) from element
        self._retrieved += 1
        return element

    def ready(self) -> bool:
        return not self._queue.empty()

    def retrieved_elements(self) -> int:
        return self._retrieved

    def close(self, timeout: float = CLOSE_SECONDS) -> None:
        """Stops the thread and waits up to ``timeout`` seconds for it to end (a thread still inside a jax or
        reverb call when the interpreter exits aborts the process)."""
        self._closed.set()
        self._thread.join(timeout)
