"""The acting benchmark measures what it says: real steps, and an adder that really writes to reverb."""

import pytest


@pytest.mark.reverb
@pytest.mark.parametrize("agent,environment_id", [("dqn", "gymnasium:CartPole-v1"), ("sac", "gymnasium:Pendulum-v1")])
def test_measure_reports_positive_rates_and_written_items(agent, environment_id):
    from benchmarks import actor_overhead  # imports reverb

    row = actor_overhead.measure(agent, environment_id, steps=300)
    for key in ("raw_steps_per_second", "actor_steps_per_second", "actor_and_adder_steps_per_second"):
        assert row[key] > 0, row
    # The warm-up episode and the 300 timed steps all went through the adder: n-step items, one per step once
    # the first n have been seen, so at most n - 1 of the last episode's steps wait for their item.
    from baselines import registry

    config = registry.get_agent(agent).make_config(**registry.BASELINES[(agent, environment_id)].config_overrides)
    assert row["items_written"] >= 300 - (getattr(config, "n_step", 1) - 1), row
    assert row["actor_to_raw"] == pytest.approx(row["actor_steps_per_second"] / row["raw_steps_per_second"], rel=1e-2)
