"""TD3+BC, IQL and CQL learn Pendulum from a small mixed dataset: 20 episodes whose actions go from a scripted
expert's (about -210 per episode) to uniformly random ones (about -1,200), about -780 on average."""

from __future__ import annotations

import numpy as np
import pytest

from acme import specs
from acme.datasets.minari_format import EpisodeRecorder, write_dataset
from acme.environments import make_environment
from acme.experiments import RunOptions, run
from acme.testing.experts import pendulum_expert
from baselines import registry

PENDULUM = "gymnasium:Pendulum-v1"


@pytest.fixture(scope="module")
def mixed_dataset(tmp_path_factory) -> tuple[str, float]:
    environment = make_environment(PENDULUM, seed=3, canonical_actions=True)
    rng = np.random.default_rng(0)
    recorder = EpisodeRecorder()
    for episode in range(20):
        random_share = episode / 20
        timestep = environment.reset()
        recorder.observe_first(timestep)
        while not timestep.last():
            if rng.random() < random_share:
                action = rng.uniform(-1.0, 1.0, (1,)).astype(np.float32)
            else:
                action = pendulum_expert(timestep.observation)
            timestep = environment.step(action)
            recorder.observe(action, timestep)
    directory = str(tmp_path_factory.mktemp("datasets") / "pendulum-mixed")
    write_dataset(directory, recorder.episodes, specs.make_environment_spec(environment), PENDULUM)
    return directory, float(np.mean([e.episode_return for e in recorder.episodes]))


@pytest.mark.parametrize(
    "agent, overrides, steps",
    [
        ("td3_bc", {}, 15_000),
        ("iql", {}, 10_000),
        # CQL's evaluations every 2,000 steps (seed 0, 2026-12-01): -1,254 to -745 until 10k, -279 at 12k, -247 at 14k.
        ("cql", {"num_action_samples": 4}, 14_000),
    ],
)
def test_an_offline_agent_beats_the_datasets_average_return(mixed_dataset, agent, overrides, steps):
    directory, data_return = mixed_dataset
    assert -900 < data_return < -650
    small = dict(policy_hidden_sizes=(64, 64), critic_hidden_sizes=(64, 64), num_sgd_steps_per_step=10)
    experiment = registry.make_experiment_config(
        agent,
        PENDULUM,
        seed=0,
        num_eval_episodes=10,
        max_steps=steps,
        eval_every=steps // 2,
        config_overrides={**small, **overrides},
    )
    result = run(experiment, RunOptions(dataset=str(directory)), progress=False)
    final = result.evaluations[-1].mean_return
    assert final > data_return + 300, (agent, final, data_return)
