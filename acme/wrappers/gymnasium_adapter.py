"""Adapts a gymnasium environment to the dm_env interface."""

from __future__ import annotations

from typing import Any

import dm_env
import gymnasium
import numpy as np
from dm_env import specs


def space_to_spec(space: gymnasium.Space, name: str) -> Any:
    """The dm_env spec of a gymnasium space (Box, Discrete, MultiBinary, Dict, Tuple)."""
    if isinstance(space, gymnasium.spaces.Discrete):
        if int(space.start) != 0:
            raise ValueError(f"{name}: Discrete spaces must start at 0, got start={space.start}.")
        return specs.DiscreteArray(num_values=int(space.n), dtype=space.dtype, name=name)
    if isinstance(space, gymnasium.spaces.Box):
        if np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high)):
            return specs.BoundedArray(space.shape, space.dtype, space.low, space.high, name=name)
        return specs.Array(space.shape, space.dtype, name=name)
    if isinstance(space, gymnasium.spaces.MultiBinary):
        return specs.BoundedArray(space.shape, space.dtype, 0, 1, name=name)
    if isinstance(space, gymnasium.spaces.Dict):
        return {key: space_to_spec(sub, f"{name}/{key}") for key, sub in space.spaces.items()}
    if isinstance(space, gymnasium.spaces.Tuple):
        return tuple(space_to_spec(sub, f"{name}/{i}") for i, sub in enumerate(space.spaces))
    raise ValueError(
        f"{name}: gymnasium space {space!r} is not supported; accepted: Box, Discrete, MultiBinary, Dict, Tuple."
    )


class GymnasiumToDmEnv(dm_env.Environment):
    """Presents a ``gymnasium.Env`` as a ``dm_env.Environment``.

    A ``terminated`` step becomes a termination (discount 0); a ``truncated`` step
    (time limit) becomes a truncation (discount 1), so agents bootstrap through it.
    ``seed`` seeds the first reset; later resets continue the same random stream.
    """

    def __init__(self, environment: gymnasium.Env, seed: int | None = None):
        self._environment = environment
        self._seed = seed
        self._reset_next_step = True
        self._observation_spec = space_to_spec(environment.observation_space, "observation")
        self._action_spec = space_to_spec(environment.action_space, "action")
        if isinstance(environment.action_space, gymnasium.spaces.Box):
            self._action_dtype = environment.action_space.dtype
        else:
            self._action_dtype = None

    @property
    def gymnasium_env(self) -> gymnasium.Env:
        return self._environment

    def reset(self) -> dm_env.TimeStep:
        self._reset_next_step = False
        if self._seed is not None:
            observation, _ = self._environment.reset(seed=self._seed)
            self._environment.action_space.seed(self._seed)
            self._seed = None
        else:
            observation, _ = self._environment.reset()
        return dm_env.restart(observation)

    def step(self, action) -> dm_env.TimeStep:
        if self._reset_next_step:
            return self.reset()
        if self._action_dtype is not None:
            action = np.asarray(action, dtype=self._action_dtype)
        elif isinstance(self._action_spec, specs.DiscreteArray):
            action = int(np.asarray(action))
        observation, reward, terminated, truncated, _ = self._environment.step(action)
        reward = np.asarray(reward, dtype=np.float64)
        if terminated:
            self._reset_next_step = True
            return dm_env.termination(reward, observation)
        if truncated:
            self._reset_next_step = True
            return dm_env.truncation(reward, observation)
        return dm_env.transition(reward, observation)

    def observation_spec(self):
        return self._observation_spec

    def action_spec(self):
        return self._action_spec

    def reward_spec(self):
        return specs.Array((), np.float64, name="reward")

    def close(self) -> None:
        self._environment.close()
