"""Assembles MPO's learner and policy on the shared n-step transition replay."""

from __future__ import annotations

from typing import Any, Iterator, Optional

import jax
import jax.numpy as jnp

from acme import specs
from acme.jax.running_statistics import ObservationNormalizer
from acme.transition_builder import NStepTransitionBuilder
from acme.utils import counting, loggers
from agents.mpo.config import MPOConfig
from agents.mpo.learning import MPOLearner
from agents.mpo.networks import MPONetworks


class MPOBuilder(NStepTransitionBuilder):
    """MPO: samples from the Gaussian policy (clipped to [-1, 1]), acts with its mean in evaluation."""

    def __init__(self, config: MPOConfig = MPOConfig()):
        super().__init__(config)

    def make_learner(
        self,
        random_key: jax.Array,
        networks: MPONetworks,
        dataset: Iterator[Any],
        logger_factory: loggers.LoggerFactory,
        environment_spec: specs.EnvironmentSpec,
        replay_client: Any = None,
        counter: Optional[counting.Counter] = None,
    ) -> MPOLearner:
        specs.check_same_shapes(networks.environment_spec, environment_spec, "The MPO networks")
        return MPOLearner(networks, self.config, random_key, dataset, counter, logger_factory("learner", "learner_steps"))

    def make_policy(self, networks: MPONetworks, environment_spec: specs.EnvironmentSpec, evaluation: bool = False):
        specs.check_same_shapes(networks.environment_spec, environment_spec, "The MPO networks")
        normalizer = ObservationNormalizer(self.config.normalize_observations)

        def policy(params, key, observation, step):
            policy_params, stats = params
            observation = normalizer.apply(stats, jax.tree.map(lambda x: x[None], observation))
            mean, std = networks.policy.apply(policy_params, observation)
            if evaluation:
                return mean[0]  # already in (-1, 1)
            action = mean + std * jax.random.normal(key, mean.shape, mean.dtype)
            return jnp.clip(action[0], -1.0, 1.0)

        return policy
