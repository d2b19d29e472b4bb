"""Presents bounded continuous actions as the canonical box [-1, 1]."""

from __future__ import annotations

import dm_env
import numpy as np
import tree
from dm_env import specs

from acme.wrappers.base import EnvironmentWrapper


class CanonicalActionSpecWrapper(EnvironmentWrapper):
    """Agents act in [-1, 1]; actions are rescaled to the environment's bounds.

    Discrete action specs pass through unchanged. With ``clip`` the incoming
    actions are clipped to [-1, 1] first.
    """

    def __init__(self, environment: dm_env.Environment, clip: bool = True):
        super().__init__(environment)
        self._clip = clip
        self._original_spec = environment.action_spec()
        self._action_spec = tree.map_structure(self._canonical_spec, self._original_spec)
        self._single_spec = not tree.is_nested(self._original_spec)

    @staticmethod
    def _canonical_spec(spec):
        if isinstance(spec, specs.DiscreteArray) or not isinstance(spec, specs.BoundedArray):
            return spec
        if not np.issubdtype(spec.dtype, np.floating):
            return spec
        return specs.BoundedArray(spec.shape, spec.dtype, -np.ones(spec.shape), np.ones(spec.shape), spec.name)

    def _rescale(self, action, spec):
        if isinstance(spec, specs.DiscreteArray) or not isinstance(spec, specs.BoundedArray):
            return action
        if not np.issubdtype(spec.dtype, np.floating):
            return action
        action = np.asarray(action, dtype=spec.dtype)
        if self._clip:
            action = np.minimum(np.maximum(action, -1.0), 1.0)  # np.clip, at a fraction of its call overhead
        low, high = spec.minimum, spec.maximum
        return (low + (action + 1.0) * (high - low) / 2.0).astype(spec.dtype)

    def step(self, action) -> dm_env.TimeStep:
        if self._single_spec and not tree.is_nested(action):  # one action array: skip the tree walk
            action = self._rescale(action, self._original_spec)
        else:
            action = tree.map_structure(self._rescale, action, self._original_spec)
        return self._environment.step(action)

    def action_spec(self):
        return self._action_spec
