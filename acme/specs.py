"""Environment specs: what an agent needs to know of an environment."""

from __future__ import annotations

from typing import NamedTuple

import dm_env
from dm_env import specs as dm_env_specs

Array = dm_env_specs.Array
BoundedArray = dm_env_specs.BoundedArray
DiscreteArray = dm_env_specs.DiscreteArray


class EnvironmentSpec(NamedTuple):
    """The specs of an environment's observations, actions, rewards and discounts."""

    observations: object
    actions: object
    rewards: object
    discounts: object


def make_environment_spec(environment: dm_env.Environment) -> EnvironmentSpec:
    """Reads the four specs off a dm_env environment."""
    return EnvironmentSpec(
        observations=environment.observation_spec(),
        actions=environment.action_spec(),
        rewards=environment.reward_spec(),
        discounts=environment.discount_spec(),
    )


def num_discrete_actions(spec: EnvironmentSpec) -> int:
    """The number of actions of a discrete action spec, or a clear error."""
    actions = spec.actions
    if not isinstance(actions, DiscreteArray):
        raise ValueError(
            "This agent needs a discrete action space (a dm_env DiscreteArray spec), "
            f"got {actions!r}. Use an agent for continuous control (e.g. sac, td3) "
            "or an environment with discrete actions (e.g. gymnasium:CartPole-v1)."
        )
    return int(actions.num_values)
