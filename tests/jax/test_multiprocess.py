"""One learner over several processes on this machine (``acme.jax.multiprocess``): the same updates as on one
device, to float32 rounding. Each process is a subprocess (``tests/jax/multiprocess_learners.py``) with 2 CPU
devices; their collectives go over loopback."""

from __future__ import annotations

import json
import os
import re
import signal
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


def test_dqn_and_sac_learners_over_processes_update_and_resume_as_on_one_device():
    """Two processes of two devices each: the group's mesh spans processes that each hold several devices (four
    processes run end to end in the restart test below, which resumes its checkpoint under four)."""
    num_processes = 2
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


SMALL_DQN = ["hidden_sizes=[16]", "batch_size=16", "min_replay_size=100", "n_step=20", "learning_rate=3e-3"]
SMALL_DQN += ["samples_per_insert=16.0"]  # each update waits on gloo between the processes (~24 ms here)


def _run_dqn(run_dir, checkpoints, flags: list[str], on_line=None) -> str:
    """``python -m baselines run dqn`` with the small DQN, checkpointed to ``checkpoints`` every 300 learner steps;
    ``on_line`` sees each line of output as it comes. Returns the whole output; the run must succeed."""
    command = [sys.executable, "-m", "baselines", "run", "dqn", *flags, "--run-dir", str(run_dir)]
    command += ["--checkpoint-dir", str(checkpoints), "--checkpoint-every-steps", "300", "--no-progress"]
    command += [a for o in SMALL_DQN for a in ("--set", o)]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    try:
        for line in process.stdout:
            lines.append(line)
            if on_line is not None:
                on_line(line)
        process.wait(timeout=900)
    finally:
        process.kill()
    output = "".join(lines)
    assert process.returncode == 0, output[-4000:]
    assert FORCED_KILL not in output, output[-4000:]  # Ray shut down cleanly (tests/conftest.py)
    return output


def _final_checkpoint_steps(output: str) -> int:
    return int(re.search(r"Final checkpoint saved: .*ckpt-(\d+) ", output).group(1))


@pytest.mark.ray
def test_a_learner_over_two_processes_restarts_as_one_and_resumes_under_four(tmp_path):
    """``--learner-processes 2 --sharding data --devices 2`` as a user runs it: two learner processes of two CPU
    devices each hold one mesh, sample half of each batch each from the replay node and step together. Process 1
    is SIGKILLed once a checkpoint exists: the whole group restarts (a new incarnation, both processes) from that
    checkpoint, the actors go on, and the group steps on to the run's end and saves its final checkpoint.
    The run's checkpoint then resumes with four processes under fsdp (Ray, one device each), whose processes gather
    the policy they serve and the final checkpoint's state together. (A group's checkpoint is its whole state, as
    one process's is: the equality test above checks the gathered state, so one process resumes it as any other.
    That test's updates are one device's, to float32 rounding, so the group learns as DQN learns on one device
    (tests/agents/test_dqn_learning.py); learning is not run a second time here.)"""
    checkpoints = tmp_path / "ckpt"
    killed = []

    def kill_process_1_after_a_checkpoint(line: str) -> None:
        found = re.search(r"process 1 of 2 \(pid (\d+)\) joined incarnation 1", line)
        if found:
            killed.append(int(found.group(1)))
        if len(killed) == 1 and list(checkpoints.glob("ckpt-*")):
            os.kill(killed[0], signal.SIGKILL)
            killed.append(-1)

    flags = ["--launcher", "ray", "--learner-processes", "2", "--sharding", "data", "--devices", "2"]
    flags += ["--num-actors", "1", "--max-steps", "900", "--eval-every", "0"]
    output = _run_dqn(tmp_path / "run", checkpoints, flags, kill_process_1_after_a_checkpoint)
    assert re.search(r"learner: on 4 cpu device\(s\) of 2 processes \(ids .*\), data", output), output[-4000:]
    assert len(killed) == 2, output[-4000:]
    for process_id in (0, 1):  # both left the broken group and met again
        assert re.search(rf"process {process_id} of 2 \(pid \d+\) joined incarnation 2", output), output[-4000:]
    restored = re.search(r"learner: restored .*ckpt-(\d+)", output)
    assert restored, output[-4000:]
    saved = _final_checkpoint_steps(output)
    assert saved > int(restored.group(1)), output[-4000:]  # the restarted group stepped on from its checkpoint

    four_flags = ["--launcher", "ray", "--learner-processes", "4", "--sharding", "fsdp", "--devices", "1"]
    # One actor and no evaluation: the actor's policy is still gathered from the four processes (as the evaluator's
    # result at the end), and the check is the resumed state, not learning.
    four_flags += ["--num-actors", "1", "--eval-every", "0"]
    four = _run_dqn(tmp_path / "four", checkpoints, [*four_flags, "--max-steps", "1200"])
    assert re.search(r"learner: on 4 cpu device\(s\) of 4 processes \(ids .*\), fsdp", four), four[-4000:]
    assert "learner: restored" in four and f"ckpt-{saved} (learner step {saved})" in four, four[-4000:]
    assert _final_checkpoint_steps(four) > saved, four[-4000:]  # it stepped on from there


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--learner-processes", "2"], "give it the data or fsdp sharding"),
        (["--learner-processes", "2", "--sharding", "replicated"], "give it the data or fsdp sharding"),
        (["--learner-processes", "2", "--replay", "learner", "--sharding", "data"], "needs a replay every learner"),
        (["--learner-processes", "3", "--sharding", "data", "--devices", "1"], "use a batch_size that 3 divides"),
        (["--learner-processes", "0"], "--learner-processes must be an integer >= 1"),
    ],
)
def test_a_learner_over_processes_that_cannot_run_is_refused_before_anything_starts(tmp_path, flags, message, capsys):
    from baselines.cli import main

    run_dir = tmp_path / "run"
    with pytest.raises(SystemExit) as done:  # the entry point in this process: nothing may start
        main(["run", "dqn", "--launcher", "ray", *flags, "--run-dir", str(run_dir)])
    captured = capsys.readouterr()
    assert done.value.code != 0 and message in captured.out + captured.err, captured.err[-2000:]
    assert not run_dir.exists()


