"""U fused updates in one jitted call equal U single updates on the same batches, for every agent.

Also: a NaN in the middle of a fused call is reported at its own learner step,
and prioritized DQN receives the priorities of every one of the U batches.
"""

from __future__ import annotations

import itertools

import jax
import numpy as np
import pytest

from acme import specs, types
from acme.replay.local import ReplaySample, SampleInfo
from acme.testing import fakes
from acme.utils import loggers
from baselines import registry

U = 4
TINY = {
    "dqn": dict(hidden_sizes=(16,), target_update_period=2),  # a target copy inside the fused call
    "mdqn": dict(hidden_sizes=(16,), target_update_period=2),
    "c51": dict(hidden_sizes=(16,), target_update_period=2, num_atoms=11, prioritized_replay=True),
    "qrdqn": dict(hidden_sizes=(16,), target_update_period=2, num_quantiles=8),
    "sac": dict(policy_hidden_sizes=(16,), critic_hidden_sizes=(16,)),
    "td3": dict(policy_hidden_sizes=(16,), critic_hidden_sizes=(16,), policy_delay=2),
    "d4pg": dict(policy_hidden_sizes=(16,), critic_hidden_sizes=(16,), num_atoms=11, vmin=-10.0, vmax=10.0),
    "mpo": dict(policy_hidden_sizes=(16,), critic_hidden_sizes=(16,), num_samples=4),
    "bc": dict(hidden_sizes=(16,), continuous_loss="log_likelihood"),
    "td3_bc": dict(policy_hidden_sizes=(16,), critic_hidden_sizes=(16,), policy_delay=2),
    "iql": dict(policy_hidden_sizes=(16,), critic_hidden_sizes=(16,)),
    "cql": dict(policy_hidden_sizes=(16,), critic_hidden_sizes=(16,), num_action_samples=3),
}


def _spec(agent: str) -> specs.EnvironmentSpec:
    if agent in ("dqn", "mdqn", "c51", "qrdqn"):
        return fakes.discrete_spec(obs_shape=(4,), num_actions=2)
    return fakes.continuous_spec(obs_shape=(3,), action_dim=2)


def _batches(spec: specs.EnvironmentSpec, count: int, batch_size: int = 16, nan_reward_at: int = -1) -> list:
    rng = np.random.default_rng(1)
    batches = []
    for i in range(count):
        if isinstance(spec.actions, specs.DiscreteArray):
            action = rng.integers(0, spec.actions.num_values, size=batch_size).astype(np.int32)
        else:
            action = rng.uniform(-1, 1, size=(batch_size, *spec.actions.shape)).astype(np.float32)
        reward = rng.normal(size=batch_size).astype(np.float32)
        if i == nan_reward_at:
            reward[:] = np.nan
        data = types.Transition(
            observation=rng.normal(size=(batch_size, *spec.observations.shape)).astype(np.float32),
            action=action,
            reward=reward,
            discount=np.full(batch_size, 0.9, np.float32),
            next_observation=rng.normal(size=(batch_size, *spec.observations.shape)).astype(np.float32),
        )
        info = SampleInfo(
            key=np.arange(i * batch_size, (i + 1) * batch_size, dtype=np.uint64),
            probability=rng.uniform(0.01, 0.1, size=batch_size),
            table_size=np.full(batch_size, 64),
            priority=np.ones(batch_size),
            times_sampled=np.ones(batch_size, np.int32),
        )
        batches.append(ReplaySample(info, data))
    return batches


def _stack(batches: list) -> ReplaySample:
    return jax.tree.map(lambda *xs: np.stack(xs), *batches)


def _learner(agent: str, iterator, num_updates: int, replay_client=None, **overrides):
    entry = registry.get_agent(agent)
    config = entry.make_config(**{**TINY[agent], **overrides, "num_sgd_steps_per_step": num_updates})
    spec = _spec(agent)
    builder = entry.make_builder(config)
    return builder.make_learner(
        jax.random.PRNGKey(3),
        entry.make_networks(spec, config),
        iterator,
        lambda label, steps_key=None: loggers.NoOpLogger(),
        spec,
        replay_client,
    )


@pytest.mark.parametrize("agent", sorted(TINY))
def test_fused_updates_equal_single_updates(agent):
    batches = _batches(_spec(agent), 2 * U)
    single = _learner(agent, iter(batches), 1)
    fused = _learner(agent, iter([_stack(batches[:U]), _stack(batches[U:])]), U)
    for _ in range(2 * U):
        single.step()
    fused.step()
    fused.step()
    assert single.num_steps == fused.num_steps == 2 * U
    one, many = single.save(), fused.save()
    assert jax.tree.structure(one) == jax.tree.structure(many)
    for a, b in zip(jax.tree.leaves(one), jax.tree.leaves(many)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=1e-6)


def test_a_nan_inside_a_fused_call_is_reported_at_its_own_step():
    batches = _batches(_spec("sac"), U, nan_reward_at=2)
    learner = _learner("sac", itertools.repeat(_stack(batches)), U)
    with pytest.raises(FloatingPointError, match="SAC critic_loss became nan at learner step 3"):
        learner.step()


class _RecordingReplay:
    def __init__(self):
        self.updates = {}

    def mutate_priorities(self, table, updates):
        self.updates.update(updates)


def test_prioritized_dqn_writes_the_priorities_of_every_fused_batch():
    batches = _batches(_spec("dqn"), U)
    single_replay, fused_replay = _RecordingReplay(), _RecordingReplay()
    single = _learner("dqn", iter(batches), 1, single_replay, prioritized_replay=True)
    fused = _learner("dqn", iter([_stack(batches)]), U, fused_replay, prioritized_replay=True)
    for _ in range(U):
        single.step()
    fused.step()
    assert sorted(fused_replay.updates) == list(range(U * 16))
    np.testing.assert_allclose(
        [fused_replay.updates[k] for k in range(U * 16)], [single_replay.updates[k] for k in range(U * 16)], rtol=1e-5
    )


def test_num_sgd_steps_per_step_must_be_positive():
    with pytest.raises(ValueError, match="num_sgd_steps_per_step must be an integer >= 1"):
        registry.get_agent("dqn").make_config(num_sgd_steps_per_step=0)
