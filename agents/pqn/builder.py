"""PQN on the shared rollout builder, with an epsilon-greedy policy over its Q-values."""

from __future__ import annotations

import distrax
import jax
import jax.numpy as jnp
import numpy as np

from acme import specs
from acme.agents import exploration
from acme.agents.q_learning import QNetworks, check_q_networks_match
from acme.agents.rollout_builder import RolloutBuilder
from acme.jax.actors import ExtrasPolicy
from acme.jax.running_statistics import ObservationNormalizer
from agents.pqn.config import PQNConfig
from agents.pqn.learning import PQN_LEARNER


class PQNBuilder(RolloutBuilder):
    """PQN: rollouts through the queue (as PPO's), acting epsilon-greedily on the Q-network; per-actor epsilons in
    distributed runs. Each training step stores the learner step of the parameters that chose it."""

    config_class = PQNConfig
    learner = PQN_LEARNER

    def for_actor(self, actor_id: int, num_actors: int) -> "PQNBuilder":
        """Actor ``actor_id`` of ``num_actors`` explores with its own final epsilon (see EpsilonGreedyConfig)."""
        config = exploration.for_actor(self.config, actor_id, num_actors)
        return self if config is self.config else PQNBuilder(config)

    def check_networks(self, networks: QNetworks, environment_spec: specs.EnvironmentSpec) -> None:
        check_q_networks_match(networks, environment_spec)

    def extras_spec(self, environment_spec: specs.EnvironmentSpec) -> dict:
        """What the policy stores with each step: the learner step of the acting parameters."""
        return {"policy_step": specs.Array((), np.int32)}

    def make_policy(self, networks: QNetworks, environment_spec: specs.EnvironmentSpec, evaluation: bool = False):
        self.check_networks(networks, environment_spec)
        config = self.config
        normalizer = ObservationNormalizer(config.normalize_observations)
        action_dtype = environment_spec.actions.dtype

        def policy(params, key, observation, step):
            q_params, statistics, learner_step = params
            observations = normalizer.apply(statistics, jax.tree.map(lambda x: x[None], observation))
            q_values = networks.q_network.apply(q_params, observations)[0]
            epsilon = config.evaluation_epsilon if evaluation else exploration.linear_epsilon(config, step)
            action = distrax.EpsilonGreedy(q_values, epsilon).sample(seed=key).astype(action_dtype)
            return action if evaluation else (action, {"policy_step": jnp.asarray(learner_step, jnp.int32)})

        return policy if evaluation else ExtrasPolicy(policy)
