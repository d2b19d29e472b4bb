"""Ray launcher with its own local Ray instance: end to end, then clean shutdown."""

from __future__ import annotations

import json
import os
import time

import psutil
import pytest

import launch
from tests.launch import testlib

pytestmark = pytest.mark.ray


def _new_descendants(baseline: set[int]) -> list[psutil.Process]:
    """Descendants of this process not under a process that existed before."""
    me = psutil.Process()
    result = []
    for child in me.children(recursive=True):
        try:
            lineage = [child] + child.parents()
            top = next(p for p in lineage if p.ppid() == me.pid)
            if top.pid not in baseline and child.status() != psutil.STATUS_ZOMBIE:
                result.append(child)
        except (psutil.NoSuchProcess, StopIteration):
            continue
    return result


def test_ray_local_end_to_end_and_clean_shutdown(tmp_path):
    import ray  # pylint: disable=g-import-not-at-top

    assert not ray.is_initialized()
    baseline = {p.pid for p in psutil.Process().children()}
    proxy_result = str(tmp_path / "proxy.json")
    reverb_result = str(tmp_path / "reverb.json")
    marker = str(tmp_path / "ticker_stopped")

    program = launch.Program("ray-e2e")
    counter = program.add_node(launch.ServiceNode(testlib.Counter), "counter")
    replay = program.add_node(launch.ReverbNode(testlib.reverb_tables), "replay")
    program.add_node(launch.ServiceNode(testlib.Ticker, counter, marker=marker), "ticker")
    with program.group("worker", resources=launch.Resources(num_cpus=0.5)):
        program.add_node(launch.FunctionNode(testlib.work, counter, 50))
        program.add_node(launch.FunctionNode(testlib.work, counter, 50))
    program.add_node(launch.FunctionNode(testlib.check_counter_proxy, counter, 100, proxy_result),
                     "checker", terminal=True)
    program.add_node(launch.FunctionNode(testlib.roundtrip_reverb, replay, reverb_result),
                     "reverb_user", terminal=True)

    launch.launch(program, "ray", timeout=150)

    with open(proxy_result) as f:
        proxy = json.load(f)
    assert proxy["count"] >= 100 and proxy["future"] >= 100
    assert proxy["proxy_type"] == "ServiceProxy"
    assert proxy["pid"] != os.getpid()
    assert "'counter'" in proxy["missing_method_error"]
    assert "increment" in proxy["missing_method_error"]
    assert proxy["repickled_get"]
    with open(reverb_result) as f:
        reverb_data = json.load(f)
    assert reverb_data["data"] == [7, 11]
    host, port = reverb_data["address"].rsplit(":", 1)
    assert host and int(port) > 0
    assert os.path.exists(marker), "the ticker's stop() was not called"

    # Clean shutdown: Ray is down and no process it started survives.
    assert not ray.is_initialized()
    end = time.monotonic() + 20
    while _new_descendants(baseline) and time.monotonic() < end:
        time.sleep(0.2)
    assert not _new_descendants(baseline), [p.name() for p in _new_descendants(baseline)]


def test_unreachable_cluster_address_fails_fast():
    import ray  # pylint: disable=g-import-not-at-top

    program = launch.Program("unreachable")
    program.add_node(launch.FunctionNode(testlib.work, None, 0), "noop")
    start = time.monotonic()
    with pytest.raises(launch.ClusterConnectionError) as info:
        launch.launch(program, "ray", address="127.0.0.1:1")
    assert time.monotonic() - start < 10
    assert "127.0.0.1:1" in str(info.value)
    assert isinstance(info.value, ConnectionError)
    assert not ray.is_initialized()
