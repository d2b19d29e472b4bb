"""Datasets written in Minari's format, read back by Minari's own library, for every environment family."""

from __future__ import annotations

import os
import shutil

import jax
import minari
import numpy as np
import pytest

from acme import specs
from acme.datasets.minari_format import (
    DatasetError,
    EpisodeRecorder,
    check_spec,
    read_dataset,
    read_metadata,
    stream_episodes,
    write_dataset,
)
from acme.environments import make_environment

FAMILIES = [
    "gymnasium:CartPole-v1",
    "gymnasium:Pendulum-v1",
    "dm_control:cartpole/swingup",  # a dict of observations
    "bsuite:catch/0",
    "atari:Pong?max_frames=200",  # uint8 pixels, stored without loss
    "memory:CartPole-v1",
    "jax:MinAtar-Breakout",
]


def random_episodes(environment_id: str, num_episodes: int, seed: int = 0, step_limit: int | None = None):
    environment = make_environment(environment_id, seed=seed, step_limit=step_limit)
    spec = specs.make_environment_spec(environment)
    rng = np.random.default_rng(seed)
    recorder = EpisodeRecorder()
    for _ in range(num_episodes):
        timestep = environment.reset()
        recorder.observe_first(timestep)
        while not timestep.last():
            if isinstance(spec.actions, specs.DiscreteArray):
                action = np.asarray(rng.integers(spec.actions.num_values), spec.actions.dtype)
            else:
                action = rng.uniform(spec.actions.minimum, spec.actions.maximum).astype(spec.actions.dtype)
            timestep = environment.step(action)
            recorder.observe(action, timestep)
    environment.close()
    return recorder.episodes, spec


@pytest.mark.parametrize("environment_id", FAMILIES)
def test_episodes_of_every_family_round_trip_through_minaris_own_reader(environment_id, tmp_path, monkeypatch):
    step_limit = 60 if environment_id.startswith("dm_control") else None
    episodes, spec = random_episodes(environment_id, 2, step_limit=step_limit)
    directory = str(tmp_path / "datasets" / "acme" / "random-v0")  # where Minari looks for the id acme/random-v0
    write_dataset(directory, episodes, spec, environment_id, {"acme_agent": "random"})

    # Minari's own reader, from the directory and by id under MINARI_DATASETS_PATH (never downloading).
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "datasets"))
    by_id = minari.load_dataset("acme/random-v0", download=False)
    for dataset in (minari.MinariDataset(os.path.join(directory, "data")), by_id):
        assert dataset.total_episodes == 2 and dataset.total_steps == sum(len(e) for e in episodes)
        for written, read in zip(episodes, dataset.iterate_episodes()):
            jax.tree.map(np.testing.assert_array_equal, read.observations, written.observations)
            np.testing.assert_array_equal(read.actions, written.actions)
            np.testing.assert_array_equal(read.rewards, written.rewards)
            np.testing.assert_array_equal(read.terminations, written.terminations)
            np.testing.assert_array_equal(read.truncations, written.truncations)

    ours = read_dataset(directory)
    check_spec(ours, spec, directory)
    assert ours.environment_id == environment_id and ours.metadata["acme_agent"] == "random"
    returns = [e.episode_return for e in episodes]
    assert ours.metadata["acme_returns"]["mean"] == pytest.approx(np.mean(returns))
    for written, read in zip(episodes, ours.episodes):
        dtypes = jax.tree.map(lambda a, b: (a.dtype, b.dtype), read.observations, written.observations)
        assert all(a == b for a, b in jax.tree.leaves(dtypes, is_leaf=lambda x: isinstance(x, tuple)))
        assert read.actions.dtype == written.actions.dtype
        assert read.terminations[-1] == (written.terminations[-1]) and read.terminations[:-1].sum() == 0


