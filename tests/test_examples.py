"""Every example runs as a user runs it (its own process), with a tiny budget, so none can rot."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(script: str, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", script), *args],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=ROOT),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    return result.stdout


@pytest.mark.parametrize("script", ["quickstart.py", "sac_pendulum.py"])
def test_the_quickstarts_train_and_evaluate(script):
    assert "best evaluation return" in _run(script, "1200")


def test_a_new_agent_from_the_library_pieces_trains_and_evaluates_on_the_shared_learner():
    assert "DDPG: best evaluation return" in _run("custom_agent.py", "--max-steps", "1500")


def test_a_stopped_run_resumes_from_its_checkpoint(tmp_path):
    output = _run("resume_from_checkpoint.py", "--directory", str(tmp_path), "--max-steps", "2400")
    assert "stopped at actor step 1200" in output
    assert "resumed and finished at actor step 2400" in output
    assert any(name.startswith("ckpt-") for name in os.listdir(tmp_path))


def test_the_distributed_example_runs_on_threads():
    # The script hands --launcher to launch.launch unchanged; Ray runs of the same program (DQN on CartPole) are
    # tests/experiments/test_distributed.py's and tests/test_run_matrix.py's.
    assert "done: 1500 actor steps over 2 actors (threads launcher)" in _run(
        "distributed_ray.py", "--launcher", "threads", "--num-actors", "2", "--max-steps", "1500"
    )
