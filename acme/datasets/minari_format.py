"""Episode datasets on disk in Minari's format (minari 0.5.3 or 0.5.4, HDF5), written and read with Minari's library.

A dataset is a directory ``DIR`` holding ``DIR/data/metadata.json`` and ``DIR/data/main_data.hdf5``, as
``minari.MinariDataset(DIR + "/data")`` reads it (or ``minari.load_dataset(id, download=False)`` once it sits under
``MINARI_DATASETS_PATH``). Each episode stores its ``T + 1`` observations and its ``T`` actions, rewards,
terminations and truncations; observations and actions are stored losslessly (no JPEG encoding of images).

Besides Minari's own keys, the metadata names what made the data: the environment id and its spec (``acme_spec``,
the dtypes and shapes this library reads back and checks), the policy (``acme_agent``, ``acme_snapshot``,
``acme_exploration``), the episodes' returns and the library's version.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import inspect
import os
import shutil
import tempfile
from typing import Any, Iterator, Sequence

import dm_env
import numpy as np

from acme import specs

DATA_DIR = "data"  # where Minari's files sit inside a dataset directory


@dataclasses.dataclass
class Episode:
    """One episode: ``observations`` (a nest of ``[T + 1, ...]`` arrays), ``actions`` ``[T, ...]``, and ``rewards``,
    ``terminations``, ``truncations`` ``[T]``."""

    observations: Any
    actions: np.ndarray
    rewards: np.ndarray
    terminations: np.ndarray
    truncations: np.ndarray

    def __len__(self) -> int:
        return len(self.rewards)

    @property
    def episode_return(self) -> float:
        return float(np.sum(self.rewards))


class EpisodeRecorder:
    """Turns dm_env timesteps and actions into ``Episode``s: ``observe_first`` at an episode's first timestep,
    ``observe`` after each step; ``episodes`` holds the finished ones. An episode ends with termination where its
    last discount is 0, with truncation where it is not."""

    def __init__(self):
        self.episodes: list[Episode] = []
        self._observations: list[Any] = []
        self._actions: list[Any] = []
        self._rewards: list[float] = []

    def observe_first(self, timestep: dm_env.TimeStep) -> None:
        self._observations, self._actions, self._rewards = [timestep.observation], [], []

    def observe(self, action: Any, timestep: dm_env.TimeStep) -> None:
        if not self._observations:
            raise RuntimeError("EpisodeRecorder.observe came before observe_first: an episode must start first.")
        self._observations.append(timestep.observation)
        self._actions.append(np.asarray(action))
        self._rewards.append(float(timestep.reward))
        if timestep.last():
            terminated = float(timestep.discount) == 0.0
            steps = len(self._rewards)
            ends = np.zeros(steps, bool)
            self.episodes.append(
                Episode(
                    observations=_stack(self._observations),
                    actions=np.stack(self._actions),
                    rewards=np.asarray(self._rewards, np.float64),
                    terminations=ends | (np.arange(steps) == steps - 1) & terminated,
                    truncations=ends | (np.arange(steps) == steps - 1) & (not terminated),
                )
            )
            self._observations = []


def _stack(observations: Sequence[Any]) -> Any:
    first = observations[0]
    if isinstance(first, dict):
        return {key: np.stack([np.asarray(o[key]) for o in observations]) for key in first}
    return np.stack([np.asarray(o) for o in observations])


def space_of(spec: Any):
    """The gymnasium space of a spec: ``Discrete`` for a ``DiscreteArray``, ``Box`` for an array (its bounds where
    it has them), ``Dict`` for a dict of specs."""
    from gymnasium import spaces

    if isinstance(spec, dict):
        return spaces.Dict({key: space_of(value) for key, value in spec.items()})
    if isinstance(spec, specs.DiscreteArray):
        return spaces.Discrete(spec.num_values)
    if isinstance(spec, specs.BoundedArray):
        low = np.broadcast_to(spec.minimum, spec.shape).astype(spec.dtype)
        high = np.broadcast_to(spec.maximum, spec.shape).astype(spec.dtype)
        return spaces.Box(low, high, spec.shape, spec.dtype)
    if isinstance(spec, specs.Array):
        dtype = np.dtype(spec.dtype)
        info = np.finfo(dtype) if np.issubdtype(dtype, np.floating) else np.iinfo(dtype)
        return spaces.Box(info.min, info.max, spec.shape, dtype)
    raise TypeError(f"No Minari space for the spec {spec!r}: datasets hold arrays, discrete actions and dicts of them.")


def describe_spec(spec: Any, bounds: bool = False) -> Any:
    """A JSON description of a (nested) spec: shape, dtype, for discrete actions the number of values, and with
    ``bounds`` a bounded array's minimum and maximum (continuous actions: [-1, 1] for agents that act in the
    canonical range, the environment's own bounds otherwise)."""
    if isinstance(spec, dict):
        return {key: describe_spec(value, bounds) for key, value in spec.items()}
    described = {"shape": list(spec.shape), "dtype": np.dtype(spec.dtype).name}
    if isinstance(spec, specs.DiscreteArray):
        described["num_values"] = int(spec.num_values)
    elif bounds and isinstance(spec, specs.BoundedArray):
        described["minimum"] = np.broadcast_to(spec.minimum, spec.shape).astype(float).tolist()
        described["maximum"] = np.broadcast_to(spec.maximum, spec.shape).astype(float).tolist()
    return described


