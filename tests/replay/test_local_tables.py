"""Local replay tables: sampling distributions, removal, rate limiters, waiting, priorities and save/restore."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from dm_env import specs

from acme.replay import tables
from acme.replay.local import LocalTable, RateLimiterTimeout
from acme.replay.sum_tree import SumTree

SIGNATURE = {"obs": specs.Array((2,), np.float32), "action": specs.Array((), np.int32)}


def _item(i: int) -> dict:
    return {"obs": np.full(2, i, np.float32), "action": np.int32(i)}


def _table(sampler=tables.Uniform(), max_size=10, limiter=tables.MinSize(1), **kwargs) -> LocalTable:
    spec = tables.TableSpec("t", sampler, tables.Fifo(), max_size, limiter, SIGNATURE, **kwargs)
    return LocalTable(spec, seed=0)


def test_sum_tree_finds_the_slot_of_each_cumulative_target():
    rng = np.random.default_rng(0)
    weights = rng.uniform(0, 3, size=13)
    weights[[2, 7]] = 0.0
    sum_tree = SumTree(13)
    sum_tree.set(np.arange(13), weights)
    assert sum_tree.total == pytest.approx(weights.sum())
    targets = rng.uniform(0, weights.sum(), size=1000)
    expected = np.searchsorted(np.cumsum(weights), targets, side="right")
    np.testing.assert_array_equal(sum_tree.find(targets), expected)
    sum_tree.set([4, 4], [0.0, 5.0])  # the last of repeated slots wins
    assert sum_tree.get([4])[0] == 5.0 and sum_tree.total == pytest.approx(weights.sum() - weights[4] + 5.0)
    with pytest.raises(ValueError, match="non-negative"):
        sum_tree.set([0], [-1.0])


def test_uniform_samples_return_the_inserted_items_and_the_oldest_leave_first():
    table = _table(max_size=5)
    keys = [table.insert(_item(i)) for i in range(8)]
    assert keys == list(range(8)) and len(table) == 5
    assert table.info() == {"current_size": 5, "max_size": 5, "num_inserts": 8, "num_samples": 0, "num_deletes": 3}
    sample = table.sample(400)
    assert sample.data["obs"].shape == (400, 2) and sample.data["action"].dtype == np.int32
    np.testing.assert_array_equal(sample.data["action"], sample.info.key.astype(np.int32))
    np.testing.assert_array_equal(sample.data["obs"][:, 0], sample.info.key.astype(np.float32))
    assert set(sample.info.key.tolist()) == {3, 4, 5, 6, 7}
    np.testing.assert_allclose(sample.info.probability, 0.2)
    times = table.save()["times_sampled"]  # every draw counted, repeats included
    assert times.sum() == 400 and times.tolist() == np.bincount(sample.info.key.astype(int) - 3).tolist()


def test_prioritized_sampling_follows_priority_to_the_exponent_and_updates():
    table = _table(tables.Prioritized(exponent=0.5), max_size=4)
    for i, priority in enumerate([1.0, 4.0, 9.0, 0.0]):
        table.insert(_item(i), priority=priority)
    sample = table.sample(60_000)
    counts = np.bincount(sample.info.key.astype(int), minlength=4) / 60_000
    np.testing.assert_allclose(counts, [1 / 6, 2 / 6, 3 / 6, 0.0], atol=0.01)
    np.testing.assert_allclose(sample.info.probability, (np.array([1, 2, 3, 0]) / 6)[sample.info.key.astype(int)])
    table.update_priorities([0, 2, 99], [16.0, 0.0, 5.0])  # key 99 was never inserted: ignored
    counts = np.bincount(table.sample(60_000).info.key.astype(int), minlength=4) / 60_000
    np.testing.assert_allclose(counts, [4 / 6, 2 / 6, 0.0, 0.0], atol=0.01)
    table.insert(_item(4), priority=1.0)  # evicts key 0
    table.update_priorities([0], [100.0])  # key 0 has left: ignored
    assert set(table.sample(2000).info.key.tolist()) == {1, 4}


def test_a_queue_hands_out_each_item_once_in_order_and_waits_when_full_or_empty():
    spec = tables.TableSpec.queue("q", max_size=3, signature=SIGNATURE)
    table = LocalTable(spec)
    for i in range(3):
        table.insert(_item(i))
    assert not table.can_insert()
    with pytest.raises(RateLimiterTimeout, match="An insert on table 'q' waited"):
        table.insert(_item(3), timeout=0.05)
    np.testing.assert_array_equal(table.sample(2).data["action"], [0, 1])
    table.insert(_item(3))
    np.testing.assert_array_equal(table.sample(2).data["action"], [2, 3])
    assert len(table) == 0
    with pytest.raises(RateLimiterTimeout, match="A sample"):
        table.sample(1, timeout=0.05)


def test_sample_to_insert_ratio_keeps_the_error_within_its_bounds():
    limiter = tables.SampleToInsertRatio(samples_per_insert=4.0, min_size_to_sample=10, error_buffer=8.0)
    table = _table(limiter=limiter, max_size=1000)
    for i in range(10):
        assert table.can_insert()
        table.insert(_item(i))
    assert table.can_sample(1)
    low, high = limiter.bounds  # 32 .. 48
    rng = np.random.default_rng(0)
    inserts, samples = 10, 0
    for i in range(2000):
        if rng.uniform() < 0.5 and table.can_insert():
            table.insert(_item(i))
            inserts += 1
        elif table.can_sample(2):
            table.sample(2)
            samples += 2
        error = inserts * 4.0 - samples
        assert low <= error <= high
    assert not (table.can_insert() is False and table.can_sample(1) is False)  # never both blocked


def test_sample_to_insert_ratio_refuses_a_buffer_that_could_block_both_sides():
    with pytest.raises(ValueError, match="error_buffer must be at least max"):
        tables.SampleToInsertRatio(samples_per_insert=8.0, min_size_to_sample=1, error_buffer=4.0)


def test_a_waiting_sample_is_woken_by_an_insert_from_another_thread():
    table = _table(limiter=tables.MinSize(3))
    got = []
    thread = threading.Thread(target=lambda: got.append(table.sample(1, timeout=10)))
    thread.start()
    for i in range(3):
        time.sleep(0.02)
        table.insert(_item(i))
    thread.join(5)
    assert len(got) == 1 and got[0].info.table_size[0] == 3


def test_bad_input_is_refused():
    table = _table()
    with pytest.raises(ValueError, match="does not fit its signature"):
        table.insert({"obs": np.zeros(3, np.float32), "action": np.int32(0)})
    with pytest.raises(ValueError, match="stores items of 2 arrays"):
        table.insert({"obs": np.zeros(2, np.float32)})
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        table.sample(0)
    with pytest.raises(ValueError, match="a Fifo sampler is a queue here"):
        _table(tables.Fifo())
    with pytest.raises(ValueError, match="sampler must be"):
        tables.TableSpec("t", "uniform", tables.Fifo(), 10, tables.MinSize(1), SIGNATURE)
    with pytest.raises(ValueError, match="max_size must be a positive integer"):
        tables.TableSpec("t", tables.Uniform(), tables.Fifo(), 0, tables.MinSize(1), SIGNATURE)


@pytest.mark.parametrize("sampler", [tables.Uniform(), tables.Prioritized(0.8)])
def test_save_and_restore_give_back_items_priorities_and_counters(sampler):
    table = _table(sampler, max_size=4)
    for i in range(6):
        table.insert(_item(i), priority=float(i + 1))
    table.sample(3)
    restored = _table(sampler, max_size=4)
    restored.restore(table.save())
    assert restored.info() == table.info()
    for name in ("keys", "priorities", "times_sampled"):
        np.testing.assert_array_equal(restored.save()[name], table.save()[name])
    if isinstance(sampler, tables.Prioritized):
        counts = np.bincount(restored.sample(40_000).info.key.astype(int), minlength=6)[2:] / 40_000
        weights = np.arange(3, 7) ** 0.8
        np.testing.assert_allclose(counts, weights / weights.sum(), atol=0.01)
    restored.insert(_item(6))  # the ring goes on where it was: key 2 leaves
    assert restored.save()["keys"].tolist() == [3, 4, 5, 6]


def test_a_table_of_variable_length_items_batches_equal_lengths_and_saves_them():
    spec = tables.TableSpec(
        "episodes",
        tables.Uniform(),
        tables.Fifo(),
        10,
        tables.MinSize(1),
        signature={"x": tables.LeafSpec((None, 2), np.float32)},
    )
    table = LocalTable(spec)
    table.insert({"x": np.ones((3, 2))})  # cast to the signature's float32
    assert table.sample(4).data["x"].shape == (4, 3, 2) and table.sample(1).data["x"].dtype == np.float32
    table.insert({"x": np.zeros((5, 2), np.float32)})
    with pytest.raises(ValueError, match="different shapes, which cannot be batched"):
        table.sample(64)
    with pytest.raises(ValueError, match=r"does not fit its signature's shape \(None, 2\)"):
        table.insert({"x": np.zeros((5, 3), np.float32)})
    restored = LocalTable(spec)
    restored.restore(table.save())
    assert [x.shape for x in restored.save()["columns"][0]] == [(3, 2), (5, 2)]
