"""Generated damage to a recorded dataset: reading it ends in ``DatasetError`` (or reads what is there), never a
hang, a traceback of another type, or code run from the files.

A seeded generator damages an honest Minari dataset the ways a failing disk, a half-copied folder or an attacker
would: the metadata's fields replaced by other JSON (wrong types, huge or negative counts, another format, spaces
that are not spaces, an environment spec whose entry point would run a command if it were ever made), the
metadata or the HDF5 file truncated, overwritten in places or replaced by noise, and special files. Each damaged
dataset goes through the three readers the library uses (``read_metadata`` then ``check_spec``, ``read_dataset``,
``stream_episodes``). The cases are the same on every run.
"""

from __future__ import annotations

import json
import os
import random
import shutil

import pytest

from acme.datasets.minari_format import DatasetError, check_spec, read_dataset, read_metadata, stream_episodes
from tests.datasets.test_minari_format import random_episodes

NUM_CASES = 60


def _metadata_values(rng: random.Random, marker: str) -> list:
    command_spec = json.dumps(
        {"id": "Owned-v0", "entry_point": "os:system", "kwargs": {"command": f"touch {marker}"}, "max_episode_steps": 1}
    )
    return [
        None,
        True,
        -1,
        0,
        2**63,
        10**400,
        "x" * rng.randint(0, 200),
        [],
        {},
        [[[[]]]],
        "npz",
        '{"type": "Box", "dtype": "object", "shape": [4]}',
        '{"type": "Discrete", "dtype": "int64", "start": 0, "n": -5}',
        '{"type": "NoSuchSpace"}',
        "not json at all {",
        command_spec,
        {"observations": {"shape": [10**9], "dtype": "float32"}, "actions": {"shape": [], "dtype": "int32"}},
        {"observations": "float32", "actions": None},
    ]


def _damages(rng: random.Random, marker: str):
    """``(file, damage)`` pairs; a damage takes the file's path and changes it."""

    def metadata_field(path: str) -> None:
        with open(path) as f:
            metadata = json.load(f)
        key = rng.choice(
            ["total_episodes", "total_steps", "data_format", "observation_space", "action_space", "env_spec"]
            + ["dataset_id", "minari_version", "acme_spec", "acme_environment_id"]
        )
        metadata[key] = rng.choice(_metadata_values(rng, marker))
        with open(path, "w") as f:
            json.dump(metadata, f)

    def truncate(path: str) -> None:
        os.truncate(path, rng.randrange(os.path.getsize(path)))

    def overwrite(path: str) -> None:
        size = os.path.getsize(path)
        with open(path, "r+b") as f:
            for _ in range(rng.randint(1, 16)):
                f.seek(rng.randrange(size))
                f.write(bytes(rng.randrange(256) for _ in range(rng.randint(1, 64))))

    def noise(path: str) -> None:
        with open(path, "wb") as f:
            f.write(bytes(rng.randrange(256) for _ in range(rng.randint(0, 4000))))

    def fifo(path: str) -> None:
        os.remove(path)
        os.mkfifo(path)

    metadata, main = "metadata.json", "main_data.hdf5"
    return [
        (metadata, metadata_field),
        (metadata, metadata_field),
        (rng.choice([metadata, main]), truncate),
        (main, overwrite),
        (rng.choice([metadata, main]), noise),
        (rng.choice([metadata, main]), fifo),
    ]


def _read_every_way(directory: str, spec) -> None:
    check_spec(read_metadata(directory), spec, directory)
    read_dataset(directory)
    for _ in stream_episodes(directory, epochs=1):
        pass


@pytest.mark.timeout(300)
def test_generated_damage_to_a_dataset_is_refused_with_a_dataset_error_and_runs_nothing(tmp_path):
    from acme.datasets.minari_format import write_dataset

    episodes, spec = random_episodes("gymnasium:CartPole-v1", 3)
    honest = str(tmp_path / "honest")
    write_dataset(honest, episodes, spec, "gymnasium:CartPole-v1")
    _read_every_way(honest, spec)
    marker = str(tmp_path / "owned")
    rng = random.Random(45)
    refused, failures, index = 0, [], 0
    while index < NUM_CASES:
        for name, damage in _damages(rng, marker):
            target = str(tmp_path / f"case-{index}")
            shutil.copytree(honest, target)
            damage(os.path.join(target, "data", name))
            what = f"case {index} ({damage.__name__} of {name})"
            try:
                _read_every_way(target, spec)
            except DatasetError:
                refused += 1
            except ValueError as error:  # check_spec's refusal of a dataset of another spec
                if "does not match the environment" not in str(error):
                    failures.append(f"{what}: ValueError not about the spec: {str(error)[:200]}")
                refused += 1
            except Exception as error:  # noqa: BLE001 - any other type is what this test exists to find
                failures.append(f"{what}: {type(error).__name__}: {str(error)[:200]}")
            finally:
                shutil.rmtree(target, ignore_errors=True)
            index += 1
    assert not os.path.exists(marker), "reading a dataset ran the command its environment spec names"
    assert not failures, "\n".join(failures)
    assert refused >= NUM_CASES * 0.6, (refused, NUM_CASES)  # overwritten HDF5 data (no checksums) may still read
