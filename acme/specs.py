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


class SpecEnvironment(dm_env.Environment):
    """A dm_env environment whose four spec methods read one ``EnvironmentSpec``, ``self._spec``."""

    _spec: EnvironmentSpec

    def observation_spec(self):
        return self._spec.observations

    def action_spec(self):
        return self._spec.actions

    def reward_spec(self):
        return self._spec.rewards

    def discount_spec(self):
        return self._spec.discounts


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


def continuous_action_size(spec: EnvironmentSpec, agent: str = "This agent") -> int:
    """The length of a canonical ``[-1, 1]`` continuous action vector, or a clear error.

    Continuous-control agents act in ``[-1, 1]``; environments with other
    bounds are adapted with ``make_environment(..., canonical_actions=True)``.
    """
    import numpy as np

    actions = spec.actions
    if isinstance(actions, DiscreteArray) or not isinstance(actions, dm_env_specs.BoundedArray):
        raise ValueError(
            f"{agent} needs a bounded continuous action space (a dm_env BoundedArray spec), got {actions!r}. "
            "Use a discrete-action agent (e.g. dqn) or a continuous environment "
            "(e.g. gymnasium:Pendulum-v1, dm_control:cartpole/swingup)."
        )
    if len(actions.shape) != 1:
        raise ValueError(f"{agent} needs a flat action vector, got action shape {actions.shape}.")
    if not (np.allclose(actions.minimum, -1.0) and np.allclose(actions.maximum, 1.0)):
        raise ValueError(
            f"{agent} acts in [-1, 1] but the environment's actions are bounded by "
            f"[{np.min(actions.minimum)}, {np.max(actions.maximum)}]; build the environment with "
            "make_environment(..., canonical_actions=True) to rescale them."
        )
    return int(actions.shape[0])


def check_same_shapes(expected: EnvironmentSpec, actual: EnvironmentSpec, what: str = "The networks") -> None:
    """Raises a clear error when two specs' observation or action shapes differ."""
    import jax

    for field in ("observations", "actions"):
        want = [tuple(s.shape) for s in jax.tree.leaves(getattr(expected, field))]
        got = [tuple(s.shape) for s in jax.tree.leaves(getattr(actual, field))]
        if want != got:
            raise ValueError(
                f"{what} were built for {field} of shape {want} but the environment has {got}; "
                "build the networks from this environment's spec (make_networks(environment_spec))."
            )
