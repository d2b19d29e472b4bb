"""Replay held by the learner: reverb transfer queues feed local tables, each item once, rate limit kept."""

from __future__ import annotations

import time

import numpy as np
import pytest
from dm_env import specs

from acme.replay import tables
from acme.replay.feed import QueueFeed, transfer_queues
from acme.replay.local_client import LocalReplay
from tests.adders.conftest import make_reverb_client  # noqa: F401  (a fixture)

pytestmark = pytest.mark.reverb

SIGNATURE = {"obs": specs.Array((2,), np.float32), "action": specs.Array((), np.int32)}


def _spec(limiter, name="t", max_size=100) -> tables.TableSpec:
    return tables.TableSpec(name, tables.Prioritized(1.0), tables.Fifo(), max_size, limiter, SIGNATURE)


def _write(client, table: str, first: int, count: int) -> None:
    """Items ``first .. first + count - 1``, item ``i`` with obs ``[i, -i]``, action ``i`` and priority ``i + 1``."""
    with client.trajectory_writer(num_keep_alive_refs=1) as writer:
        for i in range(first, first + count):
            writer.append({"obs": np.array([i, -i], np.float32), "action": np.int32(i)})
            trajectory = {"obs": writer.history["obs"][-1], "action": writer.history["action"][-1]}
            writer.create_item(table, priority=float(i + 1), trajectory=trajectory)


def _wait_for(condition, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def _fails(call) -> bool:
    try:
        call()
    except RuntimeError:
        return True
    return False


def test_transfer_queues_keep_each_tables_name_and_signature():
    specs_ = [_spec(tables.MinSize(1), "a"), _spec(tables.SampleToInsertRatio(2.0, 10, 5.0), "b")]
    queues = transfer_queues(specs_, 7)
    assert [q.name for q in queues] == ["a", "b"]
    assert all(q.signature is SIGNATURE and q.max_size == 7 and q.max_times_sampled == 1 for q in queues)
    assert all(isinstance(q.rate_limiter, tables.Queue) and isinstance(q.sampler, tables.Fifo) for q in queues)
    for size in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="transfer queues' size must be a positive integer"):
            transfer_queues(specs_, size)


def test_the_feed_moves_every_item_once_with_its_priority(make_reverb_client):  # noqa: F811
    target = _spec(tables.MinSize(1))
    client = make_reverb_client(*transfer_queues([target], 4))
    replay = LocalReplay([target])
    feed = QueueFeed(client, replay, ["t"]).start()
    try:
        _write(client, "t", 0, 30)  # more than the queue holds: the writer waits while the feed drains it
        _wait_for(lambda: feed.moved() == 30)
        saved = replay.table("t").save()
        np.testing.assert_array_equal(saved["priorities"], np.arange(1, 31, dtype=np.float64))
        action, obs = saved["columns"]  # flattened in sorted key order
        np.testing.assert_array_equal(action, np.arange(30, dtype=np.int32))
        np.testing.assert_array_equal(obs, np.stack([np.arange(30), -np.arange(30)], axis=1).astype(np.float32))
        assert client.server_info()["t"].current_size == 0  # each item left the queue when it was moved
        feed.check()
    finally:
        feed.close()


def test_the_feed_waits_for_the_local_rate_limiter(make_reverb_client):  # noqa: F811
    """While the local table asks for samples first, nothing more is moved: the queue fills instead."""
    limiter = tables.SampleToInsertRatio(samples_per_insert=1.0, min_size_to_sample=5, error_buffer=2.0)
    target = _spec(limiter)
    client = make_reverb_client(*transfer_queues([target], 50))
    replay = LocalReplay([target])
    feed = QueueFeed(client, replay, ["t"]).start()
    try:
        _write(client, "t", 0, 20)
        _wait_for(lambda: not replay.table("t").can_insert())
        time.sleep(0.3)
        held = feed.moved()
        assert held < 20 and feed.moved() == held  # stuck on the limiter
        assert client.server_info()["t"].current_size >= 20 - held - 2  # the feed holds at most 2 in hand
        replay.sample("t", 4)  # the learner samples: the limiter lets more in
        _wait_for(lambda: feed.moved() > held)
        feed.check()
    finally:
        feed.close()


def test_a_feed_names_a_missing_table_and_reports_a_failed_move(make_reverb_client):  # noqa: F811
    target = _spec(tables.MinSize(1))
    with pytest.raises(KeyError, match="No replay table 'other'"):
        QueueFeed(None, LocalReplay([target]), ["other"])
    # The queue's items have another signature than the local table's: the move fails and check() says so.
    other = tables.TableSpec.queue("t", 10, {"obs": specs.Array((3,), np.float32), "action": specs.Array((), np.int32)})
    client = make_reverb_client(other)
    feed = QueueFeed(client, LocalReplay([target]), ["t"]).start()
    try:
        with client.trajectory_writer(num_keep_alive_refs=1) as writer:
            writer.append({"obs": np.zeros(3, np.float32), "action": np.int32(0)})
            writer.create_item("t", 1.0, {"obs": writer.history["obs"][-1], "action": writer.history["action"][-1]})
        _wait_for(lambda: _fails(feed.check))
        with pytest.raises(RuntimeError, match="Moving replay items into the learner's tables failed"):
            feed.check()
    finally:
        feed.close()
