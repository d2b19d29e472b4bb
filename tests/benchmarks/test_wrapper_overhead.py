"""The wrapper benchmark steps both environments for real and reports a consistent ratio."""

import numpy as np
import pytest

from acme import wrappers
from benchmarks import common, wrapper_overhead


def test_measure_steps_both_environments_alternately_and_reports_the_medians_of_its_rounds(monkeypatch):
    rounds = []

    def timed(environment, actions):  # the benchmark's own timing, recorded
        rate = common.steps_per_second(environment, actions)
        rounds.append((environment, np.stack(actions), rate))
        return rate

    monkeypatch.setattr(wrapper_overhead, "steps_per_second", timed)
    row = wrapper_overhead.measure("Pendulum-v1", steps=300, repeats=3)

    assert row["steps"] == 300 and row["repeats"] == 3
    bare, wrapped = rounds[0::2], rounds[1::2]
    assert len(bare) == len(wrapped) == 3 and len(rounds) == 6  # alternating: bare, wrapped, bare, ...
    assert all(type(environment) is wrappers.GymnasiumToDmEnv for environment, _, _ in bare)
    assert all(type(environment) is not wrappers.GymnasiumToDmEnv for environment, _, _ in wrapped)
    assert all(len(actions) == 300 for _, actions, _ in rounds)
    assert np.abs(np.concatenate([actions for _, actions, _ in wrapped])).max() <= 1.0  # canonical actions
    assert np.abs(np.concatenate([actions for _, actions, _ in bare])).max() > 1.0  # Pendulum's own [-2, 2]
    assert row["bare_steps_per_second"] == round(float(np.median([rate for *_, rate in bare])), 1)
    assert row["wrapped_steps_per_second"] == round(float(np.median([rate for *_, rate in wrapped])), 1)
    assert row["wrapped_to_bare"] == pytest.approx(
        row["wrapped_steps_per_second"] / row["bare_steps_per_second"], rel=1e-2
    )
