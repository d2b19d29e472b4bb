"""The wrapper benchmark steps both environments for real and reports a consistent ratio."""

import importlib.util
import os

import pytest

_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "wrapper_overhead.py")


def test_measure_reports_both_rates_and_their_ratio():
    spec = importlib.util.spec_from_file_location("wrapper_overhead", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    row = module.measure("Pendulum-v1", steps=300, repeats=1)
    assert row["bare_steps_per_second"] > 0 and row["wrapped_steps_per_second"] > 0
    assert row["wrapped_to_bare"] == pytest.approx(
        row["wrapped_steps_per_second"] / row["bare_steps_per_second"], rel=1e-2
    )
