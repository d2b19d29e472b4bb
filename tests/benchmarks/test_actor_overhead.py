"""The acting benchmark measures what it says: real steps, and an adder that really writes to reverb."""

import pytest

from acme.wrappers.base import EnvironmentWrapper


class _Steps(EnvironmentWrapper):
    """Counts the steps taken, and those of the first episode."""

    def __init__(self, environment):
        super().__init__(environment)
        self.steps = 0
        self.first_episode = None

    def step(self, action):
        timestep = super().step(action)
        self.steps += 1
        if timestep.last() and self.first_episode is None:
            self.first_episode = self.steps
        return timestep


@pytest.mark.reverb
@pytest.mark.parametrize("agent,environment_id", [("dqn", "gymnasium:CartPole-v1"), ("sac", "gymnasium:Pendulum-v1")])
def test_measure_reports_the_rates_of_the_steps_it_took_and_the_items_it_wrote(agent, environment_id, monkeypatch):
    from benchmarks import actor_overhead  # imports reverb

    raw_rounds, loop_rounds = [], []
    steps_per_second, loop_steps_per_second = actor_overhead.steps_per_second, actor_overhead._loop_steps_per_second

    def raw(environment, actions):  # the benchmark's own timings, with the steps they took counted
        counted = _Steps(environment)
        raw_rounds.append((counted, steps_per_second(counted, actions)))
        return raw_rounds[-1][1]

    def loop(environment, actor, steps):
        counted = _Steps(environment)
        loop_rounds.append((counted, loop_steps_per_second(counted, actor, steps)))
        return loop_rounds[-1][1]

    monkeypatch.setattr(actor_overhead, "steps_per_second", raw)
    monkeypatch.setattr(actor_overhead, "_loop_steps_per_second", loop)
    row = actor_overhead.measure(agent, environment_id, steps=300)

    # One raw round of 300 steps; two loop rounds (the actor alone, then with its adder), each a warm-up episode
    # and then the 300 timed steps. The row's rates are those rounds' and its ratios are of those rates.
    assert row["steps"] == 300
    ((raw_steps, raw_rate),), ((actor_steps, actor_rate), (adder_steps, adder_rate)) = raw_rounds, loop_rounds
    assert raw_steps.steps == 300
    assert actor_steps.steps - actor_steps.first_episode == 300
    assert adder_steps.steps - adder_steps.first_episode == 300
    assert row["raw_steps_per_second"] == round(raw_rate, 1)
    assert row["actor_steps_per_second"] == round(actor_rate, 1)
    assert row["actor_and_adder_steps_per_second"] == round(adder_rate, 1)
    assert row["actor_to_raw"] == round(actor_rate / raw_rate, 3)  # of the rates, not of their rounded figures
    assert row["actor_and_adder_to_raw"] == round(adder_rate / raw_rate, 3)
    # The warm-up episode and the 300 timed steps all went through the adder: n-step items, one per step once
    # the first n have been seen, so at most n - 1 of the last episode's steps wait for their item; never more
    # items than steps.
    from baselines import registry

    config = registry.get_agent(agent).make_config(**registry.BASELINES[(agent, environment_id)].config_overrides)
    assert 300 - (getattr(config, "n_step", 1) - 1) <= row["items_written"] <= adder_steps.steps, row
