"""Memory tasks: fully observed tasks with part of the observation hidden."""

import numpy as np
import pytest

from acme import wrappers
from acme.environments import make_environment
from acme.environments.factory import UnknownEnvironmentError
from acme.testing import fakes


def test_cartpole_without_velocities_keeps_position_and_angle():
    full = make_environment("gymnasium:CartPole-v1", seed=3)
    hidden = make_environment("memory:CartPole-v1", seed=3)
    assert hidden.observation_spec().shape == (2,)
    a, b = full.reset(), hidden.reset()
    np.testing.assert_array_equal(b.observation, a.observation[[0, 2]])
    for _ in range(5):
        a, b = full.step(1), hidden.step(1)
        np.testing.assert_array_equal(b.observation, a.observation[[0, 2]])
        assert a.reward == b.reward


def test_unknown_memory_tasks_and_bad_indices_are_refused():
    with pytest.raises(UnknownEnvironmentError, match="No memory task 'Pong'; known: memory:CartPole-v1"):
        make_environment("memory:Pong")
    environment = fakes.FakeEnvironment(fakes.discrete_spec(obs_shape=(3,)))
    with pytest.raises(ValueError, match=r"indices must be in \[0, 3\) and non-empty"):
        wrappers.ObservationSubsetWrapper(environment, [0, 3])
