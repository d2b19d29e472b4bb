"""Ray launcher against an external cluster: restarts, failures, own-actor cleanup."""

from __future__ import annotations

import json
import os
import signal
import time

import psutil
import pytest

import launch
from tests.launch import testlib

pytestmark = pytest.mark.ray


def _pid_gone(pid: int, timeout: float = 120.0) -> bool:  # a guard against a hang, not a speed check
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


def test_sigkilled_node_restarts_and_program_finishes(ray_cluster, tmp_path):
    import ray

    result_path = str(tmp_path / "kill.json")
    program = launch.Program("restart")
    counter = program.add_node(launch.ServiceNode(testlib.Counter), "counter")
    program.add_node(
        launch.ServiceNode(testlib.PidReporter, counter), "reporter", restart=launch.RestartPolicy(max_restarts=2)
    )
    program.add_node(launch.FunctionNode(testlib.kill_reporter_once, counter, result_path), "killer", terminal=True)

    launch.launch(program, "ray", address=ray_cluster.address, timeout=300)

    with open(result_path) as f:
        result = json.load(f)
    assert result["first_pid"] != result["second_pid"]
    assert result["count_after"] >= result["count_at_kill"] + 5
    assert not ray.is_initialized()
    # Only the program's own actors were killed: the cluster is still up.
    assert _pid_gone(result["second_pid"]), "the restarted node's process outlived launch()"
    assert ray_cluster.alive()


def test_node_exception_on_ray_stops_everything(ray_cluster, tmp_path):
    marker = str(tmp_path / "ticker_stopped")
    program = launch.Program("failing")
    counter = program.add_node(launch.ServiceNode(testlib.Counter), "counter")
    program.add_node(launch.ServiceNode(testlib.Ticker, counter, marker=marker), "ticker")
    program.add_node(launch.FunctionNode(testlib.fail, "boom-on-ray"), "failing")

    with pytest.raises(launch.NodeError) as info:
        launch.launch(program, "ray", address=ray_cluster.address, timeout=300)

    assert info.value.label == "failing"
    message = str(info.value)
    assert "'failing'" in message
    assert "Traceback" in message and "ValueError: boom-on-ray" in message
    assert os.path.exists(marker), "the ticker's stop() was not called"


def test_constructor_error_names_the_broken_node_not_its_dependents(ray_cluster):
    program = launch.Program("broken")
    broken = program.add_node(launch.ServiceNode(testlib.Broken), "broken")
    program.add_node(launch.ServiceNode(testlib.Holder, broken), "dependent")
    program.add_node(launch.FunctionNode(testlib.work, broken, 1), "user")

    with pytest.raises(launch.NodeError) as info:
        launch.launch(program, "ray", address=ray_cluster.address, timeout=300)

    assert info.value.label == "broken"
    assert "RuntimeError: constructor exploded" in str(info.value)


def test_dead_actor_without_restarts_is_a_node_error(ray_cluster):
    program = launch.Program("dying")
    program.add_node(launch.FunctionNode(testlib.die), "doomed")
    program.add_node(launch.FunctionNode(testlib.until_stopped), "bystander")

    # The bystander runs until stopped: an unnoticed death would end in LaunchTimeout (300 s, a hang guard), not this.
    with pytest.raises(launch.NodeError) as info:
        launch.launch(program, "ray", address=ray_cluster.address, timeout=300, grace_period=1.0)

    assert info.value.label == "doomed"
    assert "died" in str(info.value)


def test_sigterm_during_ray_launch_stops_cleanly(ray_cluster, tmp_path):
    import subprocess
    import sys

    running_path = str(tmp_path / "running.json")
    marker = str(tmp_path / "ticker_stopped")
    repo_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.Popen(
        [sys.executable, "-c", testlib.RAY_DRIVER_SCRIPT, ray_cluster.address, running_path, marker],
        cwd=repo_root,
        env=dict(os.environ, PYTHONPATH=repo_root),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        testlib.wait_until(lambda: os.path.exists(running_path) or proc.poll() is not None, timeout=180)
        assert proc.poll() is None, proc.communicate()[0]
        with open(running_path) as f:
            node_pid = json.load(f)["pid"]
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=300)  # a guard against a hang, not a speed check
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, output
    assert "RAISED SystemExit 143 False" in output
    assert os.path.exists(marker), "the ticker's stop() was not called"
    assert _pid_gone(node_pid)
    assert ray_cluster.alive()
