"""The distributed-returns benchmark's summary of a curve, and the placement it asks for."""

from __future__ import annotations

import json

import pytest

import launch
from benchmarks.common import pinned_placement
from benchmarks.distributed_returns import curve_summary


def test_a_curve_is_summarised_from_its_first_evaluation_at_the_target():
    curve = [(5_000, 20.0), (10_000, 480.0), (15_000, 300.0), (20_000, 500.0), (25_000, 475.0)]
    assert curve_summary(curve, 475.0) == {"final_return": 475.0, "first_step_at_target": 10_000, "held_after": 0.667}
    assert curve_summary([(5_000, 20.0)], 475.0) == {
        "final_return": 20.0,
        "first_step_at_target": None,
        "held_after": None,
    }
    assert curve_summary([(5_000, 500.0)], 475.0)["held_after"] is None  # nothing after the first


def test_the_placement_pins_the_learner_and_the_actors_apart():
    placement = launch.placement_from_json(json.dumps(pinned_placement(4)))
    assert placement == {"learner": launch.Resources(cores=(0,)), "actor": launch.Resources(cores=(1, 2, 3))}
    assert pinned_placement(2)["actor"] == {"cores": [1]}
    for cores in (1, 0, 2.0):
        with pytest.raises(ValueError, match="needs at least 2 cores"):
            pinned_placement(cores)
