"""Loading a checkpoint or snapshot runs no code from it; version-1 (pickled) files are refused or converted safely.

The attacks are run as a user would run them: the CLI in a subprocess, on a
snapshot or checkpoint directory whose structure file was replaced by a pickle
that would create a marker file when unpickled (or that names a module which
runs code on import), whose leaves hold such a pickle, whose manifest names an
attachment outside the checkpoint, or whose metadata names an environment
that gymnasium would import a module for.
"""

from __future__ import annotations

import collections
import hashlib
import io
import json
import os
import pickle
import shutil
import subprocess
import sys

import jax
import numpy as np
import optax
import pytest

from acme.utils import checkpoint_files, legacy_checkpoints
from acme.utils.checkpoint_files import Checkpointer, CheckpointError, LegacyFormatError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class _Payload:
    """Unpickles to ``os.system("touch <marker>")``: what an attacker puts in structure.pkl."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _sha256_file(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _make_version_1(directory: str, structure_pickle: bytes | None = None) -> None:
    """Rewrites a version-2 directory the way version 1 wrote it.

    Version 1 stored the leaves in jax's flattening order, the pickled
    ``PyTreeDef`` in structure.pkl and version 1 in the manifest.
    ``structure_pickle`` replaces the honest pickle (and its sha256 is updated,
    as an attacker would).
    """
    import io

    tree, manifest = checkpoint_files.read_tree(directory)
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    kinds = [type(x).__name__ if isinstance(x, (bool, int, float)) else "array" for x in leaves]
    buffer = io.BytesIO()
    np.savez(buffer, **{f"leaf_{i:05d}": np.asarray(x) for i, x in enumerate(leaves)})
    with open(os.path.join(directory, "leaves.npz"), "wb") as f:
        f.write(buffer.getvalue())
    data = structure_pickle or pickle.dumps(treedef, protocol=pickle.HIGHEST_PROTOCOL)
    with open(os.path.join(directory, "structure.pkl"), "wb") as f:
        f.write(data)
    os.remove(os.path.join(directory, "structure.json"))
    manifest.update(
        version=1,
        leaf_kinds=kinds,
        sha256={
            "leaves.npz": _sha256_file(os.path.join(directory, "leaves.npz")),
            "structure.pkl": _sha256_file(os.path.join(directory, "structure.pkl")),
        },
    )
    with open(os.path.join(directory, "manifest.json"), "w") as f:
        json.dump(manifest, f)


def _state():
    params = {"linear": {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.zeros(3, np.float32)}}
    # dm_control observations are OrderedDicts (in observation statistics, replay and snapshots); order not sorted
    observation = collections.OrderedDict(velocity=np.ones(2, np.float32), position=np.zeros(3, np.float32))
    return {
        "params": params,
        "opt": optax.adam(1e-3).init(params),
        "steps": 7,
        "pair": (1.5, None, [True]),
        "observation_stats": observation,
    }


def _run_cli(args: list[str], cwd: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_structure_is_json_and_round_trips_containers(tmp_path):
    path = Checkpointer(str(tmp_path)).save(_state(), step=1)
    assert sorted(os.listdir(path)) == ["leaves.npz", "manifest.json", "structure.json"]
    json.loads(open(os.path.join(path, "structure.json")).read())  # plain data
    state, step, _ = Checkpointer(str(tmp_path)).restore_latest()
    assert step == 1 and state["steps"] == 7 and state["pair"] == (1.5, None, [True])
    assert type(state["observation_stats"]) is collections.OrderedDict
    assert list(state["observation_stats"]) == ["velocity", "position"]  # insertion order, as dm_control made it
    assert type(state["opt"][0]).__name__ == "ScaleByAdamState" and type(state["opt"][0]) is type(_state()["opt"][0])
    assert jax.tree.structure(state) == jax.tree.structure(_state())
    for a, b in zip(jax.tree.leaves(state), jax.tree.leaves(_state())):
        np.testing.assert_array_equal(a, b)


def test_trees_the_format_cannot_hold_are_refused_when_saving(tmp_path):
    from collections import defaultdict, namedtuple

    checkpointer = Checkpointer(str(tmp_path))
    with pytest.raises(TypeError, match="defaultdict at the root is not a container"):  # would not come back as one
        checkpointer.save(defaultdict(list, a=np.zeros(1)), step=1)
    local = namedtuple("Local", "x")
    with pytest.raises(TypeError, match="cannot be found again by its name"):
        checkpointer.save({"s": local(np.zeros(1))}, step=1)
    with pytest.raises(TypeError, match=r"Key \(1, 2\) at the root"):
        checkpointer.save({(1, 2): np.zeros(1)}, step=1)
    assert checkpointer.list_checkpoints() == []


@pytest.mark.parametrize(
    "structure, message",
    [
        ({"namedtuple": "os:system", "fields": [], "children": []}, "not a NamedTuple class"),
        (
            {"namedtuple": "some_module_never_imported:T", "fields": ["x"], "children": [{"leaf": 0}]},
            "has not imported; loading never imports modules",
        ),
        (
            {"namedtuple": "optax._src.transform:ScaleByAdamState", "fields": ["x"], "children": [{"leaf": 0}]},
            "has fields",
        ),
        ({"tuple": [{"leaf": 0}, {"leaf": 0}]}, "out of range or repeated"),
        ({"list": []}, "uses 0 of the 1 stored leaves"),
        ({"eval": "__import__('os')"}, "Unknown structure node"),
        ({"ordered_dict": [[1.5, {"leaf": 0}]]}, "Malformed ordered_dict item"),
        ([1, 2], "Malformed structure node"),
    ],
)
def test_tampered_structures_fail_with_a_clear_error(tmp_path, structure, message):
    path = Checkpointer(str(tmp_path)).save({"x": np.zeros(2)}, step=1)
    data = json.dumps(structure).encode()
    with open(os.path.join(path, "structure.json"), "wb") as f:
        f.write(data)
    manifest = json.load(open(os.path.join(path, "manifest.json")))
    manifest["sha256"]["structure.json"] = hashlib.sha256(data).hexdigest()
    json.dump(manifest, open(os.path.join(path, "manifest.json"), "w"))
    with pytest.raises(CheckpointError, match=f"could not be decoded: StructureError: .*{message}"):
        checkpoint_files.read_tree(path)


def test_a_version_1_checkpoint_is_refused_with_the_conversion_command_and_not_skipped(tmp_path):
    checkpointer = Checkpointer(str(tmp_path), keep=3)
    checkpointer.save(_state(), step=1)
    newest = checkpointer.save(_state(), step=2)
    _make_version_1(newest)
    with pytest.raises(
        LegacyFormatError,
        match=r"pickle: loading it could run any code.*python -m "
        r"acme.utils.legacy_checkpoints .*ckpt-2",
    ):
        checkpointer.restore_latest()


def test_conversion_keeps_every_leaf_and_container(tmp_path):
    path = Checkpointer(str(tmp_path)).save(_state(), step=3, metadata={"agent": "x"})
    _make_version_1(path)
    assert legacy_checkpoints.main([str(tmp_path)]) == 0
    assert sorted(os.listdir(path)) == ["leaves.npz", "manifest.json", "structure.json"]
    state, step, metadata = Checkpointer(str(tmp_path)).restore_latest(expect_metadata={"agent": "x"})
    assert step == 3 and jax.tree.structure(state) == jax.tree.structure(_state())
    for a, b in zip(jax.tree.leaves(state), jax.tree.leaves(_state())):
        np.testing.assert_array_equal(a, b)
    assert not legacy_checkpoints.convert(path)  # already version 2: left alone


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """A short DQN run with a checkpoint directory and a policy snapshot, made through the CLI."""
    base = tmp_path_factory.mktemp("run")
    result = _run_cli(
        [
            "baselines",
            "run",
            "dqn",
            "--max-steps",
            "400",
            "--eval-every",
            "0",
            "--no-progress",
            "--checkpoint-dir",
            str(base / "ckpt"),
            "--checkpoint-every-steps",
            "1000",
            "--run-dir",
            str(base / "run"),
        ],
        cwd=str(base),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return base


def _attack(directory: str, marker: str) -> None:
    _make_version_1(directory, structure_pickle=pickle.dumps(_Payload(marker)))


def test_a_crafted_snapshot_is_refused_and_runs_nothing(trained_run, tmp_path):
    snapshot = tmp_path / "policy"
    os.system(f"cp -r {trained_run / 'run' / 'policy'} {snapshot}")
    marker = tmp_path / "owned"
    _attack(str(snapshot), str(marker))
    result = _run_cli(["baselines", "evaluate", "--snapshot", str(snapshot), "--episodes", "2"], cwd=str(tmp_path))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "acme.utils.legacy_checkpoints" in result.stderr and "could run any code" in result.stderr
    # Converting it refuses the payload too.
    result = _run_cli(["acme.utils.legacy_checkpoints", str(snapshot)], cwd=str(tmp_path))
    assert result.returncode == 2 and "posix.system" in result.stderr and "refusing it" in result.stderr
    assert not marker.exists()


def test_a_crafted_checkpoint_is_refused_and_runs_nothing(trained_run, tmp_path):
    directory = tmp_path / "ckpt"
    os.system(f"cp -r {trained_run / 'ckpt'} {directory}")
    newest = max((p for p in directory.iterdir() if p.name.startswith("ckpt-")), key=lambda p: int(p.name[5:]))
    marker = tmp_path / "owned"
    import agents.dqn.learning  # noqa: F401 - reading the honest checkpoint needs its TrainingState

    _attack(str(newest), str(marker))
    result = _run_cli(
        [
            "baselines",
            "run",
            "dqn",
            "--max-steps",
            "800",
            "--eval-every",
            "0",
            "--no-progress",
            "--checkpoint-dir",
            str(directory),
            "--run-dir",
            str(tmp_path / "run"),
        ],
        cwd=str(tmp_path),
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "could run any code" in result.stderr
    assert not marker.exists()


def test_an_honest_version_1_snapshot_converts_and_evaluates(trained_run, tmp_path):
    snapshot = tmp_path / "policy"
    os.system(f"cp -r {trained_run / 'run' / 'policy'} {snapshot}")
    _make_version_1(str(snapshot))
    result = _run_cli(["acme.utils.legacy_checkpoints", str(snapshot)], cwd=str(tmp_path))
    assert result.returncode == 0 and "converted" in result.stdout, result.stderr[-2000:]
    result = _run_cli(["baselines", "evaluate", "--snapshot", str(snapshot), "--episodes", "1"], cwd=str(tmp_path))
    assert result.returncode == 0 and "mean return over 1 episodes" in result.stdout, result.stderr[-2000:]


@pytest.mark.parametrize("module", ["jaxlib.xla_extension.pytree", "jaxlib._jax.pytree"])
def test_a_structure_pickled_by_either_jax_version_loads(module):
    """jax 0.4 pickles PyTreeDef as jaxlib.xla_extension.pytree's, current jax as jaxlib._jax.pytree's."""
    import io

    from acme.utils.legacy_checkpoints import _TreeDefUnpickler

    treedef = jax.tree.structure({"params": [0, (1, 2)], "steps": None})
    data = pickle.dumps(treedef, protocol=2)  # names its globals as text lines (GLOBAL)
    current = type(treedef).__module__.encode()
    assert b"c" + current + b"\nPyTreeDef\n" in data
    data = data.replace(b"c" + current + b"\nPyTreeDef\n", b"c" + module.encode() + b"\nPyTreeDef\n")
    loaded = _TreeDefUnpickler(io.BytesIO(data)).load()
    assert loaded == treedef


def _copy(source, target) -> str:
    shutil.copytree(source, target)
    return str(target)


def _rewrite_manifest(directory: str, **changes) -> None:
    """Changes manifest.json as an attacker would (it has no checksum of its own)."""
    path = os.path.join(directory, "manifest.json")
    with open(path) as f:
        manifest = json.load(f)
    for key, value in changes.items():
        if callable(value):
            value(manifest)
        else:
            manifest[key] = value
    with open(path, "w") as f:
        json.dump(manifest, f)


def _newest_checkpoint(directory) -> str:
    return str(max((p for p in directory.iterdir() if p.name.startswith("ckpt-")), key=lambda p: int(p.name[5:])))


def _object_leaves(directory: str, marker: str) -> None:
    """Replaces leaf_00000 of leaves.npz by an object array whose unpickling would create ``marker``."""
    with np.load(os.path.join(directory, "leaves.npz")) as npz:
        arrays = {key: npz[key] for key in npz.files}
    arrays["leaf_00000"] = np.array([_Payload(marker)], dtype=object)
    np.savez(os.path.join(directory, "leaves.npz"), **arrays)
    digest = _sha256_file(os.path.join(directory, "leaves.npz"))
    _rewrite_manifest(directory, sha256=lambda manifest: manifest["sha256"].update({"leaves.npz": digest}))


def test_a_leaves_file_holding_an_object_array_is_refused_without_unpickling(trained_run, tmp_path):
    snapshot = _copy(trained_run / "run" / "policy", tmp_path / "policy")
    marker = tmp_path / "owned"
    _object_leaves(snapshot, str(marker))
    result = _run_cli(["baselines", "evaluate", "--snapshot", snapshot, "--episodes", "1"], cwd=str(tmp_path))
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "leaf_00000 is not a plain array" in result.stderr and "object arrays are refused" in result.stderr
    assert not marker.exists()


@pytest.mark.parametrize("damage", ["object array", "pickle", "missing leaf"])
def test_leaves_that_only_pickle_could_read_are_refused_by_the_reader_and_the_converter(tmp_path, damage):
    """The checkpoint reader and the version-1 converter read leaves.npz through the same function."""
    marker = tmp_path / "owned"
    for version in (2, 1):
        path = Checkpointer(str(tmp_path / f"v{version}")).save(_state(), step=1)
        if version == 1:
            _make_version_1(path)
        leaves = os.path.join(path, "leaves.npz")
        if damage == "object array":
            _object_leaves(path, str(marker))
        else:
            if damage == "pickle":
                data = pickle.dumps(_Payload(str(marker)))
            else:
                with np.load(leaves) as npz:
                    buffer = io.BytesIO()
                    np.savez(buffer, **{key: npz[key] for key in npz.files if key != "leaf_00001"})
                    data = buffer.getvalue()
            with open(leaves, "wb") as f:
                f.write(data)
            digest = hashlib.sha256(data).hexdigest()
            _rewrite_manifest(path, sha256=lambda manifest: manifest["sha256"].update({"leaves.npz": digest}))
        expected = {
            "object array": "leaf_00000 is not a plain array .*object arrays are refused",
            "pickle": r"is not an npz archive of arrays \(it was not unpickled\): .*pickled",
            "missing leaf": "has no leaf_00001: the manifest lists",
        }[damage]
        read = checkpoint_files.read_tree if version == 2 else legacy_checkpoints.convert
        with pytest.raises(CheckpointError, match=expected):
            read(path)
    assert not marker.exists()


def test_an_attachment_that_leads_out_of_the_checkpoint_is_refused_before_it_is_read(trained_run, tmp_path):
    """The manifest (which has no checksum) names an attachment outside the checkpoint; reading the pipe there
    would block the resume for good."""
    checkpoints = tmp_path / "ckpt"
    _copy(trained_run / "ckpt", checkpoints)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.mkfifo(outside / "pipe")
    _rewrite_manifest(_newest_checkpoint(checkpoints), attachments={"../../outside": {"pipe": "0" * 64}})
    result = subprocess.run(
        [sys.executable, "-m", "baselines", "run", "dqn", "--max-steps", "800", "--eval-every", "0", "--no-progress"]
        + ["--checkpoint-dir", str(checkpoints), "--run-dir", str(tmp_path / "run")],
        cwd=str(tmp_path),
        env=dict(os.environ, PYTHONPATH=ROOT),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "names the attachment '../../outside'" in result.stderr and "plain file name" in result.stderr


@pytest.mark.parametrize(
    "name, message",
    [
        ("../outside", "names the attachment '../outside'"),
        ("ABSOLUTE", "names the attachment '/.*outside'"),
        ("..", "names the attachment '..'"),
        ("leaves.npz", "names the attachment 'leaves.npz'"),
        ("link", "is or holds links, pipes or devices"),
        ("inner link", "is or holds links, pipes or devices .*secret"),
        ("pipe", "is or holds links, pipes or devices .*pipe"),
    ],
    ids=["parent", "absolute", "dot-dot", "own-file", "link", "inner-link", "pipe"],
)
def test_attachments_that_are_not_plain_directories_of_the_checkpoint_are_refused(tmp_path, name, message):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("not the checkpoint's")
    replay = tmp_path / "replay"
    replay.mkdir()
    (replay / "table").write_text("items")
    checkpointer = Checkpointer(str(tmp_path / "ckpt"))
    path = checkpointer.save(_state(), step=1, attach={"replay": str(replay)})
    checkpoint_files.verify_attachments(path, checkpoint_files.read_manifest(path))  # honest: accepted
    hashes = {"secret": _sha256_file(outside / "secret")}
    if name == "link":
        os.symlink(outside, os.path.join(path, "link"))
    elif name == "inner link":
        os.symlink(outside / "secret", os.path.join(path, "replay", "secret"))
        name, hashes = "replay", {"table": _sha256_file(replay.parent / "ckpt" / "ckpt-1" / "replay" / "table")}
    elif name == "pipe":
        os.mkfifo(os.path.join(path, "replay", "pipe"))
        name, hashes = "replay", {"pipe": "0" * 64}
    elif name == "ABSOLUTE":
        name = str(outside)
    _rewrite_manifest(path, attachments={name: hashes})
    with pytest.warns(checkpoint_files.CorruptCheckpointWarning), pytest.raises(CheckpointError, match=message):
        checkpointer.restore_latest()


def test_a_structure_naming_a_module_that_runs_on_import_is_refused_before_the_import(trained_run, tmp_path):
    """baselines.__main__ runs the baselines command line when imported: a pickled structure that names it must
    be refused without importing it, while an honest checkpoint's state classes still load in a fresh process."""
    import agents.dqn.learning  # noqa: F401 - reading the honest checkpoint needs its TrainingState

    checkpoints = tmp_path / "ckpt"
    _copy(trained_run / "ckpt", checkpoints)
    honest = _newest_checkpoint(checkpoints)
    _make_version_1(honest)
    crafted = _copy(trained_run / "run" / "policy", tmp_path / "policy")
    _make_version_1(crafted, structure_pickle=b"cbaselines.__main__\nmain\n.")  # the global baselines.__main__.main
    result = _run_cli(["acme.utils.legacy_checkpoints", honest, crafted], cwd=str(tmp_path))
    assert f"{honest}: converted" in result.stdout, result.stderr[-2000:]  # its optax and acme states, not imported
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "baselines.__main__.main, which is not a NamedTuple class" in result.stderr
    # Imported, baselines.__main__ would have parsed the converter's arguments as its own and printed its usage.
    assert "python -m baselines" not in result.stdout + result.stderr
    assert os.path.exists(os.path.join(crafted, "structure.pkl"))  # left as it was


