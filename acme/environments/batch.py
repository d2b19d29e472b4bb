"""K environments as the environment loop steps them: all at once, one action each.

``EnvironmentBatch`` is that view. ``SeparateEnvironments`` steps K dm_env environments one after another (any
family), and may step only the first few of them; a batch backed by a vectorised simulator (ale-py's C++ vector
environment for Atari: ``acme.environments.atari.AtariVectorBatch``) steps all K in one call, and a game that
ends there starts its next episode in the same call (so its step returns both the LAST timestep and the next
FIRST one).
"""

from __future__ import annotations

import abc
from typing import Any, Sequence

import dm_env
import tree

from acme import specs


class EnvironmentBatch(abc.ABC):
    """K environments stepped together (see the module docstring)."""

    #: Whether ``step`` may step only the first ``count`` < K environments; a batch that cannot steps all K.
    splittable: bool = True
    #: The K dm_env environments themselves where there are such (observers watch them), else None.
    environments: Sequence[dm_env.Environment] | None = None

    @property
    @abc.abstractmethod
    def num_envs(self) -> int:
        """K."""

    @abc.abstractmethod
    def reset(self) -> list[dm_env.TimeStep]:
        """Starts an episode in every environment; their FIRST timesteps."""

    @abc.abstractmethod
    def step(self, actions: Any, count: int) -> list[tuple[dm_env.TimeStep, dm_env.TimeStep | None]]:
        """Steps environments ``0 .. count - 1`` (all K when not ``splittable``) with ``actions`` (leaves ``[K,
        ...]``): for each, the timestep its action led to and, where that one is LAST, the FIRST timestep of its
        next episode (else None)."""

    @abc.abstractmethod
    def environment_spec(self) -> specs.EnvironmentSpec:
        """One environment's spec (every one's)."""

    def reward_spec(self) -> Any:
        """One environment's reward spec."""
        return self.environment_spec().rewards

    def close(self) -> None:
        """Releases what the environments hold."""


class SeparateEnvironments(EnvironmentBatch):
    """K dm_env environments, stepped one after another; one whose episode ended is reset right away."""

    splittable = True

    def __init__(self, environments: Sequence[dm_env.Environment]):
        if not environments:
            raise ValueError("Give at least one environment.")
        self.environments = list(environments)
        self._num_envs = len(self.environments)
        self._nested_actions: bool | None = None
        self._spec: specs.EnvironmentSpec | None = None

    @property
    def num_envs(self) -> int:
        return self._num_envs

    def reset(self) -> list[dm_env.TimeStep]:
        return [environment.reset() for environment in self.environments]

    def step(self, actions: Any, count: int) -> list[tuple[dm_env.TimeStep, dm_env.TimeStep | None]]:
        if self._nested_actions is None:
            self._nested_actions = tree.is_nested(actions)
        results = []
        for i in range(count):
            action = tree.map_structure(lambda a: a[i], actions) if self._nested_actions else actions[i]
            timestep = self.environments[i].step(action)
            results.append((timestep, self.environments[i].reset() if timestep.last() else None))
        return results

    def environment_spec(self) -> specs.EnvironmentSpec:
        if self._spec is None:
            self._spec = specs.make_environment_spec(self.environments[0])
        return self._spec

    def reward_spec(self) -> Any:
        return self.environments[0].reward_spec()

    def close(self) -> None:
        for environment in self.environments:
            environment.close()
