"""Datasets written in Minari's format, read back by Minari's own library, for every environment family."""

from __future__ import annotations

import os

import jax
import minari
import numpy as np
import pytest

from acme import specs
from acme.datasets.minari_format import EpisodeRecorder, check_spec, read_dataset, write_dataset
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
    with pytest.raises(FileNotFoundError, match=r"No Minari dataset at .*nowhere: expected .*data/metadata.json"):
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
