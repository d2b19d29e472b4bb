"""``max_abs_reward``: the rewards an agent stores are clipped, on the host adders and in the on-device loop; what
the environment reports (and the evaluator plays on) is not."""

from __future__ import annotations

import dm_env
import jax
import numpy as np
import pytest

from acme import specs
from acme.adders.base import Adder
from acme.adders.reward_clipping import ClippedRewardAdder
from acme.anakin.loop import AnakinAgent
from acme.environments.jax_native import CartPole
from acme.replay.local_client import LocalReplay
from baselines import registry


class Recording(Adder):
    def __init__(self):
        self.calls = []

    def add_first(self, timestep):
        self.calls.append(("first", timestep))

    def add(self, action, next_timestep, extras=()):
        self.calls.append(("add", next_timestep, extras))

    def reset(self):
        self.calls.append(("reset",))


def test_the_adder_stores_clipped_rewards_and_passes_everything_else_on():
    inner = Recording()
    adder = ClippedRewardAdder(inner, 1.0)
    first = dm_env.restart(np.ones(3, np.float32))
    adder.add_first(first)
    adder.add(np.int32(2), dm_env.transition(np.float32(-7.0), np.zeros(3, np.float32)), {"q": 1})
    adder.add(np.int32(2), dm_env.termination(np.float32(0.25), np.zeros(3, np.float32)))
    adder.reset()
    assert inner.calls[0] == ("first", first) and inner.calls[-1] == ("reset",)
    (_, clipped, extras), (_, kept, _) = inner.calls[1], inner.calls[2]
    assert clipped.reward == -1.0 and clipped.reward.dtype == np.float32 and extras == {"q": 1}
    assert kept.reward == 0.25 and kept.last()
    with pytest.raises(ValueError, match="max_abs_reward must be > 0"):
        ClippedRewardAdder(inner, 0.0)


@pytest.mark.parametrize("agent", ["dqn", "r2d2", "ppo", "impala"])
def test_every_atari_agent_takes_the_field_and_its_builder_clips(agent):
    entry = registry.get_agent(agent)
    spec = specs.make_environment_spec(registry.make_agent_environment(agent, "gymnasium:CartPole-v1"))

    def adder(**fields):
        config = entry.make_config(**fields)
        builder = entry.make_builder(config)
        policy = builder.make_policy(entry.make_networks(spec, config), spec)
        return builder.make_adder(LocalReplay(builder.make_replay_tables(spec, policy)), spec, policy)

    assert isinstance(adder(max_abs_reward=1.0), ClippedRewardAdder)
    assert not isinstance(adder(), ClippedRewardAdder)
    for bad in (0.0, -1.0, True):
        with pytest.raises(ValueError, match="max_abs_reward must be None"):
            entry.make_config(max_abs_reward=bad)


def test_the_on_device_loop_stores_clipped_rewards_too():
    config = registry.make_agent_config(
        "dqn", "jax:CartPole-v1", {"max_abs_reward": 0.5, "min_replay_size": 10_000, "n_step": 1}
    )
    builder = registry.get_agent("dqn").make_builder(config)
    environment = CartPole()
    agent = AnakinAgent(builder, registry.get_agent("dqn").make_networks(environment.spec(), config), environment, 4)
    carry, _ = jax.jit(agent.iterate)(agent.init(jax.random.PRNGKey(0)))
    replay = carry.storage[1]
    rewards = np.asarray(replay.items.reward)[: int(replay.size)]
    assert len(rewards) > 0 and rewards.max() == 0.5  # CartPole's reward is 1 each step