def test_nothing_recorded_is_overwritten_and_a_missing_dataset_is_named(tmp_path):
    episodes, spec = random_episodes("gymnasium:CartPole-v1", 1)
    directory = str(tmp_path / "expert")
    write_dataset(directory, episodes, spec, "gymnasium:CartPole-v1")
    with pytest.raises(FileExistsError, match="already holds a dataset; write to a new directory"):
        write_dataset(directory, episodes, spec, "gymnasium:CartPole-v1")
    assert len(read_dataset(directory).episodes) == 1
    missing = r"No Minari dataset at .*nowhere: it does not exist; expected .*data/metadata.json"
    with pytest.raises(DatasetError, match=missing):
        read_dataset(str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="at least one finished episode"):
        write_dataset(str(tmp_path / "empty"), [], spec, "gymnasium:CartPole-v1")


def test_a_dataset_of_another_environment_is_refused_with_what_differs(tmp_path):
    episodes, spec = random_episodes("gymnasium:CartPole-v1", 1)
    write_dataset(str(tmp_path / "cartpole"), episodes, spec, "gymnasium:CartPole-v1")
    dataset = read_dataset(str(tmp_path / "cartpole"))
    acrobot = specs.make_environment_spec(make_environment("gymnasium:Acrobot-v1"))
    with pytest.raises(ValueError, match=r"its observations are \{'shape': \[4\].*the environment's \{'shape': \[6\]"):
        check_spec(dataset, acrobot, "D")
    pendulum = specs.make_environment_spec(make_environment("gymnasium:Pendulum-v1"))
    canonical = specs.make_environment_spec(make_environment("gymnasium:Pendulum-v1", canonical_actions=True))
    episodes, _ = random_episodes("gymnasium:Pendulum-v1", 1)
    write_dataset(str(tmp_path / "pendulum"), episodes, pendulum, "gymnasium:Pendulum-v1")
    with pytest.raises(
        ValueError, match=r"its actions are .*'minimum': \[-2.0\].*the environment's .*'minimum': \[-1.0\]"
    ):
        check_spec(read_dataset(str(tmp_path / "pendulum")), canonical, "D")


def _replace(path, make) -> None:
    os.remove(path)
    make(path)


DAMAGES = {  # what is done to a dataset's folder, and what the error then says
    "not a dataset": (lambda d: shutil.rmtree(os.path.join(d, "data")), r"No Minari dataset at .*: expected .*"),
    "truncated HDF5": (
        lambda d: os.truncate(os.path.join(d, "data", "main_data.hdf5"), 3000),
        r"main_data.hdf5 is not a readable HDF5 file \(.*truncated file.*\); .* record it again",
    ),
    "HDF5 file a FIFO": (
        lambda d: _replace(os.path.join(d, "data", "main_data.hdf5"), os.mkfifo),
        r"main_data.hdf5 cannot be read: .* is a FIFO .*; a dataset's main_data.hdf5 is a regular file",
    ),
    "HDF5 file a link to /dev/zero": (
        lambda d: _replace(os.path.join(d, "data", "main_data.hdf5"), lambda p: os.symlink("/dev/zero", p)),
        r"main_data.hdf5 cannot be read: .* is a symbolic link \(to '/dev/zero'\)",
    ),
    "metadata a FIFO": (
        lambda d: _replace(os.path.join(d, "data", "metadata.json"), os.mkfifo),
        r"metadata .*metadata.json cannot be read: .* is a FIFO",
    ),
    "metadata a link to /dev/zero": (
        lambda d: _replace(os.path.join(d, "data", "metadata.json"), lambda p: os.symlink("/dev/zero", p)),
        r"metadata .*metadata.json cannot be read: .* is a symbolic link \(to '/dev/zero'\)",
    ),
    "metadata too large": (
        lambda d: os.truncate(os.path.join(d, "data", "metadata.json"), 65 << 20),  # sparse: no disk used
        r"metadata .*metadata.json cannot be read: .* is 65.0 MiB, more than the 64.0 MiB",
    ),
    "metadata not JSON": (
        lambda d: open(os.path.join(d, "data", "metadata.json"), "w").write('{"total_steps": '),
        r"metadata .*metadata.json is not JSON \(.*\): a Minari dataset's metadata.json is a JSON object",
    ),
    "metadata of something else": (
        lambda d: open(os.path.join(d, "data", "metadata.json"), "w").write('{"format": "acme-tree"}'),
        r"metadata .*metadata.json lacks data_format, .*: it is not a Minari dataset's metadata.json",
    ),
}


