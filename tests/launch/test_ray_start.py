"""A local Ray instance that does not start in time: tried again while time is left, then one clear error.

Ray is not started here: ``ray.init`` is a stand-in that fails as Ray's does.
"""

from __future__ import annotations

import os
import types

import pytest

import launch
from launch import ray_launcher

# What ray.init raises (a bare Exception, ray/_private/node.py) when its raylet has not registered within 30 s.
RAYLET_TIMEOUT = (
    "The current node timed out during startup. This could happen because some of the raylet failed to startup or "
    "the GCS has become overloaded."
)


class _Ray:
    """Stands in for the ``ray`` module: ``init`` raises the errors given, one a call, then starts."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls: list[dict] = []
        self.util = types.SimpleNamespace(get_node_ip_address=lambda: "127.0.0.1")

    def init(self, **options) -> None:
        self.calls.append({"gcs_wait": os.environ.get("RAY_gcs_server_port_wait_time_s"), **options})
        if self.errors:
            raise self.errors.pop(0)


def test_a_start_that_timed_out_is_tried_again_with_ray_waiting_as_long_as_time_is_left(monkeypatch):
    monkeypatch.delenv("RAY_gcs_server_port_wait_time_s", raising=False)
    monkeypatch.setenv("LAUNCH_RAY_START_TIMEOUT", "90")
    ray = _Ray(Exception(RAYLET_TIMEOUT))
    ray_launcher._start_local_ray(ray, {}, None, False, set())
    assert len(ray.calls) == 2
    assert 30 <= int(ray.calls[1]["gcs_wait"]) <= 90  # Ray's GCS gets the time left, never less than its own 30 s
    assert "RAY_gcs_server_port_wait_time_s" not in os.environ


@pytest.mark.parametrize(
    "timeout, attempts",
    [("45", 2), ("95", 4)],  # at least twice, else once per Ray's 30 s wait
)
def test_a_start_that_keeps_timing_out_is_one_error_that_says_what_to_do(monkeypatch, timeout, attempts):
    monkeypatch.setenv("LAUNCH_RAY_START_TIMEOUT", timeout)
    ray = _Ray(*[Exception(RAYLET_TIMEOUT)] * 10)
    with pytest.raises(launch.RayStartError) as info:
        ray_launcher._start_local_ray(ray, {}, None, False, set())
    message = str(info.value)
    assert len(ray.calls) == attempts
    assert f"({attempts} attempts;" in message and "did not start within" in message
    assert RAYLET_TIMEOUT in message and "\n" not in message
    assert f"LAUNCH_RAY_START_TIMEOUT=SECONDS (now {timeout})" in message and "--ray-address" in message
    assert isinstance(info.value, launch.ClusterConnectionError)  # what command lines refuse with exit status 2


def test_a_start_that_fails_otherwise_is_not_tried_again():
    ray = _Ray(RuntimeError("Failed to start GCS. Last connection error: port in use\nTraceback ..."))
    with pytest.raises(launch.RayStartError, match="did not start. Ray said: Failed to start GCS") as info:
        ray_launcher._start_local_ray(ray, {}, None, False, set())
    assert len(ray.calls) == 1 and "Traceback" not in str(info.value)


@pytest.mark.parametrize("value", ["0", "-5", "soon", "nan", "inf"])
def test_a_start_timeout_that_is_not_seconds_is_refused(monkeypatch, value):
    monkeypatch.setenv("LAUNCH_RAY_START_TIMEOUT", value)
    ray = _Ray()
    with pytest.raises(ValueError, match="a number of seconds > 0 is accepted"):
        ray_launcher._start_local_ray(ray, {}, None, False, set())
    assert not ray.calls
