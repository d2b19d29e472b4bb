"""Atomic, checksummed checkpoints of pytrees (learner states, counters, parameters).

A checkpoint is a directory ``ckpt-<step>`` holding

- ``leaves.npz``: every leaf of the tree as a numpy array (``leaf_00000``, ...);
- ``structure.json``: the tree's containers (dicts, lists, tuples, NamedTuples)
  as plain JSON data (``acme.utils.tree_structure``), so the tree comes back
  with its original containers and reading a checkpoint never runs code;
- ``manifest.json``: format and version, step, user metadata, how each leaf was
  stored (array or python scalar) and the sha256 of the two files above;
- optionally, attached directories (e.g. a reverb replay checkpoint), moved in
  whole, with the sha256 of each of their files in the manifest.

Writes go into a temporary directory inside ``directory``, every file and the
directory are fsynced, and the directory is renamed into place with
``os.replace``; a crash at any point leaves the previous checkpoints as they
were. Nothing in this module needs reverb.

Version 1 of the format pickled the structure (``structure.pkl``); unpickling
a file can run any code, so such checkpoints are refused with a message that
names ``python -m acme.utils.legacy_checkpoints``, which converts them.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import re
import shutil
import socket
import sys
import tempfile
import threading
import warnings
from typing import Any, Callable, Mapping

import jax
import numpy as np

from acme.utils import regular_files, tree_structure

FORMAT = "acme-tree"
VERSION = 2
MANIFEST = "manifest.json"
LEAVES = "leaves.npz"
STRUCTURE = "structure.json"
LEGACY_VERSION = 1  # structure pickled in structure.pkl; see acme.utils.legacy_checkpoints
LEGACY_STRUCTURE = "structure.pkl"
_TMP_PREFIX = ".tmp-"
# The most each of a checkpoint's own files may hold: a manifest is a page of metadata, the structure a JSON
# description of the containers, the leaves every array of a learner state (local replay tables included). A file
# over its limit is refused before it is read; none is ever near these in a real checkpoint.
MAX_FILE_BYTES = {MANIFEST: 16 << 20, STRUCTURE: 256 << 20, LEGACY_STRUCTURE: 256 << 20, LEAVES: 64 << 30}
_CKPT_RE = re.compile(r"^ckpt-(\d+)$")


class CheckpointError(Exception):
    """A checkpoint could not be written or read (unwritable directory, corrupt files, ...)."""


class CheckpointMismatchError(CheckpointError):
    """A checkpoint's metadata differs from what the caller expects (other agent, other network shapes)."""


class LegacyFormatError(CheckpointError):
    """A checkpoint of format version 1, whose pickled structure could run code if it were loaded."""


class DirectoryInUseError(CheckpointError):
    """Another process holds the checkpoint directory: two runs writing one directory would overwrite each other."""


class CorruptCheckpointWarning(UserWarning):
    """A checkpoint was unreadable and was skipped in favour of an older one."""


# ----------------------------------------------------------------------------------------------
# Helpers shared with acme.snapshots.


def tree_signature(tree: Any) -> str:
    """A string of the tree's structure and every leaf's shape and dtype.

    Two trees with the same signature can be restored into each other; use it in
    checkpoint metadata to detect a network of a different shape.
    """
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    parts = []
    for leaf in leaves:
        if isinstance(leaf, (bool, int, float)) and not isinstance(leaf, np.generic):
            parts.append(type(leaf).__name__)
        else:
            array = np.asarray(leaf)
            parts.append(f"{array.dtype.name}{list(array.shape)}")
    return f"{treedef}|{';'.join(parts)}"


_NAMEDTUPLE_NAME = re.compile(r"namedtuple\[[^\]]*\]")


