"""A single-machine run listens on loopback only, as a user starts it (in a subprocess).

While ``python -m baselines run`` trains, every listening TCP socket of its
process tree (reverb, and with Ray the GCS, raylet, workers and agents) is
read from /proc; none may be bound to a non-loopback address, and none may
accept a connection made to one of this machine's network addresses.
"""

from __future__ import annotations

import csv
import os
import pathlib
import subprocess
import sys

import pytest

from launch.ray_launcher import FORCED_KILL
from tests import exposure

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]

# Only a run with a server can fail this: reverb's replay server (in-process with --replay reverb, the threads
# launcher's replay node), Ray's, and the learner's replay listener of a Ray run without reverb (the direct feed).
# Without reverb, in-process and threads runs have no listening socket at all.
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _run_and_watch(tmp_path: pathlib.Path, *flags: str, max_steps: int = 1200) -> tuple[exposure.Observation, str, int]:
    log = tmp_path / "output.txt"
    command = [
        sys.executable,
        "-m",
        "baselines",
        "run",
        "dqn",
        "--max-steps",
        str(max_steps),
        "--eval-every",
        "0",
        "--no-progress",
        "--run-dir",
        str(tmp_path / "run"),
        *flags,
    ]
    with open(log, "w") as out:
        process = subprocess.Popen(
            command,
            cwd=REPO_ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
        )
        try:
            seen = exposure.watch(process, timeout=300)
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()
    return seen, log.read_text(), process.returncode


@pytest.mark.reverb  # the only server of a single-process run is reverb's
@pytest.mark.parametrize(
    "flags",
    [
        pytest.param(("--replay", "reverb"), id="in-process"),
        pytest.param(("--launcher", "threads", "--num-actors", "1", "--replay", "reverb"), id="threads"),
    ],
)
def test_single_process_runs_listen_on_loopback_only(tmp_path, flags):
    seen, output, returncode = _run_and_watch(tmp_path, *flags)
    assert returncode == 0, output
    assert seen.listeners, "the replay server was never seen listening:\n" + output
    assert not seen.problems(), "\n".join(seen.problems())
    assert FORCED_KILL not in output, output


@pytest.mark.ray
@pytest.mark.parametrize(
    "replay",
    [
        pytest.param("reverb", marks=pytest.mark.reverb, id="reverb-node"),
        pytest.param("learner", id="learner-held"),  # without reverb: the learner's listener of the direct feed
    ],
)
def test_ray_run_listens_on_loopback_only(tmp_path, replay):
    """A Ray run as a user starts it, with Sebulba's layout as one runs it on a machine without accelerators (the
    Ray run of tests/jax/test_sharding.py, here so that one Ray run checks both): the learner node's process gets
    the two CPU devices its layout names (through its placement) and learns data-parallel over them; the actor acts
    on device 0 of its own process. And each node keeps its compiled programs in the run's compile cache (the
    learner's update among them), as a run in one process does."""
    cache = tmp_path / "compiled"
    flags = ["--launcher", "ray", "--num-actors", "1", "--replay", replay, "--compile-cache", str(cache)]
    flags += ["--sharding", "data", "--devices", "2", "--actor-device", "0", "--set", "batch_size=32"]
    seen, output, returncode = _run_and_watch(tmp_path, *flags, max_steps=1500)
    assert returncode == 0, output
    assert f"Compiled programs are kept in {cache}" in output, output[-4000:]
    assert any(name.startswith("jit_step-") for name in os.listdir(cache)), sorted(os.listdir(cache))
    commands = {listener.command for listener in seen.listeners}
    assert {"gcs_server", "raylet"} <= commands, f"Ray's servers were not seen: {commands}\n{output}"
    assert not seen.problems(), "\n".join(seen.problems())
    assert "learner: on 2 cpu device(s) (ids 0, 1), data." in output, output[-4000:]
    assert FORCED_KILL not in output, output[-4000:]  # Ray shut down cleanly (tests/conftest.py)
    with open(tmp_path / "run" / "learner.csv") as f:
        last = list(csv.DictReader(f))[-1]
    assert float(last["learner_steps"]) > 0, last