@pytest.mark.timeout(60)  # a FIFO opened for reading would wait for a writer forever
@pytest.mark.parametrize("damage", DAMAGES)
def test_a_folder_without_a_readable_dataset_is_refused_with_what_is_wrong(damage, tmp_path):
    episodes, spec = random_episodes("gymnasium:CartPole-v1", 1)
    directory = str(tmp_path / "dataset")
    write_dataset(directory, episodes, spec, "gymnasium:CartPole-v1")
    make_damage, message = DAMAGES[damage]
    make_damage(directory)
    for read in (read_metadata, read_dataset, lambda d: next(stream_episodes(d))):
        with pytest.raises(DatasetError, match=message) as error:
            read(directory)
        assert str(tmp_path) in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(
    "environment_id", ["gymnasium:CartPole-v1", "gymnasium:Pendulum-v1", "bsuite:catch/0", "atari:Pong?max_frames=200"]
)
def test_minaris_spaces_are_those_of_the_stored_data_and_the_environments_spec(environment_id, tmp_path):
    """Discrete actions (int32 in the spec) are stored as int64, the dtype of Minari's Discrete space, and read
    back by this library in the spec's dtype; a Box has the spec's bounds, -inf and inf where it has none."""
    episodes, spec = random_episodes(environment_id, 2)
    directory = str(tmp_path / "dataset")
    write_dataset(directory, episodes, spec, environment_id)
    dataset = minari.MinariDataset(os.path.join(directory, "data"))
    for episode in dataset.iterate_episodes():
        assert episode.actions.dtype == dataset.action_space.dtype
        assert episode.observations.dtype == dataset.observation_space.dtype
        assert all(dataset.action_space.contains(action) for action in episode.actions)
        assert all(dataset.observation_space.contains(observation) for observation in episode.observations)
    for space, part in ((dataset.observation_space, spec.observations), (dataset.action_space, spec.actions)):
        if isinstance(part, specs.DiscreteArray):
            assert space.n == part.num_values
        elif isinstance(part, specs.BoundedArray):
            np.testing.assert_array_equal(space.low, np.broadcast_to(part.minimum, part.shape))
            np.testing.assert_array_equal(space.high, np.broadcast_to(part.maximum, part.shape))
        else:
            assert np.all(space.low == -np.inf) and np.all(space.high == np.inf)
    for written, read in zip(episodes, read_dataset(directory).episodes):
        assert read.actions.dtype == written.actions.dtype == spec.actions.dtype
        np.testing.assert_array_equal(read.actions, written.actions)


def test_a_gymnasium_dataset_recovers_its_environment_and_others_say_why_not(tmp_path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path))
    episodes, spec = random_episodes("gymnasium:CartPole-v1", 1)
    write_dataset(str(tmp_path / "acme" / "cartpole-v0"), episodes, spec, "gymnasium:CartPole-v1")
    dataset = minari.load_dataset("acme/cartpole-v0", download=False)
    environment = dataset.recover_environment()
    assert environment.spec.id == "CartPole-v1"
    observation, _ = environment.reset(seed=0)
    assert observation.shape == dataset.observation_space.shape
    environment.step(next(dataset.iterate_episodes()).actions[0])
    environment.close()

    episodes, spec = random_episodes("bsuite:catch/0", 1)
    write_dataset(str(tmp_path / "acme" / "catch-v0"), episodes, spec, "bsuite:catch/0")
    dataset = minari.load_dataset("acme/catch-v0", download=False)
    assert dataset.storage.metadata["acme_env_spec"] == (
        "none: Minari's recover_environment() makes registered gymnasium environments only, and bsuite environments "
        "are not gymnasium environments; acme.environments.make_environment('bsuite:catch/0') makes it"
    )
    with pytest.raises(ValueError, match="env_spec is None"):
        dataset.recover_environment()