def test_a_snapshot_naming_an_environment_outside_the_registry_runs_nothing(trained_run, tmp_path):
    """gymnasium.make("module:Env") imports ``module``; a snapshot's environment id must not get that far."""
    snapshot = _copy(trained_run / "run" / "policy", tmp_path / "policy")
    marker = tmp_path / "owned"
    (tmp_path / "evil_module.py").write_text(f"open({str(marker)!r}, 'w').close()\n")  # importable from the cwd
    environment_id = "gymnasium:evil_module:Evil-v0"
    _rewrite_manifest(snapshot, metadata=lambda manifest: manifest["metadata"].update(environment_id=environment_id))
    result = _run_cli(["baselines", "evaluate", "--snapshot", snapshot, "--episodes", "1"], cwd=str(tmp_path))
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert f"names the environment {environment_id!r}, which the environment factory does not make" in result.stderr
    assert not marker.exists()


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"agent": "evil_module"}, "names the agent 'evil_module', which the registry does not know; known agents: "),
        ({"agent": ["dqn"]}, r"names the agent \['dqn'\], which the registry does not know"),
        ({"environment_id": 3}, "names the environment 3; expected an id such as"),
        ({"environment_id": "gymnasium:NoSuchEnv-v0"}, "gymnasium has no environment 'NoSuchEnv-v0'"),
        ({"agent_config": [1]}, "holds an agent_config of type list"),
        ({"agent_config": {"no_such_field": 1}}, "agent_config that dqn's config refuses: .*no_such_field"),
    ],
)
def test_snapshot_metadata_naming_no_known_agent_or_environment_is_refused(trained_run, tmp_path, changes, message):
    from baselines import policy_export

    snapshot = _copy(trained_run / "run" / "policy", tmp_path / "policy")
    _rewrite_manifest(snapshot, metadata=lambda manifest: manifest["metadata"].update(changes))
    with pytest.raises(CheckpointError, match=f"The snapshot at {snapshot} .*{message}"):
        policy_export.load_policy(snapshot)
    _rewrite_manifest(snapshot, metadata=["dqn"])
    with pytest.raises(CheckpointError, match="holds metadata of type list, not a dict"):
        policy_export.load_policy(snapshot)


