"""One learner over several processes on this machine (``acme.jax.multiprocess``): the same updates as on one
device, to float32 rounding. Each process is a subprocess (``tests/jax/multiprocess_learners.py``) with 2 CPU
devices; their collectives go over loopback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from acme.jax.multiprocess import join_learner_group
from launch.ray_launcher import FORCED_KILL

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("num_processes", [2, 4])
def test_dqn_and_sac_learners_over_processes_update_and_resume_as_on_one_device(num_processes):
    port = _free_port()
    command = [sys.executable, "-m", "tests.jax.multiprocess_learners", str(port), str(num_processes)]
    processes = [
        subprocess.Popen(command + [str(i)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(num_processes)
    ]
    try:
        outputs = [p.communicate(timeout=900) for p in processes]
    finally:
        for p in processes:
            p.kill()
    for p, (_, errors) in zip(processes, outputs):
        assert p.returncode == 0, errors[-3000:]
    rows = [json.loads(line) for line in outputs[0][0].splitlines() if line.startswith("{")]
    assert {(row["agent"], row["strategy"]) for row in rows} == {
        (agent, strategy) for agent in ("dqn", "sac") for strategy in ("data", "fsdp")
    }
    for row in rows:
        assert row["devices"] == 2 * num_processes, row
        assert row["integers_equal"] and row["relative_difference"] <= 1e-5, row
        resumed = row["resumed"]  # the one-device state restored in the group, 10 more updates: as on one device
        assert resumed["integers_equal"] and resumed["relative_difference"] <= 1e-5, row


@pytest.mark.parametrize(
    "args, message",
    [
        (("localhost", 2, 0), "coordinator_address must be 'host:port'"),
        (("127.0.0.1:1234", 0, 0), "num_processes must be an integer >= 1"),
        (("127.0.0.1:1234", 2, 2), "process_id must be below num_processes (2)"),
        (("127.0.0.1:1234", 2, -1), "process_id must be an integer >= 0"),
        (("127.0.0.1:1234", 2, 0, 0), "local_cpu_devices must be an integer >= 1"),
    ],
)
def test_a_learner_group_with_a_wrong_address_or_count_is_refused(args, message):
    with pytest.raises(ValueError) as error:
        join_learner_group(*args)
    assert message in str(error.value)


@pytest.mark.ray
def test_a_ray_run_learns_cartpole_with_a_learner_over_two_processes(tmp_path):
    """``--learner-processes 2 --sharding data --devices 2`` as a user runs it: two learner processes of two CPU
    devices each hold one mesh, sample half of each batch each from the replay node and step together; DQN (small,
    20-step returns) gets past a return of 100 within 3,000 steps, and Ray shuts down cleanly."""
    run_dir = tmp_path / "run"
    flags = ["--launcher", "ray", "--learner-processes", "2", "--sharding", "data", "--devices", "2"]
    flags += ["--max-steps", "3000", "--eval-every", "1500", "--eval-episodes", "5", "--no-progress"]
    overrides = ["hidden_sizes=[16]", "batch_size=16", "min_replay_size=100", "n_step=20", "learning_rate=3e-3"]
    overrides += ["samples_per_insert=16.0"]  # each update waits on gloo between the processes (~24 ms here)
    result = subprocess.run(
        [sys.executable, "-m", "baselines", "run", "dqn", *flags, "--run-dir", str(run_dir)]
        + [a for o in overrides for a in ("--set", o)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "learner: on 4 cpu device(s) of 2 processes" in output, output[-4000:]
    assert FORCED_KILL not in output, output[-4000:]  # Ray shut down cleanly (tests/conftest.py)
    returns = [e["mean_return"] for e in json.loads((run_dir / "result.json").read_text())["evaluations"]]
    assert max(returns) >= 100, returns


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--learner-processes", "2"], "give it the data sharding"),
        (["--learner-processes", "2", "--sharding", "fsdp", "--devices", "2"], "give it the data sharding"),
        (["--learner-processes", "2", "--replay", "learner", "--sharding", "data"], "needs a replay every learner"),
        (["--learner-processes", "3", "--sharding", "data", "--devices", "2"], "use a batch_size that 6 divides"),
        (["--learner-processes", "0"], "--learner-processes must be an integer >= 1"),
    ],
)
def test_a_learner_over_processes_that_cannot_run_is_refused_before_anything_starts(tmp_path, flags, message):
    run_dir = tmp_path / "run"
    result = subprocess.run(
        [sys.executable, "-m", "baselines", "run", "dqn", "--launcher", "ray", *flags, "--run-dir", str(run_dir)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0 and message in result.stdout + result.stderr, result.stderr[-2000:]
    assert not run_dir.exists()
