"""``request_cpu_devices`` on a jax without ``jax_num_cpu_devices`` (the reverb stack's 0.4.34, where the Ray
exposure run with a two-device learner checks it end to end): XLA's flag, beside the flags already set."""

from __future__ import annotations

import os

import jax
import pytest

from acme.jax.cpu_devices import request_cpu_devices


def test_a_jax_without_the_option_gets_xla_device_count_flag(monkeypatch):
    def update(name, value):
        raise AttributeError(f"Unrecognized config option: {name}")

    monkeypatch.setattr(jax.config, "update", update)
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false --xla_force_host_platform_device_count=8")
    monkeypatch.delenv("JAX_NUM_CPU_DEVICES", raising=False)
    request_cpu_devices(3)
    assert os.environ["XLA_FLAGS"].split() == [
        "--xla_cpu_multi_thread_eigen=false",
        "--xla_force_host_platform_device_count=3",
    ]
    assert os.environ["JAX_NUM_CPU_DEVICES"] == "3"
    with pytest.raises(ValueError, match="count must be an integer >= 1"):
        request_cpu_devices(0)
