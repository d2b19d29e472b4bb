"""The acting benchmark measures what it says: real steps, and an adder that really writes to reverb."""

import importlib.util
import os

import pytest

_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "actor_overhead.py")


@pytest.fixture(scope="module")
def actor_overhead():
    spec = importlib.util.spec_from_file_location("actor_overhead", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("agent,environment_id", [("dqn", "gymnasium:CartPole-v1"), ("sac", "gymnasium:Pendulum-v1")])
def test_measure_reports_positive_rates_and_written_items(actor_overhead, agent, environment_id):
    row = actor_overhead.measure(agent, environment_id, steps=300)
    for key in ("raw_steps_per_second", "actor_steps_per_second", "actor_and_adder_steps_per_second"):
        assert row[key] > 0, row
    # The warm-up episode and the 300 timed steps all went through the adder (n-step items, one per step
    # once the first n have been seen).
    assert row["items_written"] >= 300, row
    assert row["actor_to_raw"] == pytest.approx(row["actor_steps_per_second"] / row["raw_steps_per_second"], rel=1e-2)
