"""EnvironmentLoop: counting, logging, observers and stop conditions."""

import numpy as np
import pytest

from acme import core
from acme.environment_loop import EnvironmentLoop
from acme.testing import fakes
from acme.utils import counting
from acme.utils.observers import ActionHistogramObserver


class RecordingActor(core.Actor):
    def __init__(self):
        self.first = 0
        self.observed = 0
        self.updates = 0

    def select_action(self, observation):
        return np.int32(1)

    def observe_first(self, timestep):
        self.first += 1

    def observe(self, action, next_timestep):
        self.observed += 1

    def update(self, wait=False):
        self.updates += 1


class ListLogger:
    def __init__(self):
        self.rows = []

    def write(self, data):
        self.rows.append(dict(data))

    def close(self):
        pass


def make_loop(episode_length=10, **kwargs):
    env = fakes.FakeEnvironment(fakes.discrete_spec(), episode_length=episode_length)
    actor = RecordingActor()
    logger = ListLogger()
    counter = counting.Counter()
    loop = EnvironmentLoop(env, actor, counter=counter, logger=logger, **kwargs)
    return loop, actor, logger, counter


def test_runs_whole_episodes_and_counts():
    loop, actor, logger, counter = make_loop(episode_length=10)
    steps = loop.run(num_episodes=3)
    assert steps == 30
    assert actor.first == 3 and actor.observed == 30 and actor.updates == 30
    assert counter.get_counts() == {"episodes": 3, "steps": 30}
    assert [row["episode_length"] for row in logger.rows] == [10, 10, 10]
    # FakeEnvironment rewards are t = 1..10.
    assert logger.rows[0]["episode_return"] == pytest.approx(55.0)
    assert all(row["steps_per_second"] > 0 for row in logger.rows)


def test_step_budget_is_exact():
    loop, actor, logger, counter = make_loop(episode_length=10)
    assert loop.run(num_steps=25) == 25
    assert actor.observed == 25
    assert counter.get_counts()["steps"] == 25
    assert counter.get_counts()["episodes"] == 2  # the third episode was cut short
    assert logger.rows[-1]["episode_finished"] is False


def test_first_budget_reached_wins():
    loop, _, _, _ = make_loop(episode_length=10)
    assert loop.run(num_episodes=1, num_steps=1000) == 10
    assert loop.run(num_episodes=100, num_steps=15) == 15


def test_should_stop_ends_after_episode():
    calls = []
    loop, _, logger, _ = make_loop(episode_length=4, should_stop=lambda: len(calls.append(1) or calls) >= 2)
    loop.run()
    assert len(logger.rows) == 2


def test_no_updates_when_disabled():
    loop, actor, _, _ = make_loop(should_update=False)
    loop.run(num_episodes=1)
    assert actor.updates == 0


def test_observers_add_metrics():
    loop, _, logger, _ = make_loop(episode_length=6, observers=[ActionHistogramObserver()])
    loop.run(num_episodes=1)
    assert logger.rows[0]["action_1_count"] == 6


def test_negative_budget_rejected():
    loop, _, _, _ = make_loop()
    with pytest.raises(ValueError, match="num_steps"):
        loop.run(num_steps=-1)


def test_episode_returns_runs_whole_episodes_without_logging():
    loop, _, logger, counter = make_loop(episode_length=4)
    assert loop.episode_returns(3) == [10.0, 10.0, 10.0]  # rewards 1..4
    assert logger.rows == []
    assert counter.get_counts()["episodes"] == 3
