"""Every run kind leaves the same things and survives the same accidents, as a user runs it from the command line.

For each launcher (local, threads, Ray, the device loop; online, and from a dataset where that applies) one run
with checkpoints is killed with SIGKILL once it has saved one, the same command resumes it, Ctrl-C stops the
resumed run after it saves a checkpoint (exit status 130), and the same command with a budget a little further
resumes again and finishes. The finished run's folder holds result.json, the learning curve, config.yaml and a
policy snapshot that ``python -m baselines evaluate`` loads.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
import yaml

from acme.testing.experts import write_cartpole_expert_dataset
from baselines.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CARTPOLE = "gymnasium:CartPole-v1"
DATASET = "<dataset>"  # replaced by the module's recorded dataset
DQN = ["dqn", "--env", CARTPOLE, "--set", "min_replay_size=100"]
BC = ["bc", "--env", CARTPOLE, "--dataset", DATASET]

# (id, agent and environment flags, launcher flags, checkpoint every N learner steps, steps the last run adds)
KINDS = [
    ("local", DQN, [], 50, 500),
    ("threads", DQN, ["--launcher", "threads", "--num-actors", "1"], 50, 500),
    ("ray", DQN, ["--launcher", "ray", "--num-actors", "1"], 50, 500),
    ("anakin", ["dqn", "--env", "jax:CartPole-v1"], ["--launcher", "anakin"], 100, 2_000),
    ("offline-local", BC, [], 100, 200),
    ("offline-threads", BC, ["--launcher", "threads"], 100, 200),
    ("offline-ray", BC, ["--launcher", "ray"], 100, 200),
]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> str:
    directory = str(tmp_path_factory.mktemp("datasets") / "cartpole-expert")
    return write_cartpole_expert_dataset(directory, episodes=2)


def _checkpoints(directory: str) -> list[int]:
    if not os.path.isdir(directory):
        return []
    return sorted(int(name[5:]) for name in os.listdir(directory) if re.fullmatch(r"ckpt-\d+", name))


class _Run:
    """``python -m baselines run ...`` in a session of its own (as a terminal's foreground job), its output in a
    file; signals go to its whole process group, as the terminal's Ctrl-C does."""

    def __init__(self, argv: list[str], log: str):
        self.log = log
        with open(log, "w") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "baselines", *argv],
                cwd=ROOT,
                # Ray's start is timed; make test's other worker (and CI's slower hosts) can hold it past 60 s.
                env={"LAUNCH_RAY_START_TIMEOUT": "180", **os.environ, "PYTHONPATH": ROOT},
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def output(self) -> str:
        with open(self.log) as f:
            return f.read()

    def wait_for(self, done, what: str, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout  # guards against a hang only
        while not done():
            assert self.process.poll() is None, f"the run ended before {what}:\n{self.output()[-3000:]}"
            assert time.monotonic() < deadline, f"not {what} within {timeout} s:\n{self.output()[-3000:]}"
            time.sleep(0.1)

    def signal(self, signum: int, timeout: float = 120) -> int:
        os.killpg(self.process.pid, signum)
        try:
            return self.process.wait(timeout=timeout)
        finally:
            self.kill()

    def kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=60)


# The Ray kinds join the other Ray tests' xdist group (tests/conftest.py), so no two Ray clusters run at once.
RUNS = [pytest.param(*kind, id=kind[0], marks=[pytest.mark.ray] if kind[0].endswith("ray") else []) for kind in KINDS]


@pytest.mark.parametrize("kind, agent, launcher, every, more", RUNS)
def test_a_run_of_every_kind_resumes_after_sigkill_and_ctrl_c_and_leaves_the_same_folder(
    tmp_path, capsys, dataset, kind, agent, launcher, every, more
):
    checkpoints = str(tmp_path / "checkpoints")
    command = ["run", *[dataset if a == DATASET else a for a in agent], *launcher, "--no-progress"]
    command += ["--eval-every", "200" if "--dataset" in agent else "1000", "--eval-episodes", "2"]
    command += ["--checkpoint-dir", checkpoints, "--checkpoint-every-steps", str(every)]
    endless = [*command, "--max-steps", "10000000"]

    first = _Run([*endless, "--run-dir", str(tmp_path / "first")], str(tmp_path / "first.log"))
    try:
        first.wait_for(lambda: _checkpoints(checkpoints), "its first checkpoint")
    finally:
        assert first.signal(signal.SIGKILL) == -signal.SIGKILL
    killed_at = _checkpoints(checkpoints)[-1]

    second = _Run([*endless, "--run-dir", str(tmp_path / "second")], str(tmp_path / "second.log"))
    try:
        # The checkpoint it resumes from is at least the newest before it started (a killed Ray driver's worker
        # may finish one more save); Ctrl-C comes once the resumed run has saved a checkpoint of its own.
        resumed = re.compile(r"Resuming from checkpoint \S*/ckpt-(\d+)")
        second.wait_for(lambda: resumed.search(second.output()), "resuming")
        resumed_at = int(resumed.search(second.output()).group(1))
        assert resumed_at >= killed_at, (resumed_at, killed_at)
        second.wait_for(lambda: _checkpoints(checkpoints)[-1] > resumed_at, "a checkpoint after resuming")
        status = second.signal(signal.SIGINT)
    finally:
        second.kill()
    out = second.output()
    assert status == 130 and "The same command resumes from the newest checkpoint" in out, (status, out[-3000:])
    stopped = re.search(r"at (?:actor|learner) step (\d+), after a checkpoint", out)
    assert stopped, out[-3000:]

    budget = int(stopped.group(1)) + more
    run_dir = tmp_path / "third"
    assert main([*command, "--max-steps", str(budget), "--run-dir", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "Resuming from checkpoint" in out
    result = json.loads((run_dir / "result.json").read_text())
    steps = result["learner_steps" if "--dataset" in agent else "actor_steps"]
    assert steps >= budget and result["evaluations"] and result["launcher"] == (launcher[1] if launcher else "local")
    assert (run_dir / "learning_curve.png").exists()
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["agent"] == agent[0]
    assert main(["evaluate", "--snapshot", str(run_dir), "--episodes", "1"]) == 0
    assert "mean return over 1 episodes" in capsys.readouterr().out
