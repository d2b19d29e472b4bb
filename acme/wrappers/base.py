"""A dm_env wrapper that forwards everything to the environment it wraps."""

from __future__ import annotations

import dm_env


class EnvironmentWrapper(dm_env.Environment):
    """Forwards every call to ``environment``; subclasses override what they change."""

    def __init__(self, environment: dm_env.Environment):
        self._environment = environment

    @property
    def environment(self) -> dm_env.Environment:
        return self._environment

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._environment, name)

    def reset(self) -> dm_env.TimeStep:
        return self._environment.reset()

    def step(self, action) -> dm_env.TimeStep:
        return self._environment.step(action)

    def observation_spec(self):
        return self._environment.observation_spec()

    def action_spec(self):
        return self._environment.action_spec()

    def reward_spec(self):
        return self._environment.reward_spec()

    def discount_spec(self):
        return self._environment.discount_spec()

    def close(self) -> None:
        self._environment.close()
