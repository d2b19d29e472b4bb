"""Assembles DQN's replay, adder, actor, learner and policy."""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator

import distrax
import jax
import jax.numpy as jnp
import numpy as np

from acme import specs
from acme.agents.transition_builder import NStepTransitionBuilder
from acme.datasets import ReplaySample
from acme.jax.learner import SGDLearner
from acme.utils import counting, loggers
from agents.dqn.config import DQNConfig
from agents.dqn.learning import DQN_LEARNER
from agents.dqn.networks import DQNNetworks, check_networks_match


def linear_epsilon(config: DQNConfig, step: jnp.ndarray) -> jnp.ndarray:
    """Epsilon decayed linearly from ``epsilon_start`` to ``epsilon_end``."""
    if config.epsilon_decay_steps == 0:
        return jnp.asarray(config.epsilon_end, jnp.float32)
    fraction = jnp.clip(step / config.epsilon_decay_steps, 0.0, 1.0)
    return config.epsilon_start + fraction * (config.epsilon_end - config.epsilon_start)


class DQNBuilder(NStepTransitionBuilder):
    """Double DQN with n-step returns and optional prioritized replay."""

    config_class = DQNConfig

    def for_actor(self, actor_id: int, num_actors: int) -> "DQNBuilder":
        """Actor ``actor_id`` of ``num_actors`` explores with its own final epsilon (see DQNConfig)."""
        c = self.config
        if num_actors <= 1 or c.actor_epsilon_base is None:
            return self
        epsilon = c.actor_epsilon_base ** (1.0 + c.actor_epsilon_spread * actor_id / (num_actors - 1))
        return DQNBuilder(dataclasses.replace(c, epsilon_end=float(epsilon)))

    def make_learner(
        self,
        random_key: jax.Array,
        networks: DQNNetworks,
        dataset: Iterator[ReplaySample],
        logger_factory: loggers.LoggerFactory,
        environment_spec: specs.EnvironmentSpec,
        replay_client: Any | None = None,
        counter: counting.Counter | None = None,
    ) -> SGDLearner:
        """DQN's ``SGDLearner``; with prioritized replay, each fused batch's new priorities go to ``replay_client``."""
        check_networks_match(networks, environment_spec)
        config = self.config

        def write_priorities(sample, priorities: np.ndarray) -> None:
            if replay_client is not None:
                keys = np.asarray(sample.info.key).reshape(-1).tolist()
                replay_client.mutate_priorities(
                    config.replay_table_name,
                    updates=dict(zip(keys, np.asarray(priorities, np.float64).reshape(-1).tolist())),
                )

        return DQN_LEARNER.make_learner(
            networks,
            config,
            random_key,
            dataset,
            counter,
            logger_factory("learner", "learner_steps"),
            on_priorities=write_priorities,
        )

    def make_policy(self, networks: DQNNetworks, environment_spec: specs.EnvironmentSpec, evaluation: bool = False):
        check_networks_match(networks, environment_spec)
        config = self.config

        def policy(params, key, observation, step):
            q_values = networks.q_network.apply(params, jax.tree.map(lambda x: x[None], observation))[0]
            epsilon = config.evaluation_epsilon if evaluation else linear_epsilon(config, step)
            return distrax.EpsilonGreedy(q_values, epsilon).sample(seed=key)

        return policy