def signatures_match(stored: str | None, fresh: str) -> bool:
    """Whether a stored ``tree_signature`` fits a fresh one: the same containers, shapes and dtypes.

    NamedTuple class names are not compared: a state type renamed or shared
    between agents (TD3's and D4PG's ``TrainingState`` became the shared
    ``ActorCriticState``) keeps its checkpoints loadable. Decoding a checkpoint
    still checks each NamedTuple's field names.
    """
    if stored is None:
        return False
    return _NAMEDTUPLE_NAME.sub("namedtuple", stored) == _NAMEDTUPLE_NAME.sub("namedtuple", fresh)


def _json_dumps(value: Any, what: str) -> str:
    try:
        return json.dumps(value, indent=2, sort_keys=True, allow_nan=True)
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"{what} must be JSON-serialisable (dicts, lists, strings, numbers, booleans, None): {error}."
        ) from error


def json_normalise(value: Any) -> Any:
    """``value`` as it reads back from JSON (tuples become lists, keys strings)."""
    return json.loads(_json_dumps(value, "metadata"))


def _write_file(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems do not support fsync on directories
    finally:
        os.close(fd)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def hash_directory(directory: str, fsync: bool = False) -> dict[str, str]:
    """``{relative path: sha256}`` of every file under ``directory`` (fsyncing each file with ``fsync``)."""
    hashes = {}
    for root, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(root, name)
            hashes[os.path.relpath(path, directory)] = _file_sha256(path)
            if fsync:
                with open(path, "rb") as f:
                    os.fsync(f.fileno())
        if fsync:
            _fsync_dir(root)
    return dict(sorted(hashes.items()))


def _attachment_path(directory: str, name: Any, expected: Any) -> str:
    """Where attachment ``name`` of the checkpoint in ``directory`` is; refuses a name that leads out of it."""
    own_files = (LEAVES, STRUCTURE, LEGACY_STRUCTURE, MANIFEST)
    plain = isinstance(name, str) and "\0" not in name and os.path.basename(name) == name
    if not plain or name in ("", ".", "..", *own_files):
        raise CheckpointError(
            f"{os.path.join(directory, MANIFEST)} names the attachment {name!r}; attachments are directories "
            "directly inside the checkpoint, named by a plain file name (no '/', '..' or absolute path)."
        )
    path = os.path.join(directory, name)
    # Hashing reads every file: none may be a link out of the checkpoint, or a pipe or device that never ends.
    odd = [path] if os.path.islink(path) else []
    for root, dirs, files in [] if odd else os.walk(path):
        odd += [os.path.join(root, entry) for entry in dirs if os.path.islink(os.path.join(root, entry))]
        odd += [
            os.path.join(root, entry)
            for entry in files
            if os.path.islink(os.path.join(root, entry)) or not os.path.isfile(os.path.join(root, entry))
        ]
    if odd:
        raise CheckpointError(
            f"The attachment {path} is or holds links, pipes or devices ({', '.join(odd[:3])}); attachments hold "
            "plain files and directories only."
        )
    if not isinstance(expected, dict) or not all(isinstance(v, str) for v in expected.values()):
        raise CheckpointError(
            f"{os.path.join(directory, MANIFEST)} lists attachment {name!r} as {str(expected)[:80]!r}; expected a "
            "mapping of file names to sha256 digests."
        )
    return path


def verify_attachments(directory: str, manifest: Mapping[str, Any]) -> None:
    """Checks every attached directory of a checkpoint against the hashes in its manifest.

    Attachment names are checked before anything is read: a name that is not a
    plain file name (``../x``, an absolute path) or a link raises ``CheckpointError``.
    """
    attachments = manifest.get("attachments", {})
    if not isinstance(attachments, dict):
        raise CheckpointError(
            f"{os.path.join(directory, MANIFEST)} lists its attachments as a {type(attachments).__name__}; "
            "expected a mapping of attachment names to file hashes."
        )
    paths = {name: _attachment_path(directory, name, expected) for name, expected in attachments.items()}
    for name, expected in attachments.items():
        path = paths[name]
        if not os.path.isdir(path):
            raise CheckpointError(f"{directory} lacks its attached directory {name!r}.")
        actual = hash_directory(path)
        missing = sorted(set(expected) - set(actual))
        if missing:
            raise CheckpointError(f"{path} is incomplete: {missing} are missing.")
        damaged = sorted(f for f in expected if actual[f] != expected[f])
        if damaged:
            raise CheckpointError(f"{path} is corrupt or truncated: the sha256 of {damaged} differs from the manifest.")


def write_tree(directory: str, tree: Any, extra: Mapping[str, Any]) -> None:
    """Writes ``tree`` into the existing, empty ``directory`` (leaves, structure, manifest; fsynced).

    ``extra`` goes into the manifest (it must be JSON-serialisable). The tree may
    hold dicts, lists, tuples, module-level NamedTuples and None around arrays
    and python scalars (``acme.utils.tree_structure``).
    """
    try:
        structure, leaves = tree_structure.encode(tree)
    except tree_structure.StructureError as error:
        raise TypeError(str(error)) from error
    kinds, arrays = [], {}
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, (bool, int, float)) and not isinstance(leaf, np.generic):
            kinds.append(type(leaf).__name__)
        else:
            kinds.append("array")
        array = np.asarray(jax.device_get(leaf))
        if array.dtype == object:
            raise TypeError(
                f"Leaf {i} of the tree is a {type(leaf).__name__}, which cannot be stored as an array; "
                "checkpoints accept trees of numpy/jax arrays and python scalars."
            )
        arrays[f"leaf_{i:05d}"] = array
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    leaves_bytes = buffer.getvalue()
    structure_bytes = json.dumps(structure, separators=(",", ":")).encode()
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "num_leaves": len(leaves),
        "leaf_kinds": kinds,
        "sha256": {LEAVES: _sha256(leaves_bytes), STRUCTURE: _sha256(structure_bytes)},
        **extra,
    }
    manifest_text = _json_dumps(manifest, "Checkpoint metadata")
    _write_file(os.path.join(directory, LEAVES), leaves_bytes)
    _write_file(os.path.join(directory, STRUCTURE), structure_bytes)
    _write_file(os.path.join(directory, MANIFEST), manifest_text.encode())  # last: its presence marks completeness
    _fsync_dir(directory)


