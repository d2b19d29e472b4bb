"""In-process runs: the learner catches up before the rate limiter can block the actor."""

import pytest

from acme.experiments import ExperimentConfig, run_experiment
from acme.testing import fakes
from acme.utils import loggers
from agents import dqn


class _LateIterator:
    """A dataset whose batches never look ready in time, as on a badly overloaded machine."""

    def __init__(self, iterator):
        self._iterator = iterator

    def __next__(self):
        return next(self._iterator)

    def __iter__(self):
        return self

    def ready(self) -> bool:
        return False


class _LateBuilder(dqn.DQNBuilder):
    def make_dataset_iterator(self, replay_client):
        return _LateIterator(super().make_dataset_iterator(replay_client))


@pytest.mark.timeout(120)
@pytest.mark.reverb
def test_a_lagging_learner_catches_up_instead_of_deadlocking():
    # Without catching up, the actor runs ahead until its inserts block, and nothing steps the learner again.
    config = dqn.DQNConfig(
        hidden_sizes=(8,), batch_size=8, min_replay_size=20, samples_per_insert=4.0, n_step=3, num_sgd_steps_per_step=1
    )
    spec = fakes.discrete_spec()
    experiment = ExperimentConfig(
        builder=_LateBuilder(config),
        environment_factory=lambda seed: fakes.FakeEnvironment(spec, episode_length=25),
        network_factory=lambda s: dqn.make_networks(s, config.hidden_sizes),
        seed=0,
        max_num_actor_steps=1_000,
        eval_every=0,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
    )
    # Reverb: prefetched batches can arrive late; local replay is never late (ready() is the limiter itself).
    result = run_experiment(experiment, progress=False, replay="reverb")
    assert result.actor_steps == 1_000
    # Learning still keeps roughly the configured ratio: (1000 - 20) inserts * 4 / 8 = 490 steps.
    assert 400 <= result.learner_steps <= 500


def test_with_local_replay_the_learner_keeps_the_ratio_after_every_actor_step():
    config = dqn.DQNConfig(
        hidden_sizes=(8,), batch_size=8, min_replay_size=20, samples_per_insert=4.0, n_step=3, num_sgd_steps_per_step=1
    )
    spec = fakes.discrete_spec()
    experiment = ExperimentConfig(
        builder=dqn.DQNBuilder(config),
        environment_factory=lambda seed: fakes.FakeEnvironment(spec, episode_length=25),
        network_factory=lambda s: dqn.make_networks(s, config.hidden_sizes),
        seed=0,
        max_num_actor_steps=1_000,
        eval_every=0,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
    )
    result = run_experiment(experiment, progress=False)
    # Exactly as many steps as the limiter allows: samples may reach inserts * 4 - min_diff, where
    # min_diff = 20 * 4 - error_buffer (128, the builder's 32 inserts of headroom) = -48: (4000 + 48) // 8.
    assert result.learner_steps == (1_000 * 4 + 48) // 8
