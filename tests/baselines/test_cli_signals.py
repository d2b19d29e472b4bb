"""Signals to an in-process ``python -m baselines run``, sent as a user or a scheduler would (subprocess)."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys

from acme.utils.checkpoint_files import Checkpointer
from agents import dqn  # noqa: F401  (defines the learner state's type, which decoding a checkpoint needs)

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


def _run_and_signal(tmp_path: pathlib.Path, signum: int, *flags: str, ignore_sigint: bool = False) -> tuple[str, int]:
    """Starts a run, sends ``signum`` once the actor has logged its first line; returns output and status."""
    command = [
        sys.executable,
        "-m",
        "baselines",
        "run",
        "dqn",
        "--eval-every",
        "0",
        "--no-progress",
        "--log-every",
        "0.5",
        "--run-dir",
        str(tmp_path / "run"),
        *flags,
    ]
    # A script's `cmd &` starts cmd with SIGINT ignored.
    preexec = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
    proc = subprocess.Popen(
        command,
        cwd=REPO_ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
        preexec_fn=preexec,
    )
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("[actor]"):
                proc.send_signal(signum)
                break
        rest, _ = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return "".join(lines) + rest, proc.returncode


def test_sigterm_without_checkpoint_dir_says_it_stopped_and_nothing_was_saved(tmp_path):
    output, status = _run_and_signal(tmp_path, signal.SIGTERM, "--max-steps", "100000")
    assert status == 143, output
    assert "Stopped by SIGTERM; nothing was saved" in output, output


def test_checkpointed_run_started_with_sigint_ignored_ignores_it(tmp_path):
    output, status = _run_and_signal(
        tmp_path,
        signal.SIGINT,
        "--max-steps",
        "1500",
        "--checkpoint-dir",
        str(tmp_path / "checkpoints"),
        ignore_sigint=True,
    )
    assert status == 0, output
    assert "Ctrl-C" not in output, output
    assert "Policy snapshot in" in output, output  # it ran to the end


def test_sigterm_to_a_checkpointed_run_saves_a_checkpoint_then_exits_143(tmp_path):
    """README: SIGTERM exits 143 after saving a checkpoint the same command resumes from. No periodic checkpoint is
    due (one per 10^9 learner steps, 10 minutes), so the one found was saved for the signal. (Ctrl-C's 130 after a
    checkpoint: tests/test_run_matrix.py from the command line, test_cli.py in this process.)"""
    checkpoints = tmp_path / "checkpoints"
    flags = ["--max-steps", "100000", "--checkpoint-dir", str(checkpoints), "--checkpoint-every-steps", "1000000000"]
    output, returncode = _run_and_signal(tmp_path, signal.SIGTERM, *flags)
    assert returncode == 143, output
    assert "SIGTERM: saving a checkpoint at the next check" in output, output
    assert "Stopped by SIGTERM at actor step" in output and "after a checkpoint" in output, output
    checkpointer = Checkpointer(str(checkpoints))
    assert len(checkpointer.list_checkpoints()) == 1, output  # the signal's, no periodic one
    _, _, metadata = checkpointer.restore_latest()
    actor_steps = metadata["counts"]["actor_steps"]
    assert 0 < actor_steps < 100_000 and f"Stopped by SIGTERM at actor step {actor_steps}," in output, metadata


def test_a_recording_run_stopped_by_sigterm_keeps_its_episodes_for_the_resumed_run(tmp_path):
    """The stopped run writes what it recorded as a shard beside the dataset; the same command resumes from the
    checkpoint and writes one dataset of both parts."""
    import json

    import minari

    dataset, checkpoints = str(tmp_path / "episodes"), str(tmp_path / "checkpoints")
    flags = ("--max-steps", "4000", "--checkpoint-dir", checkpoints, "--record", dataset)
    output, status = _run_and_signal(tmp_path, signal.SIGTERM, *flags)
    assert status == 143 and "episodes so far to" in output, output
    assert len(os.listdir(dataset + ".shards")) == 1 and not os.path.exists(dataset)
    command = [sys.executable, "-m", "baselines", "run", "dqn", "--eval-every", "0", "--no-progress", *flags]
    resumed = subprocess.run(
        [*command, "--run-dir", str(tmp_path / "run2")], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0 and "Resuming from checkpoint" in resumed.stdout, resumed.stdout + resumed.stderr
    metadata = json.load(open(os.path.join(dataset, "data", "metadata.json")))
    assert metadata["acme_shards"] == 2 and not os.path.exists(dataset + ".shards")
    assert metadata["acme_actor_steps"] == [[0, 4000]] and metadata["acme_missing_steps"] == []  # the shard's too
    assert 3000 <= minari.MinariDataset(os.path.join(dataset, "data")).total_steps <= 4000
