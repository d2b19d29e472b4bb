"""BC: its losses against hand computations, and learning from small datasets of scripted experts."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from acme import specs, types
from acme.datasets.minari_format import write_dataset
from acme.experiments import RunOptions, run
from acme.testing.experts import cartpole_expert, expert_episodes, pendulum_expert
from agents import bc
from agents.bc.learning import make_loss
from baselines import registry

DISCRETE = specs.EnvironmentSpec(
    observations=specs.Array((3,), np.float32),
    actions=specs.DiscreteArray(4, dtype=np.int64),
    rewards=specs.Array((), np.float32),
    discounts=specs.BoundedArray((), np.float32, 0.0, 1.0),
)
CONTINUOUS = DISCRETE._replace(actions=specs.BoundedArray((2,), np.float32, -1.0, 1.0))


def _batch(actions) -> types.Transition:
    observations = jnp.asarray(np.random.default_rng(0).normal(size=(5, 3)), jnp.float32)
    return types.Transition(observations, jnp.asarray(actions), jnp.zeros(5), jnp.ones(5), observations)


def test_the_discrete_loss_is_the_recorded_actions_negative_log_softmax():
    networks = bc.make_networks(DISCRETE, (8,))
    params = networks.init(jax.random.PRNGKey(0))
    actions = np.array([0, 3, 1, 1, 2])
    batch = _batch(actions)
    loss, metrics = make_loss(networks, bc.BCConfig())(params, batch)
    logits = np.asarray(networks.policy.apply(params, batch.observation), np.float64)
    log_softmax = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(loss, -np.mean(log_softmax[np.arange(5), actions]), rtol=1e-5)
    np.testing.assert_allclose(metrics["accuracy"], np.mean(logits.argmax(axis=1) == actions))


@pytest.mark.parametrize("continuous_loss", ["squared_error", "log_likelihood"])
def test_the_continuous_losses_by_hand(continuous_loss):
    networks = bc.make_networks(CONTINUOUS, (8,))
    params = networks.init(jax.random.PRNGKey(1))
    actions = np.random.default_rng(1).uniform(-1, 1, (5, 2)).astype(np.float32)
    batch = _batch(actions)
    loss, _ = make_loss(networks, bc.BCConfig(continuous_loss=continuous_loss))(params, batch)
    mean, std = (np.asarray(x, np.float64) for x in networks.policy.apply(params, batch.observation))
    if continuous_loss == "squared_error":
        expected = np.mean(np.sum((mean - actions) ** 2, axis=1))
    else:
        log_density = -0.5 * ((actions - mean) / std) ** 2 - np.log(std) - 0.5 * np.log(2 * np.pi)
        expected = -np.mean(np.sum(log_density, axis=1))
    np.testing.assert_allclose(loss, expected, rtol=1e-5)


def _expert_dataset(directory, environment_id: str, expert, num_episodes: int, canonical: bool) -> str:
    episodes, spec = expert_episodes(environment_id, expert, num_episodes, seed=7, canonical_actions=canonical)
    expert_return = np.mean([e.episode_return for e in episodes])
    write_dataset(str(directory), episodes, spec, environment_id)
    return str(directory), expert_return


@pytest.mark.parametrize(
    "environment_id, expert, num_episodes, threshold",
    [
        ("gymnasium:CartPole-v1", cartpole_expert, 5, 475.0),  # the expert holds 500
        ("gymnasium:Pendulum-v1", pendulum_expert, 20, None),  # 90% of the expert's return (about -210)
    ],
)
def test_bc_learns_from_a_small_dataset_of_an_expert(tmp_path, environment_id, expert, num_episodes, threshold):
    canonical = environment_id.endswith("Pendulum-v1")
    directory, expert_return = _expert_dataset(tmp_path / "expert", environment_id, expert, num_episodes, canonical)
    experiment = registry.make_experiment_config(
        "bc", environment_id, seed=0, num_eval_episodes=10, max_steps=2_000, eval_every=1_000
    )
    result = run(experiment, RunOptions(dataset=str(directory)), progress=False)
    final = result.evaluations[-1].mean_return
    if threshold is None:  # a negative return: 90% of the expert's means at most 1/0.9 times as far below zero
        threshold = expert_return / 0.9
    assert final >= threshold, (final, expert_return)
