"""PrefetchIterator: batches arrive in order, and a failing data source surfaces as an error that names it."""

from __future__ import annotations

import time

import pytest

from acme.jax.prefetch import PrefetchIterator

TABLE = "reverb table 'priority_table' at localhost:1234"


def _wait_until_ready(iterator: PrefetchIterator) -> None:
    deadline = time.monotonic() + 10
    while not iterator.ready():
        assert time.monotonic() < deadline, "the prefetch thread put nothing in 10 s"
        time.sleep(0.001)


def _replay_that_fails_after(batches: int):
    """A sampler whose connection to the replay server is lost after ``batches`` batches."""
    yield from range(batches)
    raise ConnectionResetError("the replay server closed the connection")


def test_batches_come_in_order_and_the_end_of_the_source_ends_the_iterator():
    iterator = PrefetchIterator(iter(range(5)), buffer_size=2, transform=lambda x: 10 * x)
    assert list(iterator) == [0, 10, 20, 30, 40]
    assert iterator.retrieved_elements() == 5
    with pytest.raises(StopIteration):
        next(iterator)


@pytest.mark.parametrize("where", ["source", "transform"])
def test_a_failing_data_source_is_named_in_the_error_and_every_later_call_fails_too(where):
    if where == "source":
        iterator = PrefetchIterator(_replay_that_fails_after(2), buffer_size=1, name=TABLE)
        failure = r"ConnectionResetError: the replay server closed the connection"
    else:

        def transform(batch):
            if batch == 2:
                raise ValueError("batch 2 does not fit the device")
            return batch

        iterator = PrefetchIterator(iter(range(5)), buffer_size=1, transform=transform, name=TABLE)
        failure = "ValueError: batch 2 does not fit the device"
    assert [next(iterator), next(iterator)] == [0, 1]
    message = f"The data source {TABLE} failed in the prefetch thread: {failure}"
    with pytest.raises(RuntimeError, match=message) as raised:
        next(iterator)
    assert type(raised.value.__cause__).__name__ == failure.split(":")[0]  # the original error, chained
    # The source is gone for good: a later call (the learner retrying) fails at once instead of waiting forever.
    _wait_until_ready(iterator)
    with pytest.raises(RuntimeError, match=message):
        next(iterator)
    assert iterator.retrieved_elements() == 2


def test_a_source_without_a_name_is_named_by_the_iterator_itself():
    iterator = PrefetchIterator(_replay_that_fails_after(0))
    with pytest.raises(RuntimeError, match="The data source _replay_that_fails_after failed in the prefetch thread"):
        next(iterator)
