"""Episode datasets on disk in Minari's format (minari 0.5.3 or 0.5.4, HDF5), written and read with Minari's library.

A dataset is a directory ``DIR`` holding ``DIR/data/metadata.json`` and ``DIR/data/main_data.hdf5``, as
``minari.MinariDataset(DIR + "/data")`` reads it (or ``minari.load_dataset(id, download=False)`` once it sits under
``MINARI_DATASETS_PATH``). Each episode stores its ``T + 1`` observations and its ``T`` actions, rewards,
terminations and truncations; observations and actions are stored losslessly (no JPEG encoding of images).
Minari's spaces are those of the stored data: discrete values are stored as int64 (its ``Discrete`` space's dtype)
and read back by this library in the spec's own dtype; a ``Box`` has the spec's bounds, -inf and inf where it has
none. A ``gymnasium:`` environment's spec is stored as Minari's ``env_spec``, so ``recover_environment()`` makes
it; for the other families ``acme_env_spec`` says why Minari cannot.

Besides Minari's own keys, the metadata names what made the data: the environment id and its spec (``acme_spec``,
the dtypes and shapes this library reads back and checks), the policy (``acme_agent``, ``acme_snapshot``,
``acme_exploration``), the episodes' returns and the library's version.

Reading checks a dataset's files before any library opens them: a folder with no dataset, a metadata file or HDF5
file that is not a regular file (a FIFO, a link to ``/dev/zero``), metadata over ``MAX_METADATA_BYTES`` or not
Minari's, an HDF5 file that is truncated or damaged: each is a ``DatasetError`` naming the folder or file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.metadata
import inspect
import json
import os
import shutil
import sys
import tempfile
from typing import Any, Iterator, Sequence

import dm_env
import numpy as np

from acme import specs
from acme.utils import regular_files

DATA_DIR = "data"  # where Minari's files sit inside a dataset directory
METADATA_FILE = "metadata.json"  # Minari's names for a dataset's two files
MAIN_FILE = "main_data.hdf5"
MAX_METADATA_BYTES = 64 << 20  # a dataset's metadata is a few kilobytes (its spaces' bounds: some hundreds for pixels)
_MINARI_KEYS = ("data_format", "dataset_id", "minari_version", "total_episodes", "total_steps")


class DatasetError(ValueError):
    """A folder that holds no dataset this library can read: no Minari dataset at all, or one whose metadata or
    HDF5 file is missing, not a regular file, too large, truncated or otherwise unreadable. The message names the
    folder or file and what is expected."""


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
    """The gymnasium space of a spec: ``Discrete`` for a ``DiscreteArray`` (whose values are stored as int64, the
    dtype Minari gives every ``Discrete`` space), ``Box`` for an array with its bounds (a bounded array's minimum
    and maximum; -inf and inf for an unbounded float array, the dtype's range for an unbounded integer one),
    ``Dict`` for a dict of specs."""
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
        if np.issubdtype(dtype, np.floating):
            return spaces.Box(-np.inf, np.inf, spec.shape, dtype)
        info = np.iinfo(dtype)
        return spaces.Box(info.min, info.max, spec.shape, dtype)
    raise TypeError(f"No Minari space for the spec {spec!r}: datasets hold arrays, discrete actions and dicts of them.")


def _stored(values: Any, spec: Any) -> Any:
    """``values`` as the dataset stores them under ``space_of(spec)``: discrete ones as int64 (the dtype of
    Minari's ``Discrete`` space, which ``minari`` reads back), every other array as it is."""
    if isinstance(spec, dict):
        return {key: _stored(values[key], value) for key, value in spec.items()}
    return np.asarray(values, np.int64) if isinstance(spec, specs.DiscreteArray) else values


def _as_recorded(values: Any, described: Any) -> Any:
    """Stored ``values`` back in the dtypes of the spec they were recorded under (``acme_spec``'s description):
    discrete ones from int64 to the spec's own dtype, which holds every one of their values."""
    if isinstance(described, dict) and "dtype" not in described:
        return {key: _as_recorded(values[key], value) for key, value in described.items()}
    if isinstance(described, dict) and "num_values" in described:
        return np.asarray(values, described["dtype"])
    return values


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
    env_spec, not_recoverable = gymnasium_env_spec(environment_id)
    storage = MinariStorage.new(
        data_path,
        observation_space=space_of(environment_spec.observations),
        action_space=space_of(environment_spec.actions),
        env_spec=env_spec,
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
            **({"acme_env_spec": not_recoverable} if not_recoverable else {}),
            **(metadata or {}),
        }
    )
    storage.update_episodes(
        [
            EpisodeBuffer(
                id=index,
                observations=_stored(episode.observations, environment_spec.observations),
                actions=_stored(episode.actions, environment_spec.actions),
                rewards=episode.rewards,
                terminations=episode.terminations,
                truncations=episode.truncations,
                infos={},
            )
            for index, episode in enumerate(episodes)
        ]
    )


def gymnasium_env_spec(environment_id: str | None) -> tuple[Any, str | None]:
    """``(EnvSpec, None)`` for a ``gymnasium:`` id: the registered environment, stored as the dataset's
    ``env_spec`` so that Minari's ``recover_environment()`` makes it. ``(None, why)`` for every other id: why
    Minari cannot make that environment, and how this library makes it."""
    if environment_id is None:
        return None, "none: no environment id was given when the dataset was written"
    prefix, _, name = environment_id.partition(":")
    make = f"acme.environments.make_environment({environment_id!r}) makes it"
    if prefix != "gymnasium":
        reason = {
            "memory": "it is a gymnasium environment with part of its observation hidden by this library",
            "atari": "its frames are preprocessed by this library (ale-py underneath)",
            "jax": "it is written in JAX in this library",
        }.get(prefix, f"{prefix} environments are not gymnasium environments")
        only = "Minari's recover_environment() makes registered gymnasium environments only"
        return None, f"none: {only}, and {reason}; {make}"
    import gymnasium

    try:
        return gymnasium.spec(name), None
    except gymnasium.error.Error as error:
        return None, f"none: gymnasium has no spec for {name!r} ({error}); {make}"


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
    """The folder of ``directory``'s dataset files (``directory`` itself or its ``data`` folder), refused unless it
    holds a readable Minari dataset's metadata and HDF5 file (``_read_metadata_file``, ``_check_main_file``)."""
    expected = (
        f"expected {os.path.join(directory, DATA_DIR, METADATA_FILE)} and {MAIN_FILE} beside it, as python -m "
        "baselines record --out DIR writes them"
    )
    if not os.path.isdir(directory):
        what = "does not exist" if not os.path.lexists(directory) else "is not a directory"
        raise DatasetError(f"No Minari dataset at {directory}: it {what}; {expected}.")
    in_place = os.path.lexists(os.path.join(directory, METADATA_FILE))  # the data folder itself was given
    data_path = directory if in_place else os.path.join(directory, DATA_DIR)
    if not os.path.lexists(os.path.join(data_path, METADATA_FILE)):
        raise DatasetError(f"No Minari dataset at {directory}: {expected}.")
    return data_path


def _read_metadata_file(data_path: str) -> dict:
    """The metadata of the dataset in ``data_path``: a regular file of at most ``MAX_METADATA_BYTES`` holding a
    JSON object with Minari's keys, of an HDF5 dataset."""
    path = os.path.join(data_path, METADATA_FILE)
    try:
        text = regular_files.read_regular_file(path, MAX_METADATA_BYTES)
    except OSError as error:  # missing, refused (a link, FIFO, device, too large) or unreadable
        raise DatasetError(f"The dataset metadata {path} cannot be read: {_one_line(error)}.") from None
    try:
        metadata = json.loads(text.decode())
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise DatasetError(
            f"The dataset metadata {path} is not JSON ({_one_line(error)}): a Minari dataset's metadata.json is "
            "a JSON object."
        ) from None
    if not isinstance(metadata, dict):
        raise DatasetError(f"The dataset metadata {path} is not a JSON object: not a Minari dataset's metadata.json.")
    missing = [key for key in _MINARI_KEYS if key not in metadata]
    if missing:
        raise DatasetError(
            f"The dataset metadata {path} lacks {', '.join(missing)}: it is not a Minari dataset's metadata.json."
        )
    if metadata["data_format"] != "hdf5":
        raise DatasetError(
            f"The dataset in {data_path} is stored as {metadata['data_format']!r}; this library reads Minari's "
            "HDF5 datasets (data_format 'hdf5'), as it writes them."
        )
    return metadata


def _check_main_file(data_path: str) -> None:
    """Refuses a dataset whose HDF5 file is missing, not a regular file, or does not open as HDF5 (truncated or
    overwritten): before Minari's library opens it by name."""
    import h5py

    path = os.path.join(data_path, MAIN_FILE)
    try:
        regular_files.check_regular_file(path, sys.maxsize)
    except OSError as error:  # missing, or refused (a link, FIFO, device)
        raise DatasetError(
            f"The dataset file {path} cannot be read: {_one_line(error)}; a dataset's {MAIN_FILE} is a regular file."
        ) from None
    try:
        with h5py.File(path, "r"):
            pass
    except OSError as error:
        raise DatasetError(
            f"The dataset file {path} is not a readable HDF5 file ({_one_line(error)}); the dataset's episodes are "
            "lost or damaged: record it again (python -m baselines record, or run --record)."
        ) from None


def _one_line(error: BaseException) -> str:
    """``error``'s message as part of one line (an error the command line prints is one paragraph)."""
    return " ".join(str(error).split())[:300].rstrip(".")


def _checked_data_path(directory: str) -> tuple[str, dict]:
    """``directory``'s dataset folder and metadata, every file checked before any library opens it."""
    data_path = _data_path(directory)
    metadata = _read_metadata_file(data_path)
    _check_main_file(data_path)
    return data_path, metadata


@contextlib.contextmanager
def _reading(data_path: str) -> Iterator[None]:
    """Turns what Minari's library or h5py raise on a damaged dataset into a ``DatasetError`` naming it."""
    try:
        yield
    except DatasetError:
        raise
    except (OSError, KeyError, IndexError, ValueError, TypeError, AssertionError, RuntimeError) as error:
        raise DatasetError(
            f"The dataset in {data_path} is damaged and cannot be read ({type(error).__name__}: {_one_line(error)}); "
            "record it again (python -m baselines record, or run --record)."
        ) from error


def _open(data_path: str):
    import minari

    with _reading(data_path):
        return minari.MinariDataset(data_path)


def read_metadata(directory: str) -> Dataset:
    """The dataset in ``directory`` without its episodes: its metadata, for ``check_spec`` before loading it (or
    before streaming it with ``stream_episodes``). Its files are checked as ``read_dataset`` checks them; a
    ``DatasetError`` where there is no readable dataset."""
    return Dataset([], _checked_data_path(directory)[1], path=directory)


def read_dataset(directory: str) -> Dataset:
    """Reads the Minari dataset in ``directory`` (the directory ``write_dataset`` wrote, or its ``data``
    folder) into memory with Minari's library. A ``DatasetError`` (naming the folder or file, and what is
    expected) where there is none, or where its metadata or HDF5 file is not a regular file, is too large,
    truncated or damaged."""
    data_path, metadata = _checked_data_path(directory)
    dataset = _open(data_path)
    with _reading(data_path):
        episodes = [_episode_of(e, metadata) for e in dataset.iterate_episodes()]
    return Dataset(episodes, metadata, path=directory)


def stream_episodes(directory: str, seed: int = 0, epochs: int | None = None) -> Iterator[Episode]:
    """The episodes of the Minari dataset in ``directory``, read from disk one at a time, each epoch in a fresh
    random order (``seed``); ``epochs`` passes over the data (None: without end). Only the episode being read is
    held in memory. A damaged dataset is refused as ``read_dataset`` refuses it (a part that is damaged only
    when it is read, then)."""
    if epochs is not None and (isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1):
        raise ValueError(f"epochs must be a positive integer or None (without end), got {epochs!r}.")
    data_path, metadata = _checked_data_path(directory)
    dataset = _open(data_path)
    if dataset.total_episodes == 0:
        raise ValueError(f"The dataset at {directory} holds no episodes, so there is nothing to stream.")
    order = np.random.default_rng(seed)
    epoch = 0
    while epochs is None or epoch < epochs:
        episodes = dataset.iterate_episodes(order.permutation(dataset.episode_indices))
        while True:
            with _reading(data_path):
                episode = next(episodes, None)
            if episode is None:
                break
            yield _episode_of(episode, metadata)
        epoch += 1


def _episode_of(episode: Any, metadata: dict) -> Episode:
    """Minari's ``EpisodeData`` as an ``Episode`` of numpy arrays, in the dtypes of the spec it was recorded under
    where the metadata has one (``acme_spec``)."""
    recorded = metadata.get("acme_spec") or {}
    return Episode(
        observations=_as_recorded(_arrays(episode.observations), recorded.get("observations")),
        actions=_as_recorded(np.asarray(episode.actions), recorded.get("actions")),
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
