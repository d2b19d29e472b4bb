"""The watcher that ends a local Ray instance's processes when the process that started Ray is killed.

Ray is not started here: ``sleep`` processes stand for Ray's agents, which outlive a SIGKILLed driver by a minute.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil

from launch import ray_launcher

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Starts a watcher of the processes given as PID (or PID~ : recorded with another start time, as when the id was
# reused), prints the watcher's id, then waits to be killed.
_DRIVER = """
import sys, time, types
import psutil
from launch import ray_launcher

processes = []
for arg in sys.argv[1:]:
    process = psutil.Process(int(arg.rstrip("~")))
    if arg.endswith("~"):
        process = types.SimpleNamespace(pid=process.pid, create_time=lambda t=process.create_time(): t - 5)
    processes.append(process)
print(ray_launcher._FateShare.start(processes).pid, flush=True)
time.sleep(60)
"""


def _wait_until(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_killed_driver_s_processes_are_ended_but_not_a_process_that_reused_an_id():
    agent = subprocess.Popen(["sleep", "60"])
    unrelated = subprocess.Popen(["sleep", "60"])
    driver = subprocess.Popen(
        [sys.executable, "-c", _DRIVER, str(agent.pid), f"{unrelated.pid}~"],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=REPO_ROOT),
    )
    try:
        watcher = int(driver.stdout.readline())
        assert _running(watcher) and _running(agent.pid)
        driver.send_signal(signal.SIGKILL)
        assert agent.wait(timeout=30) == -signal.SIGKILL
        _wait_until(lambda: not _running(watcher))
        assert unrelated.poll() is None
    finally:
        for process in (driver, agent, unrelated):
            process.kill()
            process.wait()


def test_a_session_closed_as_usual_leaves_the_processes_to_ray_and_its_watcher_exits():
    agent = subprocess.Popen(["sleep", "60"])
    try:
        fate = ray_launcher._FateShare.start([psutil.Process(agent.pid)])
        watcher = psutil.Process(fate.pid)
        fate.close()
        assert not _running(watcher.pid)
        assert agent.poll() is None
    finally:
        agent.kill()
        agent.wait()


def test_no_watcher_without_processes():
    assert ray_launcher._FateShare.start([]) is None
