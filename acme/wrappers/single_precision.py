"""Casts 64-bit arrays and specs to 32 bits, the precision JAX uses by default."""

from __future__ import annotations

import dm_env
import numpy as np
import tree
from dm_env import specs

from acme.wrappers.base import EnvironmentWrapper

_DOWNCAST = {np.dtype(np.float64): np.float32, np.dtype(np.int64): np.int32, np.dtype(np.uint64): np.uint32}


def _target_dtype(dtype) -> np.dtype:
    return np.dtype(_DOWNCAST.get(np.dtype(dtype), dtype))


def convert_spec(spec):
    """The same nested spec with 64-bit dtypes replaced by 32-bit ones."""

    def convert(s):
        dtype = _target_dtype(s.dtype)
        if isinstance(s, specs.DiscreteArray):
            return specs.DiscreteArray(num_values=s.num_values, dtype=dtype, name=s.name)
        if isinstance(s, specs.BoundedArray):
            return specs.BoundedArray(s.shape, dtype, s.minimum.astype(dtype), s.maximum.astype(dtype), name=s.name)
        return specs.Array(s.shape, dtype, name=s.name)

    return tree.map_structure(convert, spec)


def convert_value(value, spec):
    """Casts a nested value to the dtypes of a (converted) nested spec."""
    if not tree.is_nested(spec) and not tree.is_nested(value):  # one array: skip the tree walk
        return np.asarray(value, dtype=spec.dtype)
    return tree.map_structure(lambda v, s: np.asarray(v, dtype=s.dtype), value, spec)


class SinglePrecisionWrapper(EnvironmentWrapper):
    """Observations, rewards and discounts in 32-bit precision."""

    def __init__(self, environment: dm_env.Environment):
        super().__init__(environment)
        self._observation_spec = convert_spec(environment.observation_spec())
        self._reward_spec = convert_spec(environment.reward_spec())
        self._discount_spec = convert_spec(environment.discount_spec())
        self._action_spec = convert_spec(environment.action_spec())

    def _convert(self, timestep: dm_env.TimeStep) -> dm_env.TimeStep:
        return timestep._replace(
            observation=convert_value(timestep.observation, self._observation_spec),
            reward=None if timestep.reward is None else convert_value(timestep.reward, self._reward_spec),
            discount=None if timestep.discount is None else convert_value(timestep.discount, self._discount_spec),
        )

    def reset(self) -> dm_env.TimeStep:
        return self._convert(self._environment.reset())

    def step(self, action) -> dm_env.TimeStep:
        return self._convert(self._environment.step(action))

    def observation_spec(self):
        return self._observation_spec

    def action_spec(self):
        return self._action_spec

    def reward_spec(self):
        return self._reward_spec

    def discount_spec(self):
        return self._discount_spec
