"""Checkpointer: atomic writes, keep-N pruning, corruption fallback, metadata checks, DQN state round trip."""

import itertools
import os
from typing import Any, NamedTuple

import jax
import numpy as np
import pytest

from acme import types
from acme.testing import fakes
from acme.utils import counting, tree_structure
from acme.utils.checkpoint_files import (
    Checkpointer,
    CheckpointError,
    CheckpointMismatchError,
    CorruptCheckpointWarning,
    signatures_match,
    tree_signature,
)
from agents import dqn
from agents.dqn import learning as dqn_learning


class _Sample(NamedTuple):  # the two fields of a reverb.ReplaySample the learner reads
    info: Any
    data: Any


def _make_learner(seed: int, hidden_sizes=(16,)):
    rng = np.random.default_rng(0)
    batch_size = 16
    data = types.Transition(
        observation=rng.normal(size=(batch_size, 4)).astype(np.float32),
        action=rng.integers(0, 2, size=batch_size).astype(np.int32),
        reward=rng.normal(size=batch_size).astype(np.float32),
        discount=np.full(batch_size, 0.9, np.float32),
        next_observation=rng.normal(size=(batch_size, 4)).astype(np.float32),
    )
    config = dqn.DQNConfig(hidden_sizes=hidden_sizes, num_sgd_steps_per_step=1)  # one [B] batch per step
    networks = dqn.make_networks(fakes.discrete_spec(), config.hidden_sizes)
    return dqn.DQN_LEARNER.make_learner(
        networks, config, jax.random.PRNGKey(seed), iterator=itertools.repeat(_Sample(None, data))
    )


def _state(value: float):
    return {"w": np.full((2, 3), value, np.float32), "step": int(value), "nested": (np.arange(3), 0.5)}


def test_dqn_learner_state_round_trips_bitwise(tmp_path):
    learner = _make_learner(0)
    learner.run(num_steps=3)
    counter = counting.Counter()
    counter.increment(steps=7, episodes=2)
    checkpointer = Checkpointer(str(tmp_path), keep=2)
    saved = {"learner": learner.save(), "counter": counter.save()}
    meta = {"agent": "dqn", "params": tree_signature(saved["learner"].params)}
    path = checkpointer.save(saved, step=3, metadata=meta)
    assert os.path.basename(path) == "ckpt-3"

    state, step, metadata = Checkpointer(str(tmp_path)).restore_latest(expect_metadata=meta)
    assert step == 3 and metadata == meta
    assert type(state["learner"]) is dqn_learning.TrainingState
    fresh = _make_learner(1)
    fresh.restore(state["learner"])
    restored_counter = counting.Counter()
    restored_counter.restore(state["counter"])
    assert restored_counter.get_counts() == {"steps": 7, "episodes": 2}
    assert fresh.num_steps == 3
    before, after = jax.tree.leaves(learner.save()), jax.tree.leaves(fresh.save())
    assert jax.tree.structure(learner.save()) == jax.tree.structure(fresh.save())
    for a, b in zip(before, after):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()
    # Both continue identically.
    learner.step()
    fresh.step()
    for a, b in zip(jax.tree.leaves(learner.save()), jax.tree.leaves(fresh.save())):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_python_scalars_and_containers_come_back(tmp_path):
    checkpointer = Checkpointer(str(tmp_path))
    assert checkpointer.restore_latest() is None and checkpointer.latest_step() is None
    checkpointer.save(_state(2.0), step=2)
    state, step, metadata = checkpointer.restore_latest()
    assert step == 2 and metadata == {}
    assert isinstance(state["step"], int) and isinstance(state["nested"], tuple) and state["nested"][1] == 0.5
    np.testing.assert_array_equal(state["w"], _state(2.0)["w"])


