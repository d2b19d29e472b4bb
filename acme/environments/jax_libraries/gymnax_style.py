"""gymnax's environments, and Craftax's, which share gymnax's interface: ``reset_env(key, params)`` and
``step_env(key, state, action, params)`` without automatic reset, spaces from ``action_space(params)``.

Both libraries end an episode at their time limit as at a terminal state (discount 0). Here the library is given a
limit it never reaches and the adapter truncates at the library's own limit with discount 1, as dm_env (and the
library's ``gymnasium`` originals) say: the only difference from the library's own step."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from acme import specs
from acme.environments.jax_libraries.adapter import (
    UNLIMITED_STEPS,
    LibraryEnvironment,
    bounded_actions,
    discrete_actions,
)


def action_spec_of(space: Any) -> specs.Array:
    """The action spec of a gymnax-style space: ``Discrete(n)`` or a float ``Box``."""
    if hasattr(space, "n"):
        return discrete_actions(space.n)
    if hasattr(space, "low") and jnp.issubdtype(jnp.dtype(space.dtype), jnp.floating):
        return bounded_actions(tuple(space.shape), space.low, space.high)
    raise ValueError(
        f"Action space {type(space).__name__} is not supported: the agents take Discrete(n) or a float Box."
    )


class GymnaxStyleEnvironment(LibraryEnvironment):
    """``env`` with ``params``; ``time_limit_field`` names the field of ``params`` that holds its time limit."""

    def __init__(self, env: Any, params: Any, time_limit_field: str):
        limit = int(getattr(params, time_limit_field))
        super().__init__(action_spec_of(env.action_space(params)), max_episode_steps=limit)
        self.library_environment = env
        self._params = params.replace(**{time_limit_field: UNLIMITED_STEPS})

    def initial(self, key):
        observation, state = self.library_environment.reset_env(key, self._params)
        return state, observation

    def transition(self, physics, action, key):
        observation, state, reward, done, _ = self.library_environment.step_env(key, physics, action, self._params)
        return state, observation, reward, jnp.asarray(done, jnp.bool_)
