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

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("num_processes", [2, 4])
def test_dqn_and_sac_learners_over_processes_update_as_on_one_device(num_processes):
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
