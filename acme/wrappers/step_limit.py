"""Ends episodes after a fixed number of steps, as a truncation."""

from __future__ import annotations

import dm_env

from acme.wrappers.base import EnvironmentWrapper


class StepLimitWrapper(EnvironmentWrapper):
    """Truncates an episode (discount kept, so agents bootstrap) after ``step_limit`` steps."""

    def __init__(self, environment: dm_env.Environment, step_limit: int):
        if step_limit < 1:
            raise ValueError(f"step_limit must be a positive number of steps, got {step_limit}.")
        super().__init__(environment)
        self._step_limit = step_limit
        self._elapsed = 0
        self._reset_next_step = True

    def reset(self) -> dm_env.TimeStep:
        self._elapsed = 0
        self._reset_next_step = False
        return self._environment.reset()

    def step(self, action) -> dm_env.TimeStep:
        if self._reset_next_step:
            return self.reset()
        timestep = self._environment.step(action)
        self._elapsed += 1
        if timestep.last():
            self._reset_next_step = True
            return timestep
        if self._elapsed >= self._step_limit:
            self._reset_next_step = True
            return dm_env.truncation(timestep.reward, timestep.observation, timestep.discount)
        return timestep