def read_manifest(directory: str) -> dict:
    """The manifest of the checkpoint or snapshot in ``directory``, of any format version.

    Raises ``CheckpointError`` if it is missing, unreadable or not of this format.
    """
    manifest_path = os.path.join(directory, MANIFEST)
    try:
        manifest = json.loads(regular_files.read_regular_file(manifest_path, MAX_FILE_BYTES[MANIFEST]).decode())
    except FileNotFoundError:
        raise CheckpointError(f"{directory} has no {MANIFEST} (missing or incompletely written).") from None
    except regular_files.FileRefusedError as error:
        raise CheckpointError(str(error)) from None
    except RecursionError:
        raise CheckpointError(f"{manifest_path} is nested too deeply to be a manifest.") from None
    except (OSError, ValueError) as error:
        raise CheckpointError(f"{manifest_path} is unreadable: {str(error)[:200]}.") from error
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CheckpointError(f"{manifest_path} is not a manifest of format {FORMAT!r}.")
    return manifest


def read_verified(directory: str, name: str, manifest: Mapping[str, Any]) -> bytes:
    """The bytes of file ``name`` of a checkpoint, checked against the manifest's sha256.

    Raises ``CheckpointError`` if it is missing, unreadable, truncated or altered.
    """
    path = os.path.join(directory, name)
    try:
        data = regular_files.read_regular_file(path, MAX_FILE_BYTES.get(name, MAX_FILE_BYTES[LEAVES]))
    except regular_files.FileRefusedError as error:
        raise CheckpointError(str(error)) from None
    except OSError as error:
        raise CheckpointError(f"{path} is missing or unreadable: {error.strerror or error}.") from error
    digests = manifest.get("sha256")
    if not isinstance(digests, dict):
        raise CheckpointError(
            f"{os.path.join(directory, MANIFEST)} lists its checksums as {str(digests)[:80]!r}; expected a mapping "
            "of file names to sha256 digests."
        )
    expected = digests.get(name)
    actual = _sha256(data)
    if actual != expected:
        raise CheckpointError(
            f"{path} is corrupt or truncated: sha256 {actual[:12]}... differs from the manifest's "
            f"{str(expected)[:12]}... ({len(data)} bytes)."
        )
    return data


