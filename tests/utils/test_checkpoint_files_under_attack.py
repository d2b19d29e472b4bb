"""A checkpoint's or snapshot's own files replaced by what never ends, and two runs on one directory.

Whoever can write into a checkpoint directory can put a FIFO, a link to ``/dev/zero`` or a huge file where
``manifest.json``, ``structure.json`` or ``leaves.npz`` should be: each is refused before it is read (never a hang
or a full memory), and a checkpoint so damaged is skipped for an older one. A directory is written by one run at
a time: a second is refused with the holder's PID, and a holder killed by SIGKILL leaves nothing stuck.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from acme import snapshots
from acme.utils import checkpoint_files, regular_files
from acme.utils.checkpoint_files import Checkpointer, CheckpointError, CorruptCheckpointWarning, DirectoryInUseError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OWN_FILES = [checkpoint_files.MANIFEST, checkpoint_files.STRUCTURE, checkpoint_files.LEAVES]


def _replace(path: str, kind: str) -> None:
    os.remove(path)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link to /dev/zero":
        os.symlink("/dev/zero", path)
    elif kind == "directory":
        os.mkdir(path)
    else:
        raise AssertionError(kind)


def _tree(value: float) -> dict:
    return {"w": np.full((2, 3), value, np.float32), "steps": int(value)}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero", "directory"])
@pytest.mark.parametrize("name", OWN_FILES)
def test_a_special_file_in_a_snapshot_is_refused_without_reading_it(tmp_path, name, kind):
    path = snapshots.save_policy_snapshot(str(tmp_path / "policy"), _tree(1.0), {"agent": "dqn"})
    _replace(os.path.join(path, name), kind)
    with pytest.raises(CheckpointError, match="only regular files are read|symbolic link"):
        snapshots.load_policy_snapshot(path)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", OWN_FILES)
def test_a_checkpoint_with_a_fifo_falls_back_to_the_older_one(tmp_path, name):
    checkpointer = Checkpointer(str(tmp_path), keep=3)
    checkpointer.save(_tree(1.0), step=1)
    newest = checkpointer.save(_tree(2.0), step=2)
    _replace(os.path.join(newest, name), "fifo")
    with pytest.warns(CorruptCheckpointWarning, match="FIFO"):
        state, step, _ = checkpointer.restore_latest()
    assert step == 1 and state["w"][0, 0] == 1.0


@pytest.mark.timeout(60)
def test_every_checkpoint_unreadable_is_an_error_not_a_hang(tmp_path):
    checkpointer = Checkpointer(str(tmp_path), keep=3)
    for step in (1, 2):
        _replace(os.path.join(checkpointer.save(_tree(step), step=step), checkpoint_files.LEAVES), "fifo")
    with pytest.warns(CorruptCheckpointWarning), pytest.raises(CheckpointError, match="Every checkpoint .* unreadable"):
        checkpointer.restore_latest()


def test_files_over_their_size_limit_are_refused_before_they_are_read(tmp_path, monkeypatch):
    path = snapshots.save_policy_snapshot(str(tmp_path / "policy"), _tree(1.0), {"agent": "dqn"})
    monkeypatch.setitem(checkpoint_files.MAX_FILE_BYTES, checkpoint_files.LEAVES, 64)
    with pytest.raises(CheckpointError, match=r"leaves.npz is .* more than the 64 bytes"):
        snapshots.load_policy_snapshot(path)
    monkeypatch.setitem(checkpoint_files.MAX_FILE_BYTES, checkpoint_files.MANIFEST, 16)
    with pytest.raises(CheckpointError, match=r"manifest.json is .* more than the 16 bytes"):
        snapshots.load_policy_snapshot(path)


def test_a_file_that_grows_past_its_limit_while_read_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "growing"
    path.write_bytes(b"x" * 10)
    real_read = os.read

    def read_and_grow(fd, count):  # another writer appends between the size check and the read
        with open(path, "ab") as f:
            f.write(b"y" * 100)
        return real_read(fd, count)

    monkeypatch.setattr(os, "read", read_and_grow)
    with pytest.raises(regular_files.FileRefusedError, match="grew past 50 bytes"):
        regular_files.read_regular_file(str(path), max_bytes=50)


def test_a_deeply_nested_manifest_is_refused_with_a_checkpoint_error(tmp_path):
    path = snapshots.save_policy_snapshot(str(tmp_path / "policy"), _tree(1.0), {"agent": "dqn"})
    with open(os.path.join(path, checkpoint_files.MANIFEST), "w") as f:
        f.write("[" * 100_000 + "]" * 100_000)
    with pytest.raises(CheckpointError, match="nested too deeply"):
        snapshots.load_policy_snapshot(path)


# ----------------------------------------------------------------------------------------------
# One run per directory.

_HOLDER = textwrap.dedent(
    """
    import os, sys
    from acme.utils.checkpoint_files import Checkpointer
    checkpointer = Checkpointer(sys.argv[1])
    os.makedirs(os.path.join(sys.argv[1], ".tmp-ckpt-7-writing"))  # a checkpoint being written
    print("holding", flush=True)
    sys.stdin.readline()
    """
)


def _start_holder(directory: str) -> subprocess.Popen:
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, directory],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=ROOT),
    )
    assert holder.stdout.readline().strip() == "holding"
    return holder


@pytest.mark.timeout(120)
def test_a_second_process_on_a_held_directory_is_refused_with_the_holders_pid(tmp_path):
    holder = _start_holder(str(tmp_path))
    try:
        with pytest.raises(DirectoryInUseError, match=rf"in use by another run: PID {holder.pid} on "):
            Checkpointer(str(tmp_path))
        assert (tmp_path / ".tmp-ckpt-7-writing").is_dir()  # the holder's write in progress is left alone
        holder.kill()  # SIGKILL: no clean-up runs, the kernel lets go of the lock
        holder.wait(timeout=30)
        taken = Checkpointer(str(tmp_path))
        assert not (tmp_path / ".tmp-ckpt-7-writing").exists()  # now stale: removed by the new holder
        assert f"PID {os.getpid()} " in (tmp_path / checkpoint_files.LOCK).read_text()
        taken.close()
    finally:
        holder.kill()
        holder.wait(timeout=30)


def test_holds_in_one_process_are_shared_and_the_last_close_lets_go(tmp_path):
    first, second = Checkpointer(str(tmp_path)), Checkpointer(str(tmp_path))
    reader = Checkpointer(str(tmp_path), exclusive=False)
    first.close()
    first.close()  # closing twice lets go once
    assert str(tmp_path) in checkpoint_files._HOLDS
    second.close()
    assert str(tmp_path) not in checkpoint_files._HOLDS
    reader.close()


@pytest.mark.timeout(300)
def test_a_run_on_a_directory_another_run_holds_exits_2_naming_it_and_leaves_nothing(tmp_path):
    checkpoints = tmp_path / "ckpt"
    checkpoints.mkdir()
    holder = _start_holder(str(checkpoints))
    try:
        result = subprocess.run(
            [sys.executable, "-m", "baselines", "run", "dqn", "--max-steps", "200", "--eval-every", "0"]
            + ["--no-progress", "--checkpoint-dir", str(checkpoints), "--run-dir", str(tmp_path / "run")],
            cwd=str(tmp_path),
            env=dict(os.environ, PYTHONPATH=ROOT),
            capture_output=True,
            text=True,
            timeout=240,
        )
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert f"in use by another run: PID {holder.pid}" in result.stderr
    assert not (tmp_path / "run").exists()
    assert sorted(os.listdir(checkpoints)) == [".lock", ".tmp-ckpt-7-writing"]


def test_the_lock_file_is_not_followed_when_it_is_a_link(tmp_path):
    (tmp_path / "elsewhere").write_text("do not touch")
    os.symlink(tmp_path / "elsewhere", tmp_path / checkpoint_files.LOCK)
    with pytest.raises(CheckpointError, match="marks the run writing"):
        Checkpointer(str(tmp_path))
    assert (tmp_path / "elsewhere").read_text() == "do not touch"


def test_the_manifest_of_a_snapshot_is_still_json(tmp_path):
    """The reader change keeps honest files as they were: a snapshot round-trips."""
    path = snapshots.save_policy_snapshot(str(tmp_path / "policy"), _tree(3.0), {"agent": "dqn"})
    params, metadata = snapshots.load_policy_snapshot(path)
    assert metadata == {"agent": "dqn"} and params["w"][0, 0] == 3.0
    with open(os.path.join(path, checkpoint_files.MANIFEST)) as f:
        assert json.load(f)["kind"] == snapshots.SNAPSHOT_KIND
