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
ACTOR_STEPS = "acme_actor_steps"  # the [first, last] shared actor counts a training run's recording covers
MISSING_STEPS = "acme_missing_steps"  # the [first, last] actor counts before the last that no recorded part covers


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


def training_run_metadata(config: Any, first_step: int | None = None, last_step: int | None = None) -> dict:
    """The metadata of episodes a training run's actors recorded: the agent (``config.agent``, the registry's
    name, where the config has one; else its builder's ``agent_name``), that a run made them, and with
    ``first_step`` and ``last_step`` the shared actor counts between which they were recorded
    (``acme_actor_steps``; ``merge_shards`` says from them which steps no part covers)."""
    builder = config.builder
    agent = getattr(config, "agent", "") or getattr(builder, "agent_name", type(builder).__name__)
    metadata = {"acme_agent": agent, "acme_source": "training run"}
    if first_step is not None and last_step is not None:
        if not 0 <= first_step <= last_step:
            raise ValueError(
                f"Recorded actor steps run from first_step >= 0 to last_step >= first_step, got {first_step} and "
                f"{last_step}."
            )
        metadata[ACTOR_STEPS] = [[int(first_step), int(last_step)]]
    return metadata


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
    part still in memory, described by ``metadata``), as one dataset at ``dataset``, then removes the shards;
    ``acme_shards`` in its metadata counts the parts. Where every part says which actor steps it covers
    (``acme_actor_steps``), the dataset says which steps before the last none covers (``acme_missing_steps``,
    with a note): those a run resumed past without a shard of them (killed, by SIGKILL say, after a checkpoint).
    Refuses where there is no episode."""
    shards = shards_directory(dataset)
    names = sorted(os.listdir(shards), key=lambda n: int(n.rsplit("-", 1)[-1])) if os.path.isdir(shards) else []
    parts = [read_dataset(os.path.join(shards, name)) for name in names]
    episodes = [episode for part in parts for episode in part.episodes]
    if not episodes and not last:
        raise ValueError(f"No actor recorded an episode for {dataset} (nothing in {shards}).")
    metadata = {**(metadata or {}), "acme_shards": len(names) + (1 if last else 0)}
    covered = [part.metadata.get(ACTOR_STEPS) for part in parts]
    if ACTOR_STEPS in metadata:  # the steps of the part in memory (which may have finished no episode)
        covered.append(metadata[ACTOR_STEPS])
    if covered and all(covered):
        metadata.update(coverage([span for spans in covered for span in spans]))
    else:  # some part does not say which steps it covers, so neither can the dataset
        metadata.pop(ACTOR_STEPS, None)
    path = write_dataset(dataset, [*episodes, *last], environment_spec, environment_id, metadata)
    if os.path.isdir(shards):
        shutil.rmtree(shards)
    return path


def coverage(spans: Sequence[Sequence[int]]) -> dict:
    """``acme_actor_steps`` (the ``[first, last]`` actor-step spans, joined where they meet or overlap) and
    ``acme_missing_steps`` (the spans from step 0 to the last that none covers), with a note where some are."""
    joined: list[list[int]] = []
    for first, last in sorted((int(a), int(b)) for a, b in spans):
        if joined and first <= joined[-1][1]:
            joined[-1][1] = max(joined[-1][1], last)
        else:
            joined.append([first, last])
    starts = [0] + [end for _, end in joined]
    missing = [[start, first] for start, (first, _) in zip(starts, joined) if first > start]
    metadata = {ACTOR_STEPS: joined, MISSING_STEPS: missing}
    if missing:
        gaps = ", ".join(f"{a} to {b}" for a, b in missing)
        metadata["acme_missing_note"] = (
            f"The episodes of actor steps {gaps} are not in this dataset: the run resumed from a checkpoint at the "
            "end of each such gap, and the attempt that acted them ended without writing them (killed by SIGKILL "
            "or with its machine), or was not recording."
        )
    return metadata
