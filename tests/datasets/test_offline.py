"""A recorded dataset as an agent's replay: the agent's own adder makes its items (n-step returns included)."""

from __future__ import annotations

import numpy as np
import pytest

from acme import specs
from acme.datasets.minari_format import Dataset, Episode
from acme.datasets.offline import dataset_replay
from agents import dqn, ppo, r2d2


def _episode(num_steps: int, terminated: bool) -> Episode:
    ends = np.arange(num_steps) == num_steps - 1
    return Episode(
        observations=np.repeat(np.arange(num_steps + 1, dtype=np.float32)[:, None], 4, axis=1),  # obs t is all t
        actions=np.arange(num_steps, dtype=np.int64) % 2,
        rewards=np.arange(1, num_steps + 1, dtype=np.float64),  # r_t = t + 1
        terminations=ends & terminated,
        truncations=ends & (not terminated),
    )


SPEC = specs.EnvironmentSpec(
    observations=specs.Array((4,), np.float32),
    actions=specs.DiscreteArray(2, dtype=np.int64),
    rewards=specs.Array((), np.float32),
    discounts=specs.BoundedArray((), np.float32, 0.0, 1.0),
)


@pytest.mark.parametrize("terminated", [True, False])
def test_a_dataset_becomes_the_n_step_transitions_the_agents_adder_makes(terminated):
    """Three-step returns at discount 0.5 from a 5-step episode: each item's reward, discount and next observation
    by hand; a termination zeroes the discount of the items that reach it, a truncation keeps it."""
    builder = dqn.DQNBuilder(dqn.DQNConfig(n_step=3, discount=0.5))
    networks = dqn.make_networks(SPEC)
    policy = builder.make_policy(networks, SPEC)
    replay = dataset_replay(builder, SPEC, policy, Dataset([_episode(5, terminated)], {}))
    observation, action, reward, discount, next_observation = replay.table("priority_table").save()["columns"]
    assert len(reward) == 5
    rewards = np.arange(1, 6, dtype=np.float64)
    for t in range(5):
        window = rewards[t : t + 3]
        expected_reward = sum(0.5**k * r for k, r in enumerate(window))
        reaches_end = t + 3 >= 5
        expected_discount = 0.0 if (reaches_end and terminated) else 0.5 ** len(window)
        np.testing.assert_allclose(reward[t], expected_reward, rtol=1e-6)
        np.testing.assert_allclose(discount[t], expected_discount, rtol=1e-6)
        assert observation[t][0] == t and next_observation[t][0] == min(t + 3, 5) and action[t] == t % 2


def test_an_agent_that_learns_from_rollout_queues_is_refused():
    builder = ppo.PPOBuilder(ppo.PPOConfig())
    networks = ppo.make_networks(SPEC)
    with pytest.raises(ValueError, match="PPO learns on-policy from a rollout queue.*bc, cql, td3_bc, iql"):
        dataset_replay(builder, SPEC, builder.make_policy(networks, SPEC), Dataset([_episode(5, True)], {}))


def test_a_recurrent_agent_is_refused():
    builder = r2d2.R2D2Builder(r2d2.R2D2Config())
    policy = builder.make_policy(r2d2.make_networks(SPEC), SPEC)
    with pytest.raises(ValueError, match="R2D2 learns from sequences that carry its recurrent state"):
        dataset_replay(builder, SPEC, policy, Dataset([_episode(5, True)], {}))
