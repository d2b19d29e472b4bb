"""Policy snapshots: a policy's parameters plus what is needed to rebuild it, in one directory.

A snapshot uses the checkpoint format of ``acme.utils.checkpoint_files`` (leaves
in ``leaves.npz``, structure, and a checksummed ``manifest.json`` whose
``metadata`` says which agent, environment and config the parameters belong
to), written atomically. Nothing here knows an algorithm: rebuilding the policy
from the metadata is the caller's job (see ``baselines.policy_export``).
"""

from __future__ import annotations

import os
from typing import Any

from acme.utils import checkpoint_files
from acme.utils.checkpoint_files import CheckpointError

SNAPSHOT_KIND = "policy_snapshot"


def save_policy_snapshot(directory: str, params: Any, metadata: dict) -> str:
    """Writes ``params`` (any pytree of arrays) and JSON-serialisable ``metadata`` to ``directory``.

    The write is atomic: an existing snapshot at ``directory`` is replaced only
    once the new one is complete. Returns the snapshot's absolute path.
    """
    if not isinstance(metadata, dict):
        raise TypeError(f"metadata must be a dict (agent, environment id, config, ...), got {type(metadata).__name__}.")
    path = os.path.abspath(directory)
    checkpoint_files.ensure_writable_dir(os.path.dirname(path), "policy snapshot's parent directory")
    metadata = checkpoint_files.json_normalise(metadata)
    try:
        checkpoint_files.atomic_write_dir(
            path, lambda tmp: checkpoint_files.write_tree(tmp, params, {"kind": SNAPSHOT_KIND, "metadata": metadata})
        )
    except OSError as error:
        raise CheckpointError(f"Could not write the policy snapshot {path}: {error.strerror or error}.") from error
    return path


def load_policy_snapshot(directory: str) -> tuple[Any, dict]:
    """Reads a snapshot written by ``save_policy_snapshot``: returns ``(params, metadata)``, params as numpy.

    Raises ``CheckpointError`` if ``directory`` is not a complete, intact snapshot.
    """
    path = os.path.abspath(directory)
    if not os.path.isdir(path):
        raise CheckpointError(
            f"No policy snapshot at {path}: it is not a directory. Give a directory written by "
            "save_policy_snapshot (e.g. baselines.policy_export.export_policy)."
        )
    params, manifest = checkpoint_files.read_tree(path)
    if manifest.get("kind") != SNAPSHOT_KIND:
        raise CheckpointError(
            f"{path} holds a {manifest.get('kind') or 'training checkpoint'}, not a policy snapshot; "
            "give a directory written by save_policy_snapshot."
        )
    return params, manifest.get("metadata", {})
