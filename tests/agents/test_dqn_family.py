"""The DQN family's members besides DQN (Munchausen DQN, C51 and Rainbow's configuration of it, QR-DQN): their
losses against hand computations, their outputs read as Q-values, their configs, and each learning CartPole."""

from __future__ import annotations

import jax
import numpy as np
import pytest
import rlax

from acme import types
from acme.experiments import run_experiment
from acme.testing import fakes
from acme.utils import loggers
from agents.c51 import RAINBOW
from agents.mdqn.learning import make_losses as munchausen_losses
from baselines import registry

SPEC = fakes.discrete_spec(obs_shape=(4,), num_actions=3)


def _transitions(batch: int = 5) -> types.Transition:
    rng = np.random.default_rng(0)
    return types.Transition(
        observation=rng.normal(size=(batch, 4)).astype(np.float32),
        action=rng.integers(0, 3, size=batch).astype(np.int32),
        reward=rng.normal(size=batch).astype(np.float32),
        discount=np.array([0.9, 0.0, 0.9, 0.5, 0.9], np.float32)[:batch],
        next_observation=rng.normal(size=(batch, 4)).astype(np.float32),
    )


def _parts(agent: str, **fields):
    entry = registry.get_agent(agent)
    config = entry.make_config(hidden_sizes=(8,), **fields)
    networks = entry.make_networks(SPEC, config)
    return config, networks, networks.init(jax.random.PRNGKey(0)), networks.init(jax.random.PRNGKey(1))


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def test_the_munchausen_target_is_the_soft_target_plus_the_clipped_scaled_log_policy():
    config, networks, params, target = _parts("mdqn", entropy_temperature=0.5)
    t = _transitions()
    losses, priorities, _ = munchausen_losses(networks, config)(params, target, t)
    apply = lambda p, o: np.asarray(networks.q_network.apply(p, o), np.float64)  # noqa: E731
    q, q_target, q_next = apply(params, t.observation), apply(target, t.observation), apply(target, t.next_observation)
    tau, alpha, rows = 0.5, config.munchausen_coefficient, np.arange(5)
    bonus = alpha * np.clip(tau * _log_softmax(q_target / tau)[rows, t.action], config.clip_value_min, 0.0)
    log_pi_next = _log_softmax(q_next / tau)
    soft_next = (np.exp(log_pi_next) * (q_next - tau * log_pi_next)).sum(-1)
    td = t.reward + bonus + t.discount * soft_next - q[rows, t.action]
    np.testing.assert_allclose(priorities, np.abs(td), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(losses, rlax.huber_loss(td, config.huber_loss_delta), rtol=1e-5, atol=1e-5)
    assert (bonus <= 0).all() and (bonus >= alpha * config.clip_value_min).all()


def test_distributions_are_read_as_q_values_and_the_greedy_policy_acts_on_them():
    config, networks, params, _ = _parts("c51", num_atoms=11, v_min=-5.0, v_max=5.0)
    logits = networks.q_network.apply(params, _transitions().observation)
    assert logits.shape == (5, 3, 11)
    builder = registry.get_agent("c51").make_builder(config)
    expected = (jax.nn.softmax(logits, -1) * np.linspace(-5.0, 5.0, 11)).sum(-1)
    np.testing.assert_allclose(builder.q_values(logits), expected, rtol=1e-6)
    policy = builder.make_policy(networks, SPEC, evaluation=True)
    observation = _transitions().observation[0]
    assert int(policy(params, jax.random.PRNGKey(0), observation, 0)) == int(np.argmax(expected[0]))
    config, networks, params, _ = _parts("qrdqn", num_quantiles=8)
    quantiles = networks.q_network.apply(params, _transitions().observation)
    assert quantiles.shape == (5, 3, 8)
    np.testing.assert_allclose(
        registry.get_agent("qrdqn").make_builder(config).q_values(quantiles), quantiles.mean(-1), rtol=1e-6
    )


@pytest.mark.parametrize(
    "agent, fields, message",
    [
        ("c51", dict(v_min=1.0, v_max=1.0), "v_min (1.0) must be < v_max (1.0)"),
        ("c51", dict(num_atoms=1), "num_atoms must be >= 2"),
        ("qrdqn", dict(num_quantiles=0), "num_quantiles must be an integer >= 1"),
        ("qrdqn", dict(huber_param=-1.0), "huber_param must be >= 0"),
        ("mdqn", dict(munchausen_coefficient=1.5), "munchausen_coefficient must be in [0, 1]"),
        ("mdqn", dict(clip_value_min=0.0), "clip_value_min must be < 0"),
    ],
)
def test_configs_refuse_what_makes_no_sense(agent, fields, message):
    with pytest.raises(ValueError, match="") as error:
        registry.get_agent(agent).make_config(**fields)
    assert message in str(error.value)


@pytest.mark.slow
@pytest.mark.parametrize(
    "agent, overrides",
    [("mdqn", {}), ("c51", {}), ("c51", RAINBOW), ("qrdqn", {})],
    ids=["mdqn", "c51", "rainbow", "qrdqn"],
)
def test_each_member_solves_cartpole(agent, overrides):
    """The registered CartPole baseline (20-step returns; C51's support [0, 100]) reaches a mean greedy return of
    475 over 10 episodes within 60,000 steps, seed 0."""
    config = registry.make_experiment_config(
        agent,
        "gymnasium:CartPole-v1",
        seed=0,
        max_steps=60_000,
        eval_every=2_500,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
        config_overrides=overrides,
    )
    result = run_experiment(config, progress=False, stop_at_return=475.0)
    curve = [(e.actor_steps, round(e.mean_return, 1)) for e in result.evaluations]
    assert result.first_reaching(475.0) is not None, f"{agent} never reached 475 on CartPole: {curve}"
