"""A dm_env view of a JAX-native environment, so host runners, evaluation and snapshots can use it."""

from __future__ import annotations

import functools

import dm_env
import jax
import numpy as np

from acme import specs
from acme.environments.jax_native.base import LAST, JaxEnvironment


@functools.lru_cache(maxsize=None)
def jitted(environment: JaxEnvironment) -> tuple:
    """``environment``'s ``reset`` and ``advance`` (its step within an episode: the host starts episodes with
    ``reset``), jitted once per environment object: the views of one object (an actor's and an evaluator's) share
    the compiled programs."""
    return jax.jit(environment.reset), jax.jit(environment.advance)


class JaxToDmEnv(specs.SpecEnvironment):
    """Steps ``environment`` one jitted call at a time on the host; ``reset`` and episode ends as dm_env says."""

    def __init__(self, environment: JaxEnvironment, seed: int | None = None):
        self._environment = environment
        self._spec = environment.spec()
        self._key = jax.random.PRNGKey(0 if seed is None else seed)
        self._reset, self._step = jitted(environment)
        self._state = None

    def reset(self) -> dm_env.TimeStep:
        self._key, key = jax.random.split(self._key)
        self._state, timestep = self._reset(key)
        return dm_env.restart(self._observation(timestep.observation))

    def step(self, action) -> dm_env.TimeStep:
        if self._state is None or int(self._state.step_type) == LAST:
            return self.reset()
        self._state, timestep = self._step(self._state, np.asarray(action, self._spec.actions.dtype))
        return dm_env.TimeStep(
            step_type=dm_env.StepType(int(timestep.step_type)),
            reward=np.asarray(timestep.reward, self._spec.rewards.dtype),
            discount=np.asarray(timestep.discount, self._spec.discounts.dtype),
            observation=self._observation(timestep.observation),
        )

    def _observation(self, observation):
        return jax.tree.map(np.asarray, jax.device_get(observation))
