"""EnvironmentLoop: counting, logging, observers and budgets, in one environment and in K."""

import numpy as np
import pytest

from acme import core
from acme.environment_loop import EnvironmentLoop
from acme.environments.batch import SeparateEnvironments
from acme.testing import fakes
from acme.utils import counting
from acme.utils.observers import ActionHistogramObserver


class RecordingActor(core.Actor):
    def __init__(self, num_envs=1):
        self._num_envs = num_envs
        self.first = 0
        self.observed = 0
        self.updates = 0

    @property
    def num_envs(self):
        return self._num_envs

    def select_actions(self, observations):
        return np.ones(len(observations), np.int32)

    def observe_first(self, index, timestep):
        self.first += 1

    def observe(self, index, action, next_timestep):
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


def make_loop(episode_length=10, num_envs=1, **kwargs):
    environments = [
        fakes.FakeEnvironment(fakes.discrete_spec(), episode_length=episode_length) for _ in range(num_envs)
    ]
    actor = RecordingActor(num_envs)
    logger = ListLogger()
    counter = counting.Counter()
    loop = EnvironmentLoop(environments, actor, counter=counter, logger=logger, **kwargs)
    return loop, actor, logger, counter


def test_runs_whole_episodes_and_counts():
    loop, actor, logger, counter = make_loop(episode_length=10)
    rows = loop.run_episodes(3)
    assert len(rows) == 3
    assert actor.first == 4 and actor.observed == 30 and actor.updates == 30  # the fourth episode has begun
    assert counter.get_counts() == {"episodes": 3, "steps": 30}
    assert [row["episode_length"] for row in logger.rows] == [10, 10, 10]
    # FakeEnvironment rewards are t = 1..10.
    assert logger.rows[0]["episode_return"] == pytest.approx(55.0)
    assert all(row["steps_per_second"] > 0 for row in logger.rows)


def test_a_step_budget_is_exact_and_the_episode_in_progress_goes_on_at_the_next_call():
    loop, actor, logger, counter = make_loop(episode_length=10)
    assert len(loop.run(25)) == 2
    assert actor.observed == 25
    assert counter.get_counts() == {"episodes": 2, "steps": 25}
    loop.run(5)
    assert counter.get_counts() == {"episodes": 3, "steps": 30}
    assert [row["episode_length"] for row in logger.rows] == [10, 10, 10]


def test_k_environments_share_a_step_budget_and_count_every_step():
    loop, actor, logger, counter = make_loop(episode_length=4, num_envs=3)
    loop.run(10)  # three batched steps for all 3, then one for the first environment only, which ends its episode
    assert actor.observed == 10 and actor.updates == 4
    assert counter.get_counts() == {"episodes": 1, "steps": 10}
    assert [(row["environment_index"], row["steps"]) for row in logger.rows] == [(0, 10)]  # counts as of its end
    loop.run(3)  # one batched step: the first environment's new episode goes on, the other two end theirs
    assert [(row["environment_index"], row["steps"]) for row in logger.rows[1:]] == [(1, 12), (2, 13)]


class WholeBatch(SeparateEnvironments):
    """K environments that, like a vectorised simulator, step all together or not at all."""

    splittable = False


def test_a_batch_that_steps_all_k_takes_whole_steps_and_says_how_many():
    environments = [fakes.FakeEnvironment(fakes.discrete_spec(), episode_length=4) for _ in range(3)]
    actor, counter = RecordingActor(3), counting.Counter()
    loop = EnvironmentLoop(WholeBatch(environments), actor, counter=counter, logger=ListLogger())
    loop.run(10)  # four whole steps: 12, not 10
    assert loop.last_run_steps == 12 and actor.observed == 12 and counter.get_counts()["steps"] == 12
    assert counter.get_counts()["episodes"] == 3
    loop.run(3)
    assert loop.last_run_steps == 3 and counter.get_counts()["steps"] == 15
    simulated = WholeBatch(environments[:1])
    simulated.environments = None  # a vectorised simulator: no dm_env environments for observers to watch
    with pytest.raises(ValueError, match="in one vectorised batch"):
        EnvironmentLoop(simulated, RecordingActor(), observers=[ActionHistogramObserver()])


def test_no_updates_when_disabled():
    loop, actor, _, _ = make_loop(should_update=False)
    loop.run_episodes(1)
    assert actor.updates == 0


def test_observers_add_metrics():
    loop, _, logger, _ = make_loop(episode_length=6, observers=[ActionHistogramObserver()])
    loop.run_episodes(1)
    assert logger.rows[0]["action_1_count"] == 6


def test_observers_are_refused_with_several_environments():
    with pytest.raises(ValueError, match="Observers follow one environment's episodes; this loop drives 2"):
        make_loop(num_envs=2, observers=[ActionHistogramObserver()])


@pytest.mark.parametrize("budget", [-1, 2.5, True])
def test_a_bad_budget_is_refused(budget):
    loop, _, _, _ = make_loop()
    with pytest.raises(ValueError, match="num_steps must be a non-negative integer"):
        loop.run(budget)
    with pytest.raises(ValueError, match="num_episodes must be a non-negative integer"):
        loop.run_episodes(budget)


def test_episode_returns_runs_whole_episodes():
    loop, _, _, counter = make_loop(episode_length=4)
    assert loop.episode_returns(3) == [10.0, 10.0, 10.0]  # rewards 1..4
    assert counter.get_counts()["episodes"] == 3
