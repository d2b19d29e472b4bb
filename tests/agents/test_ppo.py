"""PPO's own pieces: its config and the clipped surrogate objective (the rest: test_rollout_agents.py)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from acme.experiments import ExperimentConfig, run_experiment
from acme.testing import fakes
from acme.utils import loggers
from agents.ppo import AGENT, PPOConfig
from agents.ppo.learning import clip_epsilon_at, clipped_surrogate_loss, value_error


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("clip_epsilon", 0.0, "clip_epsilon must be > 0"),
        ("gae_lambda", 1.5, r"gae_lambda must be in \[0, 1\]"),
        ("num_epochs", 0, "num_epochs must be an integer >= 1"),
        ("num_minibatches", 3, r"num_minibatches \(3\) must divide batch_size \* unroll_length \(256\)"),
        ("value_coef", -1.0, "value_coef must be >= 0"),
        ("target_kl", -0.01, "target_kl must be >= 0"),
        ("value_clip", -0.2, "value_clip must be >= 0"),
        ("clip_epsilon_decays", True, "set learning_rate_decay_steps"),
    ],
)
def test_invalid_config_values_are_rejected(field, value, message):
    with pytest.raises(ValueError, match=message):
        PPOConfig(**{field: value})


def test_replace_keeps_validation():
    with pytest.raises(ValueError, match="clip_epsilon"):
        dataclasses.replace(PPOConfig(), clip_epsilon=-1.0)


def test_clipped_surrogate_matches_a_hand_computed_value():
    log_prob = jnp.log(jnp.array([1.5, 0.5, 1.1, 0.7]))  # ratios 1.5, 0.5, 1.1, 0.7 against log mu = 0
    advantage = jnp.array([2.0, 2.0, -1.0, -1.0])
    loss = clipped_surrogate_loss(log_prob, jnp.zeros(4), advantage, 0.2)
    # A > 0: -min(rho, clip(rho)) A = -(1.2 * 2, 0.5 * 2); A < 0: -min(rho A, clip(rho) A) = -(-1.1, -0.8).
    np.testing.assert_allclose(loss, [-2.4, -1.0, 1.1, 0.8], rtol=1e-6)


def test_the_clip_range_decays_to_zero_with_the_step_size_only_when_asked():
    # 10 epochs x 4 minibatches: 40 optimiser steps a learner step, so the 400-step decay lasts 10 learner steps.
    config = PPOConfig(
        clip_epsilon=0.2, num_epochs=10, num_minibatches=4, learning_rate_decay_steps=400, clip_epsilon_decays=True
    )
    epsilons = [float(clip_epsilon_at(config, jnp.asarray(step, jnp.int32))) for step in (0, 5, 9, 10, 50)]
    np.testing.assert_allclose(epsilons, [0.2, 0.1, 0.02, 0.0, 0.0], rtol=1e-6, atol=1e-7)
    assert clip_epsilon_at(dataclasses.replace(config, clip_epsilon_decays=False), jnp.asarray(5)) == 0.2


def test_the_clipped_value_error_is_the_larger_of_the_plain_and_the_clipped_errors():
    value, target, start = jnp.array([1.5, 1.5, 0.5, 1.1]), jnp.array([2.0, 1.0, 2.0, 0.0]), jnp.ones(4)
    # Clipped to [0.8, 1.2]: 1.2, 1.2, 0.8, 1.1; errors (plain, clipped): (0.25, 0.64), (0.25, 0.04), (2.25, 1.44),
    # (1.21, 1.21).
    np.testing.assert_allclose(value_error(value, target, start, 0.2), [0.64, 0.25, 2.25, 1.21], rtol=1e-6)
    np.testing.assert_allclose(value_error(value, target, (), 0.0), [0.25, 0.25, 2.25, 1.21], rtol=1e-6)


BOARD = fakes.discrete_spec(obs_shape=(6, 6, 2), num_actions=3)
SHARED = dict(
    torso="pooled", shared_torso=True, hidden_sizes=(8,), unroll_length=4, batch_size=2, num_epochs=2, num_minibatches=2
)


def test_a_shared_torso_is_one_set_of_parameters_that_both_heads_apply_and_learn():
    networks = AGENT.make_networks(BOARD, PPOConfig(**SHARED))
    params = networks.init(jax.random.PRNGKey(0))
    assert set(params) == {"network"} and any(name.startswith("torso_pooled") for name in params["network"])
    observations = jax.random.uniform(jax.random.PRNGKey(1), (5, 6, 6, 2))
    policy_output, value = networks.policy_and_value(params, observations)
    assert policy_output.shape == (5, 3) and value.shape == (5,)
    np.testing.assert_allclose(networks.policy.apply(params["network"], observations), policy_output, rtol=1e-6)
    np.testing.assert_allclose(networks.value.apply(params["network"], observations), value, rtol=1e-6)
    for head in (networks.policy, networks.value):  # the torso learns from either head's loss
        gradient = jax.grad(lambda p: jnp.sum(head.apply(p, observations) ** 2))(params["network"])
        torso = [leaf for name, leaves in gradient.items() if name.startswith("torso") for leaf in leaves.values()]
        assert all(float(jnp.abs(leaf).max()) > 0 for leaf in torso)


def test_ppo_with_a_shared_torso_and_value_clipping_runs_end_to_end():
    config = PPOConfig(**SHARED, value_clip=0.2)
    experiment = ExperimentConfig(
        builder=AGENT.make_builder(config),
        environment_factory=lambda seed: fakes.FakeEnvironment(BOARD, episode_length=10),
        network_factory=lambda spec: AGENT.make_networks(spec, config),
        seed=0,
        max_num_actor_steps=40,
        eval_every=20,
        num_eval_episodes=1,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
    )
    result = run_experiment(experiment, progress=False)
    assert result.actor_steps == 40 and result.learner_steps > 0


def test_a_shared_torso_is_refused_for_vectors_and_beside_an_lstm():
    with pytest.raises(ValueError, match="shared_torso shares a convolutional torso.*torso 'auto'"):
        AGENT.make_networks(fakes.discrete_spec(obs_shape=(3,), num_actions=2), PPOConfig(shared_torso=True))
    with pytest.raises(ValueError, match="already share the torso and the LSTM; shared_torso must stay False"):
        PPOConfig(shared_torso=True, lstm_size=8)