def _version_1_naming_an_agent_module(directory: str) -> None:
    """Rewrites a DQN checkpoint as version 1 wrote it when DQN's state was ``agents.dqn.learning.TrainingState``
    (the name is still an alias there): the converter must find that module without importing anything else."""
    import agents.dqn.learning  # noqa: F401 - reading the honest checkpoint needs its state class
    from acme.jax.value_learning import TargetNetworkState

    tree, _ = checkpoint_files.read_tree(directory)
    data = pickle.dumps(jax.tree_util.tree_structure(tree), protocol=2)  # globals as text lines
    stored = b"c" + TargetNetworkState.__module__.encode() + b"\nTargetNetworkState\n"
    assert stored in data
    _make_version_1(directory, structure_pickle=data.replace(stored, b"cagents.dqn.learning\nTrainingState\n"))


_HOSTILE_AGENTS = {
    "agents/__init__.py": "open({marker!r}, 'w').write('agents/__init__.py ran')\n",
    "agents/dqn/__init__.py": "open({marker!r}, 'w').write('agents/dqn ran')\n",
    "agents/dqn/learning.py": (
        "from typing import NamedTuple\nopen({marker!r}, 'w').write('agents/dqn/learning.py ran')\n"
        "class TrainingState(NamedTuple):\n    params: object\n"
    ),
}


