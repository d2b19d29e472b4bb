"""Every environment family checkpoints, resumes after SIGKILL and snapshots, as a user runs it from the CLI.

One id per family (Atari included): a checkpointed run in a subprocess is killed with SIGKILL
once it has saved a checkpoint, the same command resumes it to its budget, and
the run's policy snapshot is evaluated. dm_control's observations are
``OrderedDict``s, which the data-only checkpoint format once refused, so no
dm_control run could checkpoint or export its policy.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from acme.environments import KNOWN_PREFIXES
from acme.environments.jax_libraries import LIBRARIES
from baselines.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (agent, environment id, checkpoint every N learner steps, resumed run's budget, --set overrides).
ATARI_SMALL = ("min_replay_size=200", "max_replay_size=500", "batch_size=8", "num_sgd_steps_per_step=1")
# SAC's and TD3's updates with their registered 256-unit layers and batches of 256 took most of a resumed run's time.
SMALL_MLPS = ("batch_size=32", "policy_hidden_sizes=32", "critic_hidden_sizes=32")
FAMILIES = [
    ("dqn", "gymnasium:CartPole-v1", 20, 3_000, ()),
    # 1,000-step episodes: a checkpoint at the first one's end
    ("sac", "dm_control:cartpole/balance", 1, 2_000, SMALL_MLPS),
    ("dqn", "bsuite:catch/0", 20, 3_000, ()),
    ("r2d2", "memory:CartPole-v1", 5, 2_500, ()),
    ("dqn", "jax:CartPole-v1", 20, 3_000, ()),  # the host-side view of the JAX-native environment
    # Pixels on a CPU: a small replay (56 KB a transition) and an update every 16 steps keep it to seconds.
    ("dqn", "atari:Pong", 2, 1_500, (*ATARI_SMALL, "samples_per_insert=0.5")),
    # The JAX libraries' environments stepped from the host (acme.environments.jax_libraries).
    ("dqn", "gymnax:CartPole-v1", 20, 3_000, ()),
    ("sac", "brax:inverted_pendulum", 20, 2_000, SMALL_MLPS),
    ("td3", "playground:CartpoleSwingup", 1, 2_000, SMALL_MLPS),  # 1,000-step episodes (SAC: an on-device baseline)
    ("dqn", "jumanji:Snake-v1", 20, 3_000, ()),  # a dict observation: a bool mask, an int32 count, a float grid
    ("dqn", "craftax:Craftax-Classic-Symbolic-v1", 20, 3_000, ()),
    ("dqn", "navix:Navix-Empty-5x5-v0", 20, 3_000, ()),  # uint8 observations
]


def _marks(environment: str) -> list:
    """dm_control's marker, and a skip (with the reason) for a JAX library this stack does not install."""
    if environment.startswith("dm_control:"):
        return [pytest.mark.dm_control]
    prefix = environment.split(":")[0]
    if prefix in LIBRARIES:
        module = LIBRARIES[prefix].module
        missing = importlib.util.find_spec(module) is None
        return [pytest.mark.skipif(missing, reason=f"{module} is not installed on this stack (make install has it)")]
    return []


def test_every_family_is_covered():
    assert {environment.split(":")[0] for _, environment, _, _, _ in FAMILIES} == set(KNOWN_PREFIXES)


def _checkpoints(directory) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.startswith("ckpt-")) if directory.exists() else []


@pytest.mark.parametrize(
    "agent, environment, every, budget, overrides",
    [pytest.param(*family, marks=_marks(family[1])) for family in FAMILIES],
    ids=[f[1].split(":")[0] for f in FAMILIES],
)
def test_a_killed_run_resumes_from_its_checkpoint_and_its_snapshot_evaluates(
    tmp_path, capsys, agent, environment, every, budget, overrides
):
    checkpoints = tmp_path / "ckpt"
    command = ["run", agent, "--env", environment, "--eval-every", "1000", "--eval-episodes", "1", "--no-progress"]
    command += [flag for override in overrides for flag in ("--set", override)]
    command += ["--checkpoint-dir", str(checkpoints), "--checkpoint-every-steps", str(every)]
    process = subprocess.Popen(
        [sys.executable, "-m", "baselines", *command, "--max-steps", "100000", "--run-dir", str(tmp_path / "first")],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=ROOT),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 600  # guards against a hang only
        while not _checkpoints(checkpoints):
            assert process.poll() is None, f"the run ended before its first checkpoint: {process.stderr.read()}"
            assert time.monotonic() < deadline, "no checkpoint within 600 s"
            time.sleep(0.1)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == -signal.SIGKILL

    saved = _checkpoints(checkpoints)[-1]
    assert main([*command, "--max-steps", str(budget), "--run-dir", str(tmp_path / "second")]) == 0
    out = capsys.readouterr().out
    assert f"Resuming from checkpoint {checkpoints}/" in out  # the newest complete one, written before the kill
    assert int(out.split(f"Resuming from checkpoint {checkpoints}/ckpt-")[1].split(":")[0]) >= int(saved[5:])
    result = json.loads((tmp_path / "second" / "result.json").read_text())
    assert result["actor_steps"] == budget and result["evaluations"], result
    assert (tmp_path / "second" / "learning_curve.png").exists()
    for label in ("evaluator", "learner"):  # TensorBoard files beside the CSV, on either stack
        assert list((tmp_path / "second" / label).glob("events.out.tfevents.*")), label

    snapshot = tmp_path / "second" / "policy"
    assert f"--snapshot {snapshot}" in out
    assert main(["evaluate", "--snapshot", str(snapshot), "--episodes", "1"]) == 0
    assert "mean return over 1 episodes" in capsys.readouterr().out
