"""Assembles TD3's learner and policy on the shared n-step transition replay."""

from __future__ import annotations

from typing import Any, Callable, Iterator, Optional

import jax
import jax.numpy as jnp

from acme import specs
from acme.jax.running_statistics import ObservationNormalizer
from acme.transition_builder import NStepTransitionBuilder
from acme.utils import counting, loggers
from agents.td3.config import TD3Config
from agents.td3.learning import TD3Learner
from agents.td3.networks import TD3Networks


class TD3Builder(NStepTransitionBuilder):
    """TD3: explores with clipped Gaussian noise on the deterministic action, acts without noise in evaluation."""

    def __init__(self, config: TD3Config = TD3Config()):
        super().__init__(config)

    def make_learner(
        self,
        random_key: jax.Array,
        networks: TD3Networks,
        dataset: Iterator[Any],
        logger_factory: loggers.LoggerFactory,
        environment_spec: specs.EnvironmentSpec,
        replay_client: Any = None,
        counter: Optional[counting.Counter] = None,
    ) -> TD3Learner:
        specs.check_same_shapes(networks.environment_spec, environment_spec, "The TD3 networks")
        logger = logger_factory("learner", "learner_steps")
        return TD3Learner(networks, self.config, random_key, dataset, counter, logger)

    def make_policy(
        self, networks: TD3Networks, environment_spec: specs.EnvironmentSpec, evaluation: bool = False
    ) -> Callable[..., jnp.ndarray]:
        specs.check_same_shapes(networks.environment_spec, environment_spec, "The TD3 networks")
        normalizer = ObservationNormalizer(self.config.normalize_observations)
        sigma = self.config.exploration_sigma

        def policy(params, key, observation, step):
            policy_params, stats = params
            observation = normalizer.apply(stats, jax.tree.map(lambda x: x[None], observation))
            action = networks.policy.apply(policy_params, observation)[0]
            if evaluation:
                return action
            noise = sigma * jax.random.normal(key, action.shape, action.dtype)
            return jnp.clip(action + noise, -1.0, 1.0)

        return policy