def library_version() -> str:
    try:
        return importlib.metadata.version("acme-jax")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def holds_dataset(directory: str) -> bool:
    """Whether ``directory`` already holds a dataset (its ``data`` folder), which ``write_dataset`` never
    overwrites: callers refuse such a directory before they record anything."""
    return os.path.exists(os.path.join(directory, DATA_DIR))


def write_dataset(
    directory: str,
    episodes: Sequence[Episode],
    environment_spec: specs.EnvironmentSpec,
    environment_id: str,
    metadata: dict | None = None,
) -> str:
    """Writes ``episodes`` as a new Minari dataset in ``directory`` (which must not hold one yet: nothing recorded
    is overwritten). ``metadata`` adds keys (the policy that acted, how it explored). Returns ``directory``."""
    if not episodes:
        raise ValueError("A dataset needs at least one finished episode; none was given.")
    directory = os.path.abspath(directory)  # minari 0.5.4 joins a relative data path onto itself when sizing it
    final_path = os.path.join(directory, DATA_DIR)
    if holds_dataset(directory):
        raise FileExistsError(
            f"{directory} already holds a dataset; write to a new directory (nothing is overwritten)."
        )
    # Written beside its place and moved there once complete, so a failure never leaves a half-written dataset.
    os.makedirs(os.path.dirname(directory), exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".writing-", dir=os.path.dirname(directory))
    try:
        _write_storage(os.path.join(staging, DATA_DIR), episodes, environment_spec, environment_id, metadata, directory)
        os.makedirs(directory, exist_ok=True)
        os.rename(os.path.join(staging, DATA_DIR), final_path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return directory


def _write_storage(data_path, episodes, environment_spec, environment_id, metadata, directory) -> None:
    import minari
    from minari.data_collector import EpisodeBuffer
    from minari.dataset.minari_storage import MinariStorage

    os.makedirs(data_path)
    # minari 0.5.4 JPEG-encodes image observations unless told not to; 0.5.3 (the Python 3.11 stack's, whose numpy
    # is 1.x) stores every array as it is.
    lossless = {"jpeg_encoding": False} if "jpeg_encoding" in inspect.signature(MinariStorage.new).parameters else {}
    storage = MinariStorage.new(
        data_path,
        observation_space=space_of(environment_spec.observations),
        action_space=space_of(environment_spec.actions),
        data_format="hdf5",
        **lossless,
    )
    returns = [e.episode_return for e in episodes]
    name = os.path.basename(os.path.normpath(directory)) or "dataset"
    storage.update_metadata(
        {
            "dataset_id": f"acme/{_identifier(name)}-v0",
            "algorithm_name": str((metadata or {}).get("acme_agent", "unknown")),
            "description": f"{len(episodes)} episodes of {environment_id} recorded by acme-jax",
            "minari_version": minari.__version__,
            "acme_environment_id": environment_id,
            "acme_spec": {
                "observations": describe_spec(environment_spec.observations),
                "actions": describe_spec(environment_spec.actions, bounds=True),
            },
            "acme_returns": {
                "mean": float(np.mean(returns)),
                "std": float(np.std(returns)),
                "min": float(np.min(returns)),
                "max": float(np.max(returns)),
            },
            "acme_version": library_version(),
            **(metadata or {}),
        }
    )
    storage.update_episodes(
        [
            EpisodeBuffer(
                id=index,
                observations=episode.observations,
                actions=episode.actions,
                rewards=episode.rewards,
                terminations=episode.terminations,
                truncations=episode.truncations,
                infos={},
            )
            for index, episode in enumerate(episodes)
        ]
    )


def _identifier(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "_-" else "_" for c in name).strip("-_") or "dataset"
    return cleaned.rsplit("-v", 1)[0] if cleaned.rsplit("-v", 1)[-1].isdigit() else cleaned


@dataclasses.dataclass
class Dataset:
    """A dataset read back: its episodes (none where only the metadata was read) and its metadata (Minari's and
    this library's keys)."""

    episodes: list[Episode]
    metadata: dict
    path: str = ""  # the directory it was read from

    @property
    def environment_id(self) -> str | None:
        return self.metadata.get("acme_environment_id")

    @property
    def num_steps(self) -> int:
        """The steps of its episodes (of the whole dataset on disk where only the metadata was read)."""
        if not self.episodes:
            return int(self.metadata.get("total_steps", 0))
        return sum(len(e) for e in self.episodes)


def _data_path(directory: str) -> str:
    data_path = (
        directory if os.path.exists(os.path.join(directory, "metadata.json")) else os.path.join(directory, DATA_DIR)
    )
    if not os.path.exists(os.path.join(data_path, "metadata.json")):
        raise FileNotFoundError(
            f"No Minari dataset at {directory}: expected {os.path.join(directory, DATA_DIR, 'metadata.json')} "
            "(python -m baselines record --out DIR writes one)."
        )
    return data_path


def read_metadata(directory: str) -> Dataset:
    """The dataset in ``directory`` without its episodes: its metadata, for ``check_spec`` before loading it (or
    before streaming it with ``stream_episodes``)."""
    from minari.dataset.minari_storage import MinariStorage

    return Dataset([], MinariStorage.read_raw_metadata(_data_path(directory)), path=directory)


def read_dataset(directory: str) -> Dataset:
    """Reads the Minari dataset in ``directory`` (the directory ``write_dataset`` wrote, or its ``data``
    folder) into memory with Minari's library; a clear error where there is none."""
    import minari

    dataset = minari.MinariDataset(_data_path(directory))
    episodes = [_episode_of(e) for e in dataset.iterate_episodes()]
    return Dataset(episodes, read_metadata(directory).metadata, path=directory)


def stream_episodes(directory: str, seed: int = 0, epochs: int | None = None) -> Iterator[Episode]:
    """The episodes of the Minari dataset in ``directory``, read from disk one at a time, each epoch in a fresh
    random order (``seed``); ``epochs`` passes over the data (None: without end). Only the episode being read is
    held in memory."""
    import minari

    if epochs is not None and (isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1):
        raise ValueError(f"epochs must be a positive integer or None (without end), got {epochs!r}.")
    dataset = minari.MinariDataset(_data_path(directory))
    if dataset.total_episodes == 0:
        raise ValueError(f"The dataset at {directory} holds no episodes, so there is nothing to stream.")
    order = np.random.default_rng(seed)
    epoch = 0
    while epochs is None or epoch < epochs:
        yield from map(_episode_of, dataset.iterate_episodes(order.permutation(dataset.episode_indices)))
        epoch += 1


def _episode_of(episode: Any) -> Episode:
    """Minari's ``EpisodeData`` as an ``Episode`` of numpy arrays."""
    return Episode(
        observations=_arrays(episode.observations),
        actions=np.asarray(episode.actions),
        rewards=np.asarray(episode.rewards),
        terminations=np.asarray(episode.terminations, bool),
        truncations=np.asarray(episode.truncations, bool),
    )


def _arrays(observations: Any) -> Any:
    if isinstance(observations, dict):
        return {key: np.asarray(value) for key, value in observations.items()}
    return np.asarray(observations)


def check_spec(dataset: Dataset, environment_spec: specs.EnvironmentSpec, where: str) -> None:
    """Refuses a dataset whose observations or actions are not those of ``environment_spec`` (shapes, dtypes, the
    number of discrete actions), saying which differ."""
    expected = {
        "observations": describe_spec(environment_spec.observations),
        "actions": describe_spec(environment_spec.actions, bounds=True),
    }
    recorded = dataset.metadata.get("acme_spec")
    if recorded is None:
        raise ValueError(
            f"The dataset at {where} has no acme_spec in its metadata (it was not written by this library), so its "
            f"observations and actions cannot be checked against the environment's: {expected}."
        )
    for part in ("observations", "actions"):
        if recorded.get(part) != expected[part]:
            raise ValueError(
                f"The dataset at {where} does not match the environment: its {part} are {recorded.get(part)}, "
                f"the environment's {expected[part]} (recorded on {dataset.environment_id!r})."
            )