def test_keeps_only_the_newest_n(tmp_path):
    checkpointer = Checkpointer(str(tmp_path), keep=2)
    for step in (10, 20, 30, 40):
        checkpointer.save(_state(step), step=step)
    assert checkpointer.list_checkpoints() == [30, 40]
    assert checkpointer.latest_step() == 40
    assert sorted(os.listdir(tmp_path)) == [".lock", "ckpt-30", "ckpt-40"]  # .lock: the run that writes there
    assert checkpointer.restore_latest()[1] == 40
    with pytest.raises(ValueError, match="keep must be an integer >= 1"):
        Checkpointer(str(tmp_path), keep=0)


def test_saving_the_same_step_again_replaces_it(tmp_path):
    checkpointer = Checkpointer(str(tmp_path))
    checkpointer.save(_state(1.0), step=5)
    checkpointer.save(_state(9.0), step=5)
    state, step, _ = checkpointer.restore_latest()
    assert step == 5 and state["w"][0, 0] == 9.0
    assert sorted(os.listdir(tmp_path)) == [".lock", "ckpt-5"]


@pytest.mark.parametrize("damage", ["truncate_npz", "delete_structure", "delete_manifest", "flip_byte"])
def test_a_damaged_newest_checkpoint_falls_back_to_the_previous(tmp_path, damage):
    checkpointer = Checkpointer(str(tmp_path), keep=3)
    checkpointer.save(_state(1.0), step=1)
    newest = checkpointer.save(_state(2.0), step=2)
    if damage == "truncate_npz":
        path = os.path.join(newest, "leaves.npz")
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) // 2)
    elif damage == "delete_structure":
        os.remove(os.path.join(newest, "structure.json"))
    elif damage == "delete_manifest":
        os.remove(os.path.join(newest, "manifest.json"))
    else:
        path = os.path.join(newest, "leaves.npz")
        data = bytearray(open(path, "rb").read())
        data[len(data) // 2] ^= 0xFF
        open(path, "wb").write(bytes(data))
    with pytest.warns(CorruptCheckpointWarning, match="ckpt-2"):
        state, step, _ = checkpointer.restore_latest()
    assert step == 1 and state["w"][0, 0] == 1.0


def test_all_corrupt_raises_naming_them(tmp_path):
    checkpointer = Checkpointer(str(tmp_path))
    for step in (1, 2):
        path = checkpointer.save(_state(step), step=step)
        with open(os.path.join(path, "leaves.npz"), "wb") as f:
            f.write(b"garbage")
    with pytest.warns(CorruptCheckpointWarning):
        with pytest.raises(CheckpointError, match=r"(?s)unreadable.*ckpt-2.*ckpt-1"):
            checkpointer.restore_latest()


def test_metadata_mismatch_is_an_error_not_a_fresh_start(tmp_path):
    checkpointer = Checkpointer(str(tmp_path))
    learner = _make_learner(0, hidden_sizes=(16,))
    checkpointer.save(learner.save(), step=1, metadata={"agent": "dqn", "shapes": tree_signature(learner.save())})
    with pytest.raises(CheckpointMismatchError, match=r"'agent' is 'dqn' in the checkpoint but 'sac' is expected"):
        checkpointer.restore_latest(expect_metadata={"agent": "sac"})
    bigger = _make_learner(0, hidden_sizes=(32,))
    with pytest.raises(CheckpointMismatchError, match="'shapes'"):
        checkpointer.restore_latest(expect_metadata={"shapes": tree_signature(bigger.save())})
    with pytest.raises(CheckpointMismatchError, match="no metadata key 'seed'"):
        checkpointer.restore_latest(expect_metadata={"seed": 0})
    # Tuples compare equal to the lists JSON gives back.
    checkpointer.save(_state(1.0), step=2, metadata={"hidden_sizes": (16, 16)})
    assert checkpointer.restore_latest(expect_metadata={"hidden_sizes": (16, 16)})[2] == {"hidden_sizes": [16, 16]}


def test_unwritable_directory_is_reported_at_construction(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    with pytest.raises(CheckpointError, match=r"Cannot use .*a_file/ckpts.*Not a directory"):
        Checkpointer(str(blocker / "ckpts"))


def test_non_json_metadata_is_rejected(tmp_path):
    with pytest.raises(TypeError, match="JSON-serialisable"):
        Checkpointer(str(tmp_path)).save(_state(1.0), step=1, metadata={"f": object()})


def test_a_crash_mid_write_leaves_the_previous_checkpoint(tmp_path, monkeypatch):
    checkpointer = Checkpointer(str(tmp_path))
    checkpointer.save(_state(1.0), step=1)

    def crash(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(CheckpointError, match="No space left on device"):
        checkpointer.save(_state(2.0), step=2)
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == [".lock", "ckpt-1"]  # no partial directory left behind
    state, step, _ = checkpointer.restore_latest()
    assert step == 1 and state["w"][0, 0] == 1.0
    # A temporary left by a killed process is invisible to restore and removed on the next start.
    os.makedirs(tmp_path / ".tmp-ckpt-3-abc")
    checkpointer.close()
    assert Checkpointer(str(tmp_path)).list_checkpoints() == [1]
    assert sorted(os.listdir(tmp_path)) == [".lock", "ckpt-1"]


def test_attached_directories_move_in_and_come_back_when_the_write_fails(tmp_path, monkeypatch):
    from acme.utils import checkpoint_files as ckpt_module

    checkpointer = Checkpointer(str(tmp_path / "ckpts"))
    replay = tmp_path / "replay"
    replay.mkdir()
    (replay / "chunks").write_bytes(b"x" * 1000)

    def crash(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ckpt_module, "write_tree", crash)
    with pytest.raises(CheckpointError, match="No space left on device"):
        checkpointer.save(_state(1.0), step=1, attach={"replay": str(replay)})
    assert (replay / "chunks").read_bytes() == b"x" * 1000  # given back, not lost with the failed checkpoint
    assert checkpointer.list_checkpoints() == []
    monkeypatch.undo()

    path = checkpointer.save(_state(1.0), step=1, attach={"replay": str(replay)})
    assert not replay.exists() and (tmp_path / "ckpts" / "ckpt-1" / "replay" / "chunks").exists()
    assert checkpointer.restore_latest()[1] == 1
    with open(os.path.join(path, "replay", "chunks"), "r+b") as f:
        f.truncate(10)
    with pytest.warns(CorruptCheckpointWarning, match="corrupt or truncated"), pytest.raises(CheckpointError):
        checkpointer.restore_latest()


def test_a_dqn_state_saved_before_the_shared_value_learning_state_still_loads():
    """DQN's state moved to acme.jax.value_learning.TargetNetworkState (same fields); checkpoints written
    before name it agents.dqn.learning:TrainingState, which still resolves to the same type."""
    learner = _make_learner(0)
    structure, leaves = tree_structure.encode(learner.save())
    assert structure["namedtuple"] == "acme.jax.value_learning:TargetNetworkState"
    old = dict(structure, namedtuple="agents.dqn.learning:TrainingState")
    restored = tree_structure.decode(old, leaves)
    assert type(restored) is dqn_learning.TrainingState
    fresh = _make_learner(1)
    fresh.restore(restored)
    for a, b in zip(jax.tree.leaves(learner.save()), jax.tree.leaves(fresh.save())):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


class _Old(NamedTuple):
    w: Any
    step: Any


class _Renamed(NamedTuple):
    w: Any
    step: Any


def test_signatures_match_ignores_namedtuple_names_but_not_shapes():
    old = tree_signature(_Old(np.zeros((2, 3), np.float32), 0))
    assert signatures_match(old, tree_signature(_Renamed(np.zeros((2, 3), np.float32), 0)))
    assert not signatures_match(old, tree_signature(_Renamed(np.zeros((3, 3), np.float32), 0)))
    assert not signatures_match(old, tree_signature(_Renamed(np.zeros((2, 3), np.float64), 0)))
    assert not signatures_match(old, tree_signature((np.zeros((2, 3), np.float32), 0)))  # a tuple, not a NamedTuple
    assert not signatures_match(None, old)
