"""Keeps some entries of a vector observation: a fully observed task made partially observed."""

from __future__ import annotations

from typing import Sequence

import dm_env
import numpy as np
from dm_env import specs

from acme.wrappers.base import EnvironmentWrapper


class ObservationSubsetWrapper(EnvironmentWrapper):
    """Observations reduced to the entries at ``indices`` of the last axis (e.g. CartPole without its
    velocities, which an agent must then infer from consecutive observations: a memory task)."""

    def __init__(self, environment: dm_env.Environment, indices: Sequence[int]):
        super().__init__(environment)
        spec = environment.observation_spec()
        if not isinstance(spec, specs.Array) or len(spec.shape) != 1:
            raise ValueError(f"ObservationSubsetWrapper needs a vector observation spec, got {spec!r}.")
        indices = np.asarray(list(indices), np.int64)
        if indices.size == 0 or indices.min() < 0 or indices.max() >= spec.shape[0]:
            raise ValueError(f"indices must be in [0, {spec.shape[0]}) and non-empty, got {indices.tolist()}.")
        self._indices = indices
        self._spec = specs.Array((indices.size,), spec.dtype, name=spec.name)

    def _reduce(self, timestep: dm_env.TimeStep) -> dm_env.TimeStep:
        return timestep._replace(observation=np.asarray(timestep.observation)[..., self._indices])

    def reset(self) -> dm_env.TimeStep:
        return self._reduce(self._environment.reset())

    def step(self, action) -> dm_env.TimeStep:
        return self._reduce(self._environment.step(action))

    def observation_spec(self):
        return self._spec
