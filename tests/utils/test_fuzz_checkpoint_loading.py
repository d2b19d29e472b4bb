"""Generated damage to snapshots and checkpoints: every load ends in ``CheckpointError``, never a hang, a
traceback of another type or a tree that was not written.

A seeded generator damages an honest snapshot in ways an attacker or a failing disk would: truncation, flipped
bytes, random bytes, other JSON in the manifest and the structure (wrong types, deep nesting, huge or negative
counts, names of modules and classes that are not NamedTuples), leaves files that are not npz archives or hold
object arrays, and special files. Half of the damaged files get their sha256 updated in the manifest, as an
attacker would, so that the decoders behind the checksum are reached too. The cases are the same on every run.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import shutil
import warnings
from typing import Any, Callable, NamedTuple

import numpy as np
import pytest

from acme import snapshots
from acme.utils import checkpoint_files
from acme.utils.checkpoint_files import Checkpointer, CheckpointError

NUM_CASES = 160
MANIFEST, STRUCTURE, LEAVES = checkpoint_files.MANIFEST, checkpoint_files.STRUCTURE, checkpoint_files.LEAVES


class Pair(NamedTuple):
    first: Any
    second: Any


def _honest_tree() -> dict:
    return {
        "params": {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.zeros(3, np.float32)},
        "state": Pair(np.int32(3), [1.5, None, True]),
        "steps": 7,
    }


def _json_values(rng: random.Random) -> list:
    return [
        None,
        True,
        -1,
        2**63,
        10**400,
        float("nan"),
        "x" * rng.randint(0, 300),
        [],
        {},
        [[[[]]]],
        {"leaf": -1},
        {"leaf": True},
        {"leaf": 10**9},
        {"dict": [["a"]]},
        {"dict": "not a list"},
        {"namedtuple": "os:system", "fields": [], "children": []},
        {"namedtuple": "builtins:tuple", "fields": [], "children": []},
        {"namedtuple": "no.such.module:Thing", "fields": ["a"], "children": [{"leaf": 0}]},
        {"namedtuple": f"{__name__}:Pair", "fields": ["second", "first"], "children": []},
        {"tuple": [{"leaf": 0}, {"leaf": 0}]},
        {"none": 1},
        {"ordered_dict": [[1.5, {"none": None}]]},
    ]


def _deep(depth: int) -> bytes:
    """A structure of ``depth`` nested lists around one leaf, as JSON text (too deep for ``json.dumps``)."""
    return b'{"list": [' * depth + b'{"leaf": 0}' + b"]}" * depth


def _npz(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _damages(rng: random.Random) -> list[tuple[str, Callable[[bytes], bytes | None]]]:
    """``(file name, damage)`` pairs; a damage maps the file's bytes to new bytes (None: made a FIFO)."""

    def truncate(data: bytes) -> bytes:
        return data[: rng.randrange(len(data))]

    def flip(data: bytes) -> bytes:
        data = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        return bytes(data)

    def noise(data: bytes) -> bytes:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 2000)))

    def json_value(data: bytes) -> bytes:
        return json.dumps(rng.choice(_json_values(rng))).encode()

    def manifest_field(data: bytes) -> bytes:
        manifest = json.loads(data)
        key = rng.choice(["version", "num_leaves", "leaf_kinds", "sha256", "format"])  # each one matters
        values = _json_values(rng) + [["array"] * 1000, {"structure.json": "0" * 64}, 1, 2, 3, "acme-tree"]
        manifest[key] = rng.choice([value for value in values if value != manifest.get(key)])
        return json.dumps(manifest).encode()

    def structure_node(data: bytes) -> bytes:
        structure = json.loads(data)
        victim = rng.choice(structure["dict"])
        victim[1] = rng.choice(_json_values(rng))
        return json.dumps(structure).encode()

    def deep_structure(data: bytes) -> bytes:
        return _deep(rng.choice([500, 5000, 50000]))

    def other_leaves(data: bytes) -> bytes:
        return rng.choice(
            [
                _npz(leaf_00000=np.array([object()], dtype=object)),
                _npz(other=np.zeros(2)),
                _npz(**{f"leaf_{i:05d}": np.zeros(i) for i in range(2)}),
                b"PK\x03\x04" + bytes(100),
                np.lib.format.MAGIC_PREFIX + bytes(50),
            ]
        )

    def fifo(data: bytes) -> None:
        return None

    return [
        (rng.choice([MANIFEST, STRUCTURE, LEAVES]), truncate),
        (rng.choice([MANIFEST, STRUCTURE, LEAVES]), flip),
        (rng.choice([MANIFEST, STRUCTURE, LEAVES]), noise),
        (rng.choice([MANIFEST, STRUCTURE]), json_value),
        (MANIFEST, manifest_field),
        (STRUCTURE, structure_node),
        (STRUCTURE, deep_structure),
        (LEAVES, other_leaves),
        (rng.choice([MANIFEST, STRUCTURE, LEAVES]), fifo),
    ]


def _damage(directory: str, name: str, damage: Callable[[bytes], bytes | None], rng: random.Random) -> bool:
    """Applies ``damage`` to ``directory/name``; returns False if it left the file as it was."""
    path = os.path.join(directory, name)
    with open(path, "rb") as f:
        data = f.read()
    damaged = damage(data)
    os.remove(path)
    if damaged is None:
        os.mkfifo(path)
        return True
    with open(path, "wb") as f:
        f.write(damaged)
    if name != MANIFEST and rng.random() < 0.5:  # as an attacker would: the checksum made to match
        manifest_path = os.path.join(directory, MANIFEST)
        with open(manifest_path) as f:
            manifest = json.load(f)
        manifest["sha256"][name] = hashlib.sha256(damaged).hexdigest()
        with open(manifest_path, "w") as f:
            json.dump(manifest, f)
    return damaged != data


@pytest.mark.timeout(300)
def test_generated_damage_to_snapshots_and_checkpoints_is_refused_with_a_checkpoint_error(tmp_path):
    honest = snapshots.save_policy_snapshot(str(tmp_path / "honest"), _honest_tree(), {"agent": "dqn"})
    rng = random.Random(45)
    refused, failures, index = 0, [], 0
    while index < NUM_CASES:
        for name, damage in _damages(rng):
            target = str(tmp_path / f"case-{index}")
            shutil.copytree(honest, target)
            changed = _damage(target, name, damage, rng)
            loader = snapshots.load_policy_snapshot if index % 2 == 0 else _restore_as_checkpoint
            what = f"case {index} ({damage.__name__} of {name}, {loader.__name__})"
            try:
                loader(target)
            except CheckpointError:
                refused += 1
            except Exception as error:  # noqa: BLE001 - any other type is what this test exists to find
                failures.append(f"{what}: {type(error).__name__}: {str(error)[:200]}")
            else:
                if changed:
                    failures.append(f"{what} loaded although the file was damaged")
            finally:
                shutil.rmtree(target, ignore_errors=True)
            index += 1
    assert not failures, "\n".join(failures)
    assert refused >= NUM_CASES * 0.9, (refused, NUM_CASES)


def _restore_as_checkpoint(directory: str) -> None:
    """Reads ``directory`` as the only checkpoint of a checkpoint directory: every one unreadable is an error."""
    parent = directory + "-checkpoints"
    os.makedirs(parent)
    os.replace(directory, os.path.join(parent, "ckpt-1"))
    checkpointer = Checkpointer(parent)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", checkpoint_files.CorruptCheckpointWarning)
            checkpointer.restore_latest()
    finally:
        checkpointer.close()
        os.replace(os.path.join(parent, "ckpt-1"), directory)
        shutil.rmtree(parent)