@pytest.mark.parametrize("working_directory", ["elsewhere", "holding a hostile agents/ package"])
def test_an_honest_version_1_checkpoint_converts_on_an_editable_install_from_any_directory(
    trained_run, tmp_path, working_directory
):
    """The package is found as ``import`` finds it (the editable install's hook), never from the working
    directory that ``python -m`` puts first on the path."""
    checkpoint = _copy(_newest_checkpoint(trained_run / "ckpt"), tmp_path / "ckpt-1")
    _version_1_naming_an_agent_module(checkpoint)
    cwd, marker = tmp_path / "cwd", tmp_path / "owned"
    cwd.mkdir()
    if working_directory != "elsewhere":
        for name, text in _HOSTILE_AGENTS.items():
            (cwd / name).parent.mkdir(parents=True, exist_ok=True)
            (cwd / name).write_text(text.format(marker=str(marker)))
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-m", "acme.utils.legacy_checkpoints", checkpoint],
        cwd=str(cwd),
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0 and "converted" in result.stdout, result.stderr[-2000:]
    assert not marker.exists()
    tree, manifest = checkpoint_files.read_tree(checkpoint)
    assert manifest["version"] == checkpoint_files.VERSION and type(tree["learner"]).__name__ == "TargetNetworkState"


def test_a_malformed_pickled_structure_is_refused_by_the_converter_with_exit_2(trained_run, tmp_path):
    snapshot = _copy(trained_run / "run" / "policy", tmp_path / "policy")
    tree, _ = checkpoint_files.read_tree(snapshot)
    data = bytearray(pickle.dumps(jax.tree_util.tree_structure(tree), protocol=pickle.HIGHEST_PROTOCOL))
    # The last node's leaf count (the BININT1 before the closing TUPLE, APPENDS, TUPLE2, BUILD, STOP) made wrong.
    count = len(data) - 10
    assert data[count - 1 : count] == b"K"
    data[count] = (data[count] + 7) % 256
    _make_version_1(snapshot, structure_pickle=bytes(data))
    result = _run_cli(["acme.utils.legacy_checkpoints", snapshot], cwd=str(tmp_path))
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "was not converted" in result.stderr
