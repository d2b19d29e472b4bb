"""Ray launcher with its own local Ray instance: end to end, then clean shutdown."""

from __future__ import annotations

import json
import os
import threading

import psutil
import pytest

import launch
from tests.launch import testlib

pytestmark = pytest.mark.ray


class _DescendantWatcher:
    """Records every process started under this one (except under ``baseline``).

    Sampling while the program runs also catches processes that outlive their
    parent and get re-parented away from this process.
    """

    def __init__(self) -> None:
        self._me = psutil.Process()
        self._baseline = {p.pid for p in self._me.children()}
        self.seen: dict[int, tuple[psutil.Process, str]] = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        for child in self._me.children(recursive=True):
            try:
                lineage = [child] + child.parents()
                top = next(p for p in lineage if p.ppid() == self._me.pid)
                if top.pid not in self._baseline:
                    # The name is taken again each time: a child seen between its fork and its exec still has
                    # its parent's name, and a name taken once could miss the raylet.
                    first = self.seen.get(child.pid, (child, ""))[0]
                    self.seen[child.pid] = (first, child.name())
            except (psutil.NoSuchProcess, psutil.AccessDenied, StopIteration):
                continue

    def _loop(self) -> None:
        while not self._done.wait(0.3):
            self._sample()

    def stop(self) -> None:
        self._sample()
        self._done.set()
        self._thread.join()

    def survivors(self) -> list[str]:
        alive = []
        for proc, name in self.seen.values():
            try:
                if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                    alive.append(f"{proc.pid}:{name}")
            except psutil.NoSuchProcess:
                pass
        return alive


@pytest.mark.parametrize(
    "with_reverb", [pytest.param(False, id="core"), pytest.param(True, marks=pytest.mark.reverb, id="reverb-node")]
)
def test_ray_local_end_to_end_and_clean_shutdown(tmp_path, with_reverb):
    import ray

    assert not ray.is_initialized()
    proxy_result = str(tmp_path / "proxy.json")
    reverb_result = str(tmp_path / "reverb.json")
    marker = str(tmp_path / "ticker_stopped")

    program = launch.Program("ray-e2e")
    counter = program.add_node(launch.ServiceNode(testlib.Counter), "counter")
    if with_reverb:  # a reverb server node, reached from another process by its address
        replay = program.add_node(launch.ReverbNode(testlib.reverb_tables), "replay")
    program.add_node(launch.ServiceNode(testlib.Ticker, counter, marker=marker), "ticker")
    with program.group("worker", resources=launch.Resources(num_cpus=0.5)):
        program.add_node(launch.FunctionNode(testlib.work, counter, 50))
        program.add_node(launch.FunctionNode(testlib.work, counter, 50))
    program.add_node(
        launch.FunctionNode(testlib.check_counter_proxy, counter, 100, proxy_result), "checker", terminal=True
    )
    if with_reverb:
        program.add_node(
            launch.FunctionNode(testlib.roundtrip_reverb, replay, reverb_result), "reverb_user", terminal=True
        )

    watcher = _DescendantWatcher()
    try:
        returned = launch.launch(program, "ray", timeout=300)
    finally:
        watcher.stop()
    # What the terminal checker returned when it finished, and what the ticker's run() returned once stopped.
    assert returned["checker"] != os.getpid() and returned["ticker"] >= 1, returned

    with open(proxy_result) as f:
        proxy = json.load(f)
    assert proxy["count"] >= 100 and proxy["future"] >= 100
    assert proxy["proxy_type"] == "ServiceProxy"
    assert proxy["pid"] != os.getpid()
    assert "'counter'" in proxy["missing_method_error"]
    assert "increment" in proxy["missing_method_error"]
    assert proxy["repickled_get"]
    if with_reverb:
        with open(reverb_result) as f:
            reverb_data = json.load(f)
        assert reverb_data["data"] == [7, 11]
        host, port = reverb_data["address"].rsplit(":", 1)
        assert host and int(port) > 0
    assert os.path.exists(marker), "the ticker's stop() was not called"

    # Clean shutdown: Ray is down and no process it started survives.
    assert not ray.is_initialized()
    assert any("raylet" in name for _, name in watcher.seen.values())  # Watcher works.
    testlib.eventually(lambda: not watcher.survivors(), timeout=120)  # processes that are exiting get time to go
    assert not watcher.survivors()


def test_unreachable_cluster_address_is_refused_before_ray_init(monkeypatch):
    import ray

    tried: list = []  # ray.init() takes tens of seconds to give up on an address that is not Ray's

    def init(*args, **kwargs):
        tried.append(kwargs)
        raise RuntimeError("ray.init() was called")

    monkeypatch.setattr(ray, "init", init)
    program = launch.Program("unreachable")
    program.add_node(launch.FunctionNode(testlib.work, None, 0), "noop")
    with pytest.raises(launch.ClusterConnectionError) as info:
        launch.launch(program, "ray", address="127.0.0.1:1")
    assert not tried, tried
    assert "cannot reach" in str(info.value) and "127.0.0.1:1" in str(info.value)
    assert isinstance(info.value, ConnectionError)
    assert not ray.is_initialized()