def read_tree(directory: str) -> tuple[Any, dict]:
    """Reads what ``write_tree`` wrote: returns ``(tree, manifest)``; leaves come back as numpy arrays.

    Runs no code from the files: the structure is JSON data and the leaves are
    loaded without pickle. Raises ``LegacyFormatError`` for a version-1
    checkpoint (pickled structure) and ``CheckpointError`` saying what is
    missing, truncated or mismatched otherwise.
    """
    manifest = read_manifest(directory)
    if manifest.get("version") == LEGACY_VERSION:
        raise LegacyFormatError(
            f"{directory} was written in checkpoint format version {LEGACY_VERSION}, whose {LEGACY_STRUCTURE} is a "
            "pickle: loading it could run any code placed in the file, so this library no longer loads it. If you "
            f"trust where it came from, convert it in place with: python -m acme.utils.legacy_checkpoints {directory}"
        )
    if manifest.get("version") != VERSION:
        raise CheckpointError(
            f"{os.path.join(directory, MANIFEST)} has format version {manifest.get('version')!r}; this library reads "
            f"version {VERSION}."
        )
    contents = {name: read_verified(directory, name, manifest) for name in (LEAVES, STRUCTURE)}
    try:
        structure = json.loads(contents[STRUCTURE].decode())
        num_leaves, kinds = manifest["num_leaves"], manifest["leaf_kinds"]
        if not isinstance(num_leaves, int) or not isinstance(kinds, list) or len(kinds) != num_leaves:
            raise ValueError(f"the manifest lists {num_leaves!r} leaves of {len(kinds)} kinds")
        arrays = load_leaves(directory, contents[LEAVES], num_leaves)
        leaves = [array if kind == "array" else _SCALAR_KINDS[kind](array.item()) for kind, array in zip(kinds, arrays)]
        tree = tree_structure.decode(structure, leaves)
    except CheckpointError:
        raise
    except Exception as error:  # noqa: BLE001 - any decoding failure means the same thing
        raise CheckpointError(
            f"{directory} could not be decoded: {type(error).__name__}: {str(error).rstrip('.')}."
        ) from error
    return tree, manifest


_SCALAR_KINDS = {"bool": bool, "int": int, "float": float}


def load_leaves(directory: str, data: bytes, num_leaves: int) -> list[np.ndarray]:
    """The arrays ``leaf_00000`` .. of a checkpoint's ``leaves.npz`` (its bytes ``data``), read without pickle.

    Raises ``CheckpointError`` for a file that is not an npz archive, a missing
    leaf, or a leaf that only unpickling could read (an object array).
    """
    path = os.path.join(directory, LEAVES)
    try:
        npz = np.load(io.BytesIO(data), allow_pickle=False)
    except Exception as error:  # noqa: BLE001 - a pickle, a bad zip: refused alike, nothing is unpickled
        raise CheckpointError(
            f"{path} is not an npz archive of arrays (it was not unpickled): {str(error).rstrip('.')}."
        ) from error
    if not isinstance(npz, np.lib.npyio.NpzFile):
        raise CheckpointError(f"{path} holds a single array, not an npz archive of leaf_00000, leaf_00001, ...")
    arrays = []
    with npz:
        for i in range(num_leaves):
            key = f"leaf_{i:05d}"
            if key not in npz.files:
                raise CheckpointError(f"{path} has no {key}: the manifest lists {num_leaves} leaves.")
            try:
                arrays.append(npz[key])
            except ValueError as error:  # allow_pickle=False: an object array is refused, not unpickled
                raise CheckpointError(
                    f"{path}: {key} is not a plain array ({str(error).rstrip('.')}); checkpoint leaves are "
                    "numeric arrays read without pickle, so object arrays are refused."
                ) from error
    return arrays


