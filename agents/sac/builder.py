"""Assembles SAC's learner and policy on the shared n-step transition replay."""

from __future__ import annotations

from typing import Any, Iterator, Optional

import jax
import jax.numpy as jnp

from acme import specs
from acme.jax import networks as networks_lib
from acme.jax.running_statistics import ObservationNormalizer
from acme.transition_builder import NStepTransitionBuilder
from acme.utils import counting, loggers
from agents.sac.config import SACConfig
from agents.sac.learning import SACLearner
from agents.sac.networks import SACNetworks


class SACBuilder(NStepTransitionBuilder):
    """Soft actor-critic: samples from the tanh-Gaussian policy, acts greedily with tanh(mean) in evaluation."""

    def __init__(self, config: SACConfig = SACConfig()):
        super().__init__(config)

    def make_learner(
        self,
        random_key: jax.Array,
        networks: SACNetworks,
        dataset: Iterator[Any],
        logger_factory: loggers.LoggerFactory,
        environment_spec: specs.EnvironmentSpec,
        replay_client: Any = None,
        counter: Optional[counting.Counter] = None,
    ) -> SACLearner:
        specs.check_same_shapes(networks.environment_spec, environment_spec, "The SAC networks")
        return SACLearner(networks, self.config, random_key, dataset, counter, logger_factory("learner", "learner_steps"))

    def make_policy(self, networks: SACNetworks, environment_spec: specs.EnvironmentSpec, evaluation: bool = False):
        specs.check_same_shapes(networks.environment_spec, environment_spec, "The SAC networks")
        normalizer = ObservationNormalizer(self.config.normalize_observations)

        def policy(params, key, observation, step):
            policy_params, stats = params
            observation = normalizer.apply(stats, jax.tree.map(lambda x: x[None], observation))
            mean, log_std = networks.policy.apply(policy_params, observation)
            if evaluation:
                return jnp.tanh(mean[0])
            action, _ = networks_lib.sample_tanh_gaussian(key, mean, log_std)
            return action[0]

        return policy
