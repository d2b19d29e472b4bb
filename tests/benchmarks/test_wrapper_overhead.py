"""The wrapper benchmark steps both environments for real and reports a consistent ratio."""

import pytest

from benchmarks import wrapper_overhead


def test_measure_reports_both_rates_and_their_ratio():
    row = wrapper_overhead.measure("Pendulum-v1", steps=300, repeats=1)
    assert row["bare_steps_per_second"] > 0 and row["wrapped_steps_per_second"] > 0
    assert row["wrapped_to_bare"] == pytest.approx(
        row["wrapped_steps_per_second"] / row["bare_steps_per_second"], rel=1e-2
    )