def atomic_write_dir(target: str, write: Callable[[str], None], on_error: Callable[[str], None] | None = None) -> None:
    """Calls ``write(tmp_dir)`` on a fresh temporary sibling of ``target``, then renames it to ``target``.

    An existing ``target`` is replaced only once the new one is complete. On any
    error ``on_error(tmp_dir)`` is called (to take back what ``write`` moved in),
    the temporary directory is removed and ``target`` is left as it was.
    """
    parent = os.path.dirname(os.path.abspath(target))
    tmp = tempfile.mkdtemp(prefix=_TMP_PREFIX + os.path.basename(target) + "-", dir=parent)
    old = None
    try:
        write(tmp)
        _fsync_dir(tmp)
        if os.path.exists(target):
            # os.replace cannot replace a non-empty directory: move the old one aside first.
            old = tempfile.mkdtemp(prefix=_TMP_PREFIX + "old-", dir=parent)
            os.replace(target, os.path.join(old, "x"))
        os.replace(tmp, target)
        _fsync_dir(parent)
    except BaseException:
        if on_error is not None and os.path.isdir(tmp):
            on_error(tmp)
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and not os.path.exists(target) and os.path.exists(os.path.join(old, "x")):
            os.replace(os.path.join(old, "x"), target)  # put the previous version back
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def ensure_writable_dir(directory: str, what: str = "checkpoint directory") -> str:
    """Creates ``directory`` if needed and checks that files can be written there; returns its absolute path."""
    path = os.path.abspath(directory)
    try:
        os.makedirs(path, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=_TMP_PREFIX + "probe-", dir=path)
        os.close(fd)
        os.remove(probe)
    except OSError as error:
        raise CheckpointError(
            f"Cannot use {path} as the {what}: {error.strerror or error}. Give a directory that exists or can be "
            "created, and that this process can write to."
        ) from error
    return path


# ----------------------------------------------------------------------------------------------
# One writer per directory.

LOCK = ".lock"  # inside the directory: an flock held by the run that writes there, and who that run is
_HOLDS: dict[str, list] = {}  # directory -> [open lock file, number of holders in this process]
_HOLDS_LOCK = threading.Lock()


def _holder_of(path: str) -> str:
    try:
        text = regular_files.read_regular_file(path, 4096).decode(errors="replace").strip()
    except OSError:
        return "another process (its details are unreadable)"
    return " ".join(text.split())[:300] or "another process"


def hold_directory(directory: str, label: str = "checkpoint") -> bool:
    """Holds ``directory`` for this process until ``release_directory`` (or the process's end, however it ends).

    The hold is an ``flock`` on ``<directory>/.lock``, which the kernel lets go when the holder's process dies,
    even by SIGKILL, so a crashed run never leaves the directory stuck. Holding it again in the same process is
    shared (counted). Raises ``DirectoryInUseError`` naming the holder (PID, host, command) when another process
    holds it.
    """
    path = os.path.abspath(directory)
    with _HOLDS_LOCK:
        held = _HOLDS.get(path)
        if held is not None:
            held[1] += 1
            return False
        lock_path = os.path.join(path, LOCK)
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError as error:
            raise CheckpointError(
                f"Cannot open {lock_path}, which marks the run writing to this {label} directory: "
                f"{error.strerror or error}. It must be a regular file this process can write."
            ) from error
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise DirectoryInUseError(
                f"The {label} directory {path} is in use by another run: {_holder_of(lock_path)}. Two runs writing "
                "one directory would overwrite each other's checkpoints. Wait for that run to end (or stop it), or "
                "give this run another directory."
            ) from None
        holder = f"PID {os.getpid()} on {socket.gethostname()}, started with: {' '.join(sys.argv)[:200]}\n"
        os.ftruncate(fd, 0)
        os.pwrite(fd, holder.encode(), 0)
        _HOLDS[path] = [fd, 1]
        return True