def test_a_restarted_process_waits_for_the_next_incarnation_of_its_group():
    """The rendezvous gives each process the newest incarnation it has not joined: one restarted after a failure
    does not join the broken group again but waits until process 0 opens the next."""
    from acme.experiments.learner_group import GroupRendezvous

    rendezvous = GroupRendezvous(3)
    assert rendezvous.coordinator_for(1) is None  # process 0 has not opened the group yet
    assert rendezvous.open("127.0.0.1:1000") == 1
    assert rendezvous.coordinator_for(1) == (1, "127.0.0.1:1000")
    assert rendezvous.coordinator_for(1) is None  # restarted: incarnation 1 is broken for it
    assert rendezvous.coordinator_for(2) == (1, "127.0.0.1:1000")  # a survivor that had not joined yet
    assert rendezvous.open("127.0.0.1:2000") == 2
    assert rendezvous.coordinator_for(1) == (2, "127.0.0.1:2000")
    assert rendezvous.incarnations() == 2
    with pytest.raises(ValueError, match="process_id must be 1 to 2"):
        rendezvous.coordinator_for(3)


def test_a_group_without_restarts_ends_the_run_when_a_collective_fails():
    from acme.experiments.learner_group import leave_broken_group

    with pytest.raises(RuntimeError, match="a collective of process 1 failed .Gloo AllGather failed.*restarts from"):
        leave_broken_group(1, OSError("Gloo AllGather failed\nmore"), restartable=False)


def test_a_placement_can_put_each_learner_process_on_a_host_of_its_own(tmp_path):
    """One learner process per machine of a cluster: each machine offers one unit of a custom resource and the
    learner and its group reserve one each (docs/learner-devices.md); the rendezvous node reserves none, so P
    machines suffice."""
    import dataclasses

    import launch
    from acme.experiments import make_distributed_experiment
    from acme.experiments.options import RunOptions
    from acme.jax.sharding import LearnerSharding
    from launch.placement import resolve_placement
    from tests.experiments.test_distributed import small_config

    config = dataclasses.replace(small_config(tmp_path, 100), learner_sharding=LearnerSharding("data", devices=1))
    one_each = launch.Resources(custom={"learner_host": 1})
    placement = {"learner": one_each, "learner_group": one_each}
    options = RunOptions(launcher="ray", learner_processes=4, placement=placement)
    program = make_distributed_experiment(config, options)
    resolved = resolve_placement(program, placement)
    hosts = [label for label, resources in resolved.items() if resources.custom.get("learner_host")]
    assert sorted(hosts) == ["learner", *(f"learner_group/process_{i}" for i in (1, 2, 3))]
    assert "learner_rendezvous" in resolved and not resolved["learner_rendezvous"].custom
