"""D4PG's policy on the shared actor-critic builder (n-step transition replay)."""

from __future__ import annotations

import jax

from acme import specs
from acme.agents.transition_builder import ActorCriticBuilder
from acme.jax import networks as networks_lib
from agents.d4pg.config import D4PGConfig
from agents.d4pg.learning import D4PG_LEARNER
from agents.d4pg.networks import D4PGNetworks


class D4PGBuilder(ActorCriticBuilder):
    """D4PG: acts with the deterministic policy plus clipped Gaussian noise, without noise in evaluation."""

    config_class = D4PGConfig
    learner = D4PG_LEARNER

    def check_networks(self, networks: D4PGNetworks, environment_spec: specs.EnvironmentSpec) -> None:
        super().check_networks(networks, environment_spec)
        c = self.config
        if (networks.num_atoms, networks.vmin, networks.vmax) != (c.num_atoms, float(c.vmin), float(c.vmax)):
            raise ValueError(
                f"The D4PG networks' support ({networks.num_atoms} atoms on [{networks.vmin}, {networks.vmax}]) "
                f"differs from the config's ({c.num_atoms} atoms on [{c.vmin}, {c.vmax}]); build the networks "
                "with the config's num_atoms, vmin and vmax."
            )

    def select_actions(self, networks: D4PGNetworks, policy_params, key: jax.Array, observations, evaluation: bool):
        actions = networks.policy.apply(policy_params, observations)
        return actions if evaluation else networks_lib.sample_clipped_gaussian(key, actions, self.config.sigma)
