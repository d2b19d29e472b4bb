"""PPO's policy and learner on the shared rollout builder (fixed-length rollouts through a queue)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from acme import specs
from acme.agents.rollout_builder import RolloutBuilder
from acme.jax.actors import ExtrasPolicy
from acme.jax.running_statistics import ObservationNormalizer
from agents.ppo.config import PPOConfig
from agents.ppo.learning import PPO_LEARNER
from agents.ppo.networks import PPONetworks


class PPOBuilder(RolloutBuilder):
    """PPO: samples from the policy (continuous actions clipped to [-1, 1] for the environment), acts with its
    mode in evaluation; every training step stores the behaviour log-probability, the sampled action and the
    learner step of the acting parameters."""

    config_class = PPOConfig
    learner = PPO_LEARNER

    def check_networks(self, networks: PPONetworks, environment_spec: specs.EnvironmentSpec) -> None:
        discrete = isinstance(environment_spec.actions, specs.DiscreteArray)
        if networks.discrete != discrete:
            raise ValueError(
                f"The PPO networks were built for {'discrete' if networks.discrete else 'continuous'} actions but "
                f"the environment's are {'discrete' if discrete else 'continuous'}; build them from its spec."
            )
        specs.check_same_shapes(networks.environment_spec, environment_spec, "The PPO networks")

    def extras_spec(self, environment_spec: specs.EnvironmentSpec) -> dict:
        actions = environment_spec.actions
        raw_dtype = np.int32 if isinstance(actions, specs.DiscreteArray) else np.float32
        return {
            "log_prob": specs.Array((), np.float32),
            "policy_step": specs.Array((), np.int32),
            "raw_action": specs.Array(actions.shape, raw_dtype),
        }

    def make_policy(self, networks: PPONetworks, environment_spec: specs.EnvironmentSpec, evaluation: bool = False):
        self.check_networks(networks, environment_spec)
        normalizer = ObservationNormalizer(self.config.normalize_observations)
        action_dtype = environment_spec.actions.dtype

        def policy(params, key, observation, step):
            policy_params, statistics, learner_step = params
            observations = normalizer.apply(statistics, jax.tree.map(lambda x: x[None], observation))
            distribution = networks.distribution(networks.policy.apply(policy_params, observations))
            raw = distribution.mode() if evaluation else distribution.sample(seed=key)
            action = (raw if networks.discrete else jnp.clip(raw, -1.0, 1.0))[0].astype(action_dtype)
            if evaluation:
                return action
            extras = {
                "log_prob": distribution.log_prob(raw)[0].astype(jnp.float32),
                "policy_step": jnp.asarray(learner_step, jnp.int32),
                "raw_action": raw[0].astype(jnp.int32 if networks.discrete else jnp.float32),
            }
            return action, extras

        return policy if evaluation else ExtrasPolicy(policy)
