"""Recording what actors do: an adder that keeps every transition it passes on, and episodes played by a policy
with optional exploration, both as ``Episode``s for ``acme.datasets.minari_format.write_dataset``."""

from __future__ import annotations

import os
import shutil
import time
from typing import Any, Callable, Sequence

import dm_env
import jax
import numpy as np

from acme import specs, types
from acme.adders.base import Adder
from acme.datasets.minari_format import Episode, EpisodeRecorder, read_dataset, write_dataset

SHARDS_SUFFIX = ".shards"  # DIR.shards/: each distributed actor's episodes, until they are merged into DIR


class RecordingAdder(Adder):
    """Hands every call to ``adder`` (None: to nothing) and records the episodes it sees in ``recorder``."""

    def __init__(self, adder: Adder | None, recorder: EpisodeRecorder):
        self._adder = adder
        self.recorder = recorder

    def add_first(self, timestep: dm_env.TimeStep) -> None:
        self.recorder.observe_first(timestep)
        if self._adder is not None:
            self._adder.add_first(timestep)

    def add(self, action: types.NestedArray, next_timestep: dm_env.TimeStep, extras: types.NestedArray = ()) -> None:
        self.recorder.observe(action, next_timestep)
        if self._adder is not None:
            self._adder.add(action, next_timestep, extras)

    def reset(self) -> None:
        if self._adder is not None:
            self._adder.reset()


def explore(
    environment_spec: specs.EnvironmentSpec, epsilon: float = 0.0, noise: float = 0.0
) -> Callable[[np.random.Generator, Any], Any]:
    """``(rng, action) -> action``: for discrete actions a uniformly random one with probability ``epsilon``; for
    continuous ones Gaussian noise of standard deviation ``noise`` (in units of the action's range), clipped to
    the bounds. A value for the other kind of action is refused."""
    actions = environment_spec.actions
    discrete = isinstance(actions, specs.DiscreteArray)
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"epsilon must be in [0, 1], got {epsilon!r}.")
    if noise < 0.0:
        raise ValueError(f"noise must be >= 0, got {noise!r}.")
    if discrete and noise:
        raise ValueError(f"noise ({noise}) perturbs continuous actions; this environment's are discrete: use epsilon.")
    if not discrete and epsilon:
        raise ValueError(f"epsilon ({epsilon}) picks discrete actions; this environment's are continuous: use noise.")

    def perturb(rng: np.random.Generator, action: Any) -> Any:
        action = np.asarray(action, actions.dtype)
        if discrete:
            return np.asarray(rng.integers(actions.num_values), actions.dtype) if rng.random() < epsilon else action
        if not noise:
            return action
        low, high = np.broadcast_to(actions.minimum, actions.shape), np.broadcast_to(actions.maximum, actions.shape)
        noisy = action + noise * (high - low) / 2 * rng.standard_normal(actions.shape)
        return np.clip(noisy, low, high).astype(actions.dtype)

    return perturb


def play_episodes(
    policy: Callable,
    params: Any,
    environment: dm_env.Environment,
    num_episodes: int,
    seed: int = 0,
    perturb: Callable[[np.random.Generator, Any], Any] | None = None,
    on_episode: Callable[[Episode], None] | None = None,
) -> list[Episode]:
    """``num_episodes`` episodes of ``policy(params, key, observation, step)`` in ``environment``, each action
    passed through ``perturb`` (exploration) before it is taken; ``on_episode`` sees each finished one."""
    if num_episodes < 1:
        raise ValueError(f"num_episodes must be >= 1, got {num_episodes!r}.")
    act = jax.jit(policy)
    key = jax.random.PRNGKey(seed)
    rng = np.random.default_rng(seed)
    recorder = EpisodeRecorder()
    step = 0
    while len(recorder.episodes) < num_episodes:
        timestep = environment.reset()
        recorder.observe_first(timestep)
        while not timestep.last():
            key, action_key = jax.random.split(key)
            action = np.asarray(jax.device_get(act(params, action_key, timestep.observation, step)))
            action = perturb(rng, action) if perturb is not None else action
            timestep = environment.step(action)
            recorder.observe(action, timestep)
            step += 1
        if on_episode is not None:
            on_episode(recorder.episodes[-1])
    return recorder.episodes


def training_run_metadata(builder: Any) -> dict:
    """The metadata of a dataset recorded from a training run's actors: the agent, and that a run made it."""
    return {"acme_agent": getattr(builder, "agent_name", type(builder).__name__), "acme_source": "training run"}


def shards_directory(dataset: str) -> str:
    """Where the actors of a distributed run write their episodes before they are merged into ``dataset``."""
    return os.path.abspath(dataset).rstrip(os.sep) + SHARDS_SUFFIX


def write_shard(
    dataset: str,
    label: str,
    episodes: Sequence[Episode],
    environment_spec: specs.EnvironmentSpec,
    environment_id: str | None,
    metadata: dict | None = None,
) -> str | None:
    """Writes one actor's finished ``episodes`` as a dataset of its own in ``shards_directory(dataset)`` (a new
    folder per call, so a restarted actor adds one); None where there is no episode."""
    if not episodes:
        return None
    path = os.path.join(shards_directory(dataset), f"{label}-{os.getpid()}-{time.time_ns()}")
    return write_dataset(path, list(episodes), environment_spec, environment_id, metadata)


def merge_shards(
    dataset: str,
    environment_spec: specs.EnvironmentSpec,
    environment_id: str | None,
    metadata: dict | None = None,
    last: Sequence[Episode] = (),
) -> str:
    """Writes the episodes of every shard of ``dataset`` (in the order they were written), then ``last`` (a final
    part still in memory), as one dataset at ``dataset``, then removes the shards; ``acme_shards`` in its metadata
    counts the parts. Refuses where there is no episode."""
    shards = shards_directory(dataset)
    names = sorted(os.listdir(shards), key=lambda n: int(n.rsplit("-", 1)[-1])) if os.path.isdir(shards) else []
    episodes = [episode for name in names for episode in read_dataset(os.path.join(shards, name)).episodes]
    if not episodes and not last:
        raise ValueError(f"No actor recorded an episode for {dataset} (nothing in {shards}).")
    parts = len(names) + (1 if last else 0)
    path = write_dataset(
        dataset, [*episodes, *last], environment_spec, environment_id, {**(metadata or {}), "acme_shards": parts}
    )
    if os.path.isdir(shards):
        shutil.rmtree(shards)
    return path
