"""Assembles DQN's replay, adder, actor, learner and policy."""

from __future__ import annotations

import distrax
import jax

from acme import specs
from acme.agents import exploration
from acme.agents.transition_builder import NStepTransitionBuilder
from agents.dqn.config import DQNConfig
from agents.dqn.learning import DQN_LEARNER
from agents.dqn.networks import DQNNetworks, check_networks_match


class DQNBuilder(NStepTransitionBuilder):
    """Double DQN with n-step returns and optional prioritized replay."""

    config_class = DQNConfig
    learner = DQN_LEARNER

    def for_actor(self, actor_id: int, num_actors: int) -> "DQNBuilder":
        """Actor ``actor_id`` of ``num_actors`` explores with its own final epsilon (see EpsilonGreedyConfig)."""
        config = exploration.for_actor(self.config, actor_id, num_actors)
        return self if config is self.config else DQNBuilder(config)

    def check_networks(self, networks, environment_spec: specs.EnvironmentSpec) -> None:
        check_networks_match(networks, environment_spec)

    def make_policy(self, networks: DQNNetworks, environment_spec: specs.EnvironmentSpec, evaluation: bool = False):
        self.check_networks(networks, environment_spec)
        config = self.config

        def policy(params, key, observation, step):
            q_values = networks.q_network.apply(params, jax.tree.map(lambda x: x[None], observation))[0]
            epsilon = config.evaluation_epsilon if evaluation else exploration.linear_epsilon(config, step)
            return distrax.EpsilonGreedy(q_values, epsilon).sample(seed=key)

        return policy