def release_directory(directory: str) -> None:
    """Lets go of one hold of this process on ``directory`` (see ``hold_directory``); the last one unlocks it."""
    path = os.path.abspath(directory)
    with _HOLDS_LOCK:
        held = _HOLDS.get(path)
        if held is None:
            return
        held[1] -= 1
        if held[1] == 0:
            del _HOLDS[path]
            os.close(held[0])  # closing the descriptor releases the flock


# ----------------------------------------------------------------------------------------------
# The checkpointer.


class Checkpointer:
    """Keeps the newest ``keep`` checkpoints of a pytree in ``directory`` (``ckpt-<step>``).

    ``save`` writes atomically; ``restore_latest`` returns the newest readable
    checkpoint, skipping (with a ``CorruptCheckpointWarning``) any that are
    missing files, truncated or fail their checksum.

    An ``exclusive`` checkpointer (the default) holds the directory for its process (``hold_directory``) until
    ``close``: a second process's is refused with ``DirectoryInUseError``. A node of a distributed run whose
    driver holds the directory opens it with ``exclusive=False``.
    """

    def __init__(self, directory: str, keep: int = 3, label: str = "checkpoint", exclusive: bool = True):
        if not isinstance(keep, int) or isinstance(keep, bool) or keep < 1:
            raise ValueError(f"keep must be an integer >= 1 (how many checkpoints to keep), got {keep!r}.")
        self._label = label
        self._keep = keep
        self._directory = ensure_writable_dir(directory, f"{label} directory")
        self._holds = exclusive
        if exclusive and hold_directory(self._directory, label):
            self._remove_stale_temporaries()  # only a new holder may: another's may be a checkpoint being written

    def close(self) -> None:
        """Lets go of the directory (``exclusive``); the checkpointer is not used afterwards. Safe to call twice."""
        if self._holds:
            self._holds = False
            release_directory(self._directory)

    @property
    def directory(self) -> str:
        return self._directory

    def _remove_stale_temporaries(self) -> None:
        # Left by a process that died mid-write; never visible to restore_latest anyway.
        for name in os.listdir(self._directory):
            if name.startswith(_TMP_PREFIX):
                shutil.rmtree(os.path.join(self._directory, name), ignore_errors=True)

    def _path(self, step: int) -> str:
        return os.path.join(self._directory, f"ckpt-{step}")

    def list_checkpoints(self) -> list[int]:
        """Steps of the complete-looking checkpoint directories, oldest first (contents not verified)."""
        steps = []
        for name in os.listdir(self._directory):
            match = _CKPT_RE.match(name)
            if match and os.path.isdir(os.path.join(self._directory, name)):
                steps.append(int(match.group(1)))
        return sorted(steps)

    def latest_step(self) -> int | None:
        """The newest checkpoint's step, or None when there is none (contents not verified)."""
        steps = self.list_checkpoints()
        return steps[-1] if steps else None

    def path(self, step: int) -> str:
        """Where the checkpoint of ``step`` is (or would be) written."""
        return self._path(step)

    def save(self, state: Any, step: int, metadata: dict | None = None, attach: Mapping[str, str] | None = None) -> str:
        """Writes ``state`` as ``ckpt-<step>`` and prunes to the newest ``keep``; returns its path.

        ``metadata`` must be JSON-serialisable; ``restore_latest(expect_metadata=...)`` checks it.
        ``attach`` maps names to directories that are *moved* into the checkpoint
        (``ckpt-<step>/<name>``, same file system) and checksummed with it; if
        the write fails they are moved back.
        """
        if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 0:
            raise ValueError(f"step must be a non-negative integer, got {step!r}.")
        step = int(step)
        metadata = json_normalise(dict(metadata or {}))
        attach = dict(attach or {})
        for name, source in attach.items():
            if not name or os.sep in name or name in (LEAVES, STRUCTURE, LEGACY_STRUCTURE, MANIFEST):
                raise ValueError(
                    f"Attachment names must be plain file names other than the checkpoint's own, got {name!r}."
                )
            if not os.path.isdir(source):
                raise CheckpointError(f"Cannot attach {source} to {self._label} {step}: it is not a directory.")
        target = self._path(step)

        def write(tmp: str) -> None:
            hashes = {}
            for name, source in attach.items():
                os.replace(source, os.path.join(tmp, name))
                hashes[name] = hash_directory(os.path.join(tmp, name), fsync=True)
            extra = {"label": self._label, "step": step, "metadata": metadata}
            if hashes:
                extra["attachments"] = hashes
            write_tree(tmp, state, extra)

        def give_back(tmp: str) -> None:  # a failed write returns the attached directories where they were
            for name, source in attach.items():
                if os.path.isdir(os.path.join(tmp, name)) and not os.path.exists(source):
                    os.replace(os.path.join(tmp, name), source)

        try:
            atomic_write_dir(target, write, on_error=give_back)
        except OSError as error:
            raise CheckpointError(f"Could not write {self._label} {target}: {error.strerror or error}.") from error
        for old in self.list_checkpoints()[: -self._keep]:
            shutil.rmtree(self._path(old), ignore_errors=True)
        return target

    def restore_latest(self, expect_metadata: Mapping[str, Any] | None = None) -> tuple[Any, int, dict] | None:
        """Returns ``(state, step, metadata)`` of the newest readable checkpoint, or None if there is none.

        Unreadable checkpoints are skipped with a warning naming them; if none is
        readable, raises ``CheckpointError`` listing them. With ``expect_metadata``,
        any key whose stored value differs raises ``CheckpointMismatchError``.
        """
        steps = self.list_checkpoints()
        if not steps:
            return None
        corrupt = []
        for step in reversed(steps):
            path = self._path(step)
            try:
                state, manifest = read_tree(path)
                verify_attachments(path, manifest)
            except LegacyFormatError:
                raise  # an older checkpoint is no way around it: the user must convert or start afresh
            except CheckpointError as error:
                corrupt.append(f"{path} ({error})")
                warnings.warn(
                    f"Skipping unreadable {self._label} {path}: {error} Falling back to an older one.",
                    CorruptCheckpointWarning,
                    stacklevel=2,
                )
                continue
            metadata = manifest.get("metadata", {})
            if expect_metadata:
                self._check_metadata(path, metadata, expect_metadata)
            return state, int(manifest.get("step", step)), metadata
        raise CheckpointError(
            f"Every {self._label} in {self._directory} is unreadable: "
            + "; ".join(corrupt)
            + ". Delete them to start afresh, or point to another directory."
        )

    def _check_metadata(self, path: str, stored: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
        expected = json_normalise(dict(expected))
        for key, value in expected.items():
            if key not in stored:
                raise CheckpointMismatchError(
                    f"{self._label} {path} has no metadata key {key!r} (expected {value!r}); "
                    f"stored keys: {sorted(stored)}."
                )
            if stored[key] != value:
                raise CheckpointMismatchError(
                    f"{self._label} {path} does not match this run: metadata {key!r} is {stored[key]!r} in the "
                    f"checkpoint but {value!r} is expected. Use a fresh directory for a different run, or restore "
                    "with the matching configuration."
                )
