"""Fixtures for the launch tests: markers and a throwaway external Ray cluster."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import psutil
import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)


def pytest_configure(config):
    config.addinivalue_line("markers", "ray: tests that start or join a Ray cluster")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


RAY_NODE_NICENESS = -5  # for `ray start` and the processes it starts (root only)
START_ATTEMPTS = 3


class RayCluster:
    """A `ray start --head --block` process group owned by the test session."""

    def __init__(self, resources: dict[str, float] | None = None, join: str | None = None, num_cpus: int = 2) -> None:
        """A head node, or with ``join`` (a head's address) a worker node of that cluster; ``resources``
        are the node's custom resources."""
        self.port = _free_port()
        self.address = join or f"127.0.0.1:{self.port}"
        self.temp_dir = tempfile.mkdtemp(prefix="launch-ray-")
        ray_cli = os.path.join(os.path.dirname(sys.executable), "ray")
        command = (
            [ray_cli]
            if os.path.exists(ray_cli)
            else [sys.executable, "-c", "from ray.scripts.scripts import main; main()"]
        )
        command += ["start", f"--num-cpus={num_cpus}", "--disable-usage-stats", "--block"]
        if join is None:
            command += ["--head", f"--port={self.port}", "--include-dashboard=false", f"--temp-dir={self.temp_dir}"]
        else:  # Workers share the head's temp dir: --temp-dir is for the head only.
            command += [f"--address={join}", "--node-ip-address=127.0.0.1"]
        if resources:
            command.append(f"--resources={json.dumps(resources)}")
        # No token auth, so that joining by explicit address needs no token.
        env = dict(os.environ, RAY_AUTH_MODE="disabled")
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True
        )
        # Ray's start-up gives its raylet 30 s to register, which the other test worker's load on 2 cores can starve
        # it of: the node's processes (started by this one, a second later) get a higher priority where allowed.
        try:
            os.setpriority(os.PRIO_PROCESS, self.process.pid, RAY_NODE_NICENESS)
        except PermissionError:
            pass
        self._lines: queue.Queue = queue.Queue()
        self.output: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        for line in self.process.stdout:
            self.output.append(line)
            self._lines.put(line)
        self._lines.put(None)

    def wait_started(self, timeout: float = 90.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                line = self._lines.get(timeout=0.5)
            except queue.Empty:
                continue
            if line is None:
                break
            if "Ray runtime started" in line or "Ray runtime started." in line:
                return
        raise RuntimeError("ray start failed:\n" + "".join(self.output))

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        try:
            descendants = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            descendants = []
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # Our own process group only.
        except ProcessLookupError:
            pass
        for proc in descendants:  # Workers may sit in process groups of their own.
            try:
                proc.kill()
            except psutil.NoSuchProcess:
                pass
        self.process.wait(timeout=30)
        psutil.wait_procs(descendants, timeout=10)
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def start_ray_node(resources: dict[str, float] | None = None, join: str | None = None, num_cpus: int = 2) -> RayCluster:
    """A started `ray start` node (see ``RayCluster``). On an overloaded machine Ray's own start-up can time out (its
    GCS answers too late, or a joining raylet registers too late); fresh nodes are tried, ``START_ATTEMPTS`` in all,
    a few seconds apart, before giving up."""
    for attempt in range(START_ATTEMPTS):
        node = RayCluster(resources=resources, join=join, num_cpus=num_cpus)
        try:
            node.wait_started()
            return node
        except RuntimeError:
            node.stop()
            if attempt == START_ATTEMPTS - 1:
                raise
            time.sleep(5.0)
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def ray_cluster():
    """An external Ray head node on a loopback port (started as ``start_ray_node`` does), killed at session end."""
    cluster = start_ray_node()
    try:
        yield cluster
    finally:
        cluster.stop()
