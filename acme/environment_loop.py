"""Runs an actor in its K environments (K = 1 included): one batched policy call per step for all K.

Each environment keeps its own episode: when one ends it is logged (return, length, steps per second, the shared
counts and any observers' metrics), counted and reset on its own while the others go on. ``run`` stops after a
number of environment steps (summed over the K), ``run_episodes`` after a number of finished episodes; the
episodes in progress carry on at the next call.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import dm_env
import numpy as np
import tree

from acme import core
from acme.environments.batch import EnvironmentBatch, SeparateEnvironments
from acme.utils import counting, loggers
from acme.utils.observers import EnvLoopObserver


class EnvironmentLoop(core.Worker):
    """Steps ``actor`` in ``environments`` (one per environment the actor drives), counting and logging episodes.

    Args:
      environments: K dm_env environments (or one environment, for K = 1).
      actor: a ``core.Actor`` driving K environments; its ``update`` is called
        once per batched step (e.g. to step a learner or fetch parameters) unless ``should_update`` is false.
      counter: counts ``steps`` (every environment's) and finished ``episodes``.
      logger: receives one row per finished episode.
      on_episode: called with each finished episode's row (besides the logger).
      observers: see every step of a one-environment loop and add their metrics to its episode rows.
    """

    def __init__(
        self,
        environments: Sequence[dm_env.Environment] | dm_env.Environment | EnvironmentBatch,
        actor: core.Actor,
        counter: counting.Counter | None = None,
        logger: loggers.Logger | None = None,
        label: str = "environment_loop",
        should_update: bool = True,
        on_episode: Callable[[dict], None] | None = None,
        observers: Sequence[EnvLoopObserver] = (),
    ):
        if isinstance(environments, dm_env.Environment):
            environments = [environments]
        if not isinstance(environments, EnvironmentBatch):
            environments = SeparateEnvironments(environments)
        self._batch = environments
        if self._batch.num_envs != actor.num_envs:
            raise ValueError(f"The actor drives {actor.num_envs} environments but {self._batch.num_envs} were given.")
        self._observers = list(observers)
        if self._observers and (self._batch.num_envs > 1 or self._batch.environments is None):
            raise ValueError(
                f"Observers follow one environment's episodes; this loop drives {self._batch.num_envs}"
                f"{'' if self._batch.environments is not None else ' in one vectorised batch'}. "
                "Give observers to a loop of one environment, or leave them out."
            )
        self._actor = actor
        self._counter = counter if counter is not None else counting.Counter(prefix=label)
        self._logger = logger if logger is not None else loggers.make_default_logger(label)
        self._should_update = should_update
        self._on_episode = on_episode
        self._timesteps: list[dm_env.TimeStep] | None = None
        self._returns: list[Any] = [None] * self._batch.num_envs
        self._lengths = [0] * self._batch.num_envs
        self._starts = [0.0] * self._batch.num_envs
        self.last_run_steps = 0  # the steps the last run() took (a batch that steps all K may take more)

    @property
    def num_envs(self) -> int:
        return self._batch.num_envs

    def _start_episode(self, index: int, timestep: dm_env.TimeStep) -> dm_env.TimeStep:
        self._actor.observe_first(index, timestep)
        for observer in self._observers:
            observer.observe_first(self._batch.environments[index], timestep)
        self._returns[index] = tree.map_structure(lambda s: np.zeros(s.shape, s.dtype), self._batch.reward_spec())
        self._lengths[index] = 0
        self._starts[index] = time.perf_counter()
        return timestep

    def _end_episode(self, index: int, uncounted_steps: int) -> dict:
        counts = self._counter.increment(episodes=1, steps=uncounted_steps)
        elapsed = time.perf_counter() - self._starts[index]
        row = {
            "episode_length": self._lengths[index],
            "episode_return": self._returns[index],
            "steps_per_second": self._lengths[index] / max(elapsed, 1e-9),
            "episode_finished": True,
            "environment_index": index,
            **counts,
        }
        for observer in self._observers:
            row.update(observer.get_metrics())
        self._logger.write(row)
        if self._on_episode is not None:
            self._on_episode(row)
        return row

    def run(self, num_steps: int) -> list[dict]:
        """Takes ``num_steps`` environment steps (over all K); returns the rows of the episodes that ended.

        When fewer than K steps remain, only the first environments step; the
        others keep their episode for the next call. A batch that steps all K at
        once (not ``splittable``) takes the whole step, up to K - 1 more
        (``last_run_steps`` says how many were taken).
        """
        if isinstance(num_steps, bool) or not isinstance(num_steps, int) or num_steps < 0:
            raise ValueError(f"num_steps must be a non-negative integer, got {num_steps!r}.")
        return self._run(num_steps, None)

    def run_episodes(self, num_episodes: int) -> list[dict]:
        """Steps until ``num_episodes`` episodes (over all K) have ended; returns their rows."""
        if isinstance(num_episodes, bool) or not isinstance(num_episodes, int) or num_episodes < 0:
            raise ValueError(f"num_episodes must be a non-negative integer, got {num_episodes!r}.")
        return self._run(None, num_episodes)[:num_episodes]

    def episode_returns(self, num_episodes: int) -> list[float]:
        """Runs until ``num_episodes`` episodes have ended and returns their summed returns."""
        return [float(np.sum(row["episode_return"])) for row in self.run_episodes(num_episodes)]

    def _run(self, num_steps: int | None, num_episodes: int | None) -> list[dict]:
        """Steps until ``num_steps`` steps were taken or ``num_episodes`` episodes ended (one of them given).
        Locals stand in for attributes: this loop runs once per environment step."""
        batch = self._batch
        if self._timesteps is None:
            self._timesteps = [self._start_episode(i, timestep) for i, timestep in enumerate(batch.reset())]
        actor, timesteps = self._actor, self._timesteps
        returns, lengths, observers, num_envs = self._returns, self._lengths, self._observers, self.num_envs
        # Nested observations and rewards keep their structure from step to step: asked once, not every step.
        nested_observations = tree.is_nested(timesteps[0].observation)
        nested_rewards = tree.is_nested(batch.reward_spec())
        nested_actions = None
        finished: list[dict] = []
        steps = counted = 0  # steps are counted at episodes' ends and at the end of the call (one count each)
        while steps < num_steps if num_steps is not None else len(finished) < num_episodes:
            if nested_observations:
                observations = tree.map_structure(lambda *xs: np.stack(xs), *[t.observation for t in timesteps])
            elif num_envs == 1:  # the common cases, one array per environment: skip the tree walks
                observations = np.asarray(timesteps[0].observation)[None]
            else:
                observations = np.stack([t.observation for t in timesteps])
            actions = actor.select_actions(observations)
            if nested_actions is None:
                nested_actions = tree.is_nested(actions)
            splittable = num_steps is not None and num_steps - steps < num_envs and batch.splittable
            active = num_steps - steps if splittable else num_envs
            for i, (timestep, restart) in enumerate(batch.step(actions, active)):
                action = tree.map_structure(lambda a: a[i], actions) if nested_actions else actions[i]
                actor.observe(i, action, timestep)
                if observers:
                    for observer in observers:
                        observer.observe(batch.environments[i], timestep, action)
                reward = timestep.reward
                returns[i] = tree.map_structure(np.add, returns[i], reward) if nested_rewards else returns[i] + reward
                lengths[i] += 1
                if timestep.last():
                    finished.append(self._end_episode(i, steps + i + 1 - counted))
                    counted = steps + i + 1
                    timestep = self._start_episode(i, restart)
                timesteps[i] = timestep
            steps += active
            if self._should_update:
                actor.update()
        if steps > counted:
            self._counter.increment(steps=steps - counted)
        self.last_run_steps = steps
        return finished
