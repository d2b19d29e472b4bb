"""Rewards clipped before an adder stores them: training sees ``clip(r, -x, x)`` (the DQN family's Atari
convention), while evaluation, which stores nothing, plays on the game's own rewards."""

from __future__ import annotations

import dm_env
import numpy as np

from acme import types
from acme.adders.base import Adder


class ClippedRewardAdder(Adder):
    """Hands ``adder`` each timestep with its reward clipped to ``[-max_abs_reward, max_abs_reward]``."""

    def __init__(self, adder: Adder, max_abs_reward: float):
        if not max_abs_reward > 0:
            raise ValueError(f"max_abs_reward must be > 0, got {max_abs_reward!r}.")
        self._adder = adder
        self._bound = max_abs_reward

    def add_first(self, timestep: dm_env.TimeStep) -> None:
        self._adder.add_first(timestep)

    def add(self, action: types.NestedArray, next_timestep: dm_env.TimeStep, extras: types.NestedArray = ()) -> None:
        reward = next_timestep.reward
        clipped = np.clip(reward, -self._bound, self._bound).astype(np.asarray(reward).dtype)
        self._adder.add(action, next_timestep._replace(reward=clipped), extras)

    def reset(self) -> None:
        self._adder.reset()


def clip_rewards(adder: Adder, max_abs_reward: float | None) -> Adder:
    """``adder`` behind a ``ClippedRewardAdder``, or as it is for ``max_abs_reward`` None."""
    return adder if max_abs_reward is None else ClippedRewardAdder(adder, max_abs_reward)
