"""BC on the shared n-step-transition builder: the dataset's transitions in replay, a policy that samples (or,
evaluating, takes the most likely action)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from acme import specs
from acme.agents.transition_builder import NStepTransitionBuilder
from agents.bc.config import BCConfig
from agents.bc.learning import BC_LEARNER
from agents.bc.networks import BCNetworks, greedy_action


class BCBuilder(NStepTransitionBuilder):
    """Behaviour cloning, discrete or continuous (from the networks)."""

    config_class = BCConfig
    learner = BC_LEARNER

    def check_networks(self, networks: BCNetworks, environment_spec: specs.EnvironmentSpec) -> None:
        specs.check_same_shapes(networks.environment_spec, environment_spec, "The BC networks")

    def make_policy(self, networks: BCNetworks, environment_spec: specs.EnvironmentSpec, evaluation: bool = False):
        self.check_networks(networks, environment_spec)

        def policy(params, key, observation, step):
            outputs = jax.tree.map(
                lambda x: x[0], networks.policy.apply(params, jax.tree.map(lambda x: x[None], observation))
            )
            if evaluation:
                return greedy_action(networks, outputs)
            if networks.discrete:
                return jax.random.categorical(key, outputs)
            mean, std = outputs
            return jnp.clip(mean + std * jax.random.normal(key, mean.shape), -1.0, 1.0)

        return policy
