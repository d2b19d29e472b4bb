"""Runs an actor in an environment, counting and logging episodes."""

from __future__ import annotations

import time
from typing import Callable, Sequence

import dm_env
import numpy as np
import tree

from acme import core
from acme.utils import counting, loggers
from acme.utils.observers import EnvLoopObserver


def _episode_return_init(reward_spec):
    return tree.map_structure(lambda s: np.zeros(s.shape, s.dtype), reward_spec)


class EnvironmentLoop(core.Worker):
    """Steps ``actor`` in ``environment`` episode after episode.

    Each episode is logged (return, length, steps per second, plus observers'
    metrics and the shared counts). The loop stops after ``num_episodes``
    episodes or exactly ``num_steps`` steps (whichever comes first), or when
    ``should_stop()`` turns true at an episode's end.
    """

    def __init__(
        self,
        environment: dm_env.Environment,
        actor: core.Actor,
        counter: counting.Counter | None = None,
        logger: loggers.Logger | None = None,
        label: str = "environment_loop",
        observers: Sequence[EnvLoopObserver] = (),
        should_update: bool = True,
        should_stop: Callable[[], bool] | None = None,
        on_step: Callable[[int], None] | None = None,
    ):
        self._environment = environment
        self._actor = actor
        self._counter = counter if counter is not None else counting.Counter(prefix=label)
        self._logger = logger if logger is not None else loggers.make_default_logger(label)
        self._observers = list(observers)
        self._should_update = should_update
        self._should_stop = should_stop
        self._on_step = on_step
        self._reward_spec = environment.reward_spec()
        self._steps_key = self._counter.get_steps_key()

    def run_episode(self, max_steps: int | None = None) -> dict:
        """Runs one episode (or ``max_steps`` of it) and returns its log row."""
        start = time.perf_counter()
        episode_steps = 0
        episode_return = _episode_return_init(self._reward_spec)
        timestep = self._environment.reset()
        self._actor.observe_first(timestep)
        for observer in self._observers:
            observer.observe_first(self._environment, timestep)
        while not timestep.last() and (max_steps is None or episode_steps < max_steps):
            action = self._actor.select_action(timestep.observation)
            timestep = self._environment.step(action)
            self._actor.observe(action, next_timestep=timestep)
            for observer in self._observers:
                observer.observe(self._environment, timestep, action)
            if self._should_update:
                self._actor.update()
            episode_steps += 1
            if tree.is_nested(timestep.reward):
                episode_return = tree.map_structure(np.add, episode_return, timestep.reward)
            else:  # the common case, one reward array: skip the tree walk
                episode_return = episode_return + timestep.reward
            if self._on_step is not None:
                self._on_step(episode_steps)
        counts = self._counter.increment(episodes=1 if timestep.last() else 0, steps=episode_steps)
        elapsed = time.perf_counter() - start
        result = {
            "episode_length": episode_steps,
            "episode_return": episode_return,
            "steps_per_second": episode_steps / max(elapsed, 1e-9),
            "episode_finished": bool(timestep.last()),
        }
        result.update(counts)
        for observer in self._observers:
            result.update(observer.get_metrics())
        return result

    def episode_returns(self, num_episodes: int) -> list[float]:
        """Runs ``num_episodes`` whole episodes (nothing logged) and returns their summed returns."""
        return [float(np.sum(self.run_episode()["episode_return"])) for _ in range(num_episodes)]

    def run(self, num_episodes: int | None = None, num_steps: int | None = None) -> int:
        """Runs until a budget is spent; returns the number of steps taken."""
        for name, value in (("num_episodes", num_episodes), ("num_steps", num_steps)):
            if value is not None and value < 0:
                raise ValueError(f"{name} must be None (no limit) or a non-negative count, got {value}.")
        episodes = steps = 0
        while (num_episodes is None or episodes < num_episodes) and (num_steps is None or steps < num_steps):
            remaining = None if num_steps is None else num_steps - steps
            result = self.run_episode(max_steps=remaining)
            episodes += 1
            steps += result["episode_length"]
            self._logger.write(result)
            if self._should_stop is not None and self._should_stop():
                break
        return steps
