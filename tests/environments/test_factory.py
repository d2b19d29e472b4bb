"""The environment factory and its errors."""

import numpy as np
import pytest

from acme import specs
from acme.environments import UnknownEnvironmentError, make_environment


def test_gymnasium_cartpole():
    env = make_environment("gymnasium:CartPole-v1", seed=0)
    spec = specs.make_environment_spec(env)
    assert spec.actions.num_values == 2
    assert spec.observations.shape == (4,) and spec.observations.dtype == np.float32
    assert env.reset().first()


def test_gymnasium_pendulum_with_canonical_actions():
    env = make_environment("gymnasium:Pendulum-v1", seed=0, canonical_actions=True)
    np.testing.assert_array_equal(env.action_spec().maximum, [1.0])
    env.reset()
    timestep = env.step(np.ones(1, np.float32))
    assert timestep.reward.dtype == np.float32


def test_step_limit_option():
    env = make_environment("gymnasium:Pendulum-v1", seed=0, step_limit=5)
    timestep = env.reset()
    count = 0
    while not timestep.last():
        timestep = env.step(np.zeros(1, np.float32))
        count += 1
    assert count == 5


def test_bsuite_catch():
    env = make_environment("bsuite:catch/0")
    assert env.action_spec().num_values == 3
    assert env.reset().observation.shape == (10, 5)


@pytest.mark.parametrize(
    "bad_id, expected",
    [
        ("CartPole-v1", "no family prefix"),
        ("mujoco:Ant", "Known prefixes: gymnasium, bsuite, dm_control, atari"),
        ("gymnasium:CartPol-v1", "Did you mean gymnasium:CartPole-v1"),
        ("bsuite:catchh/0", "Did you mean bsuite:catch/0"),
        ("gymnasium:", "names no environment"),
    ],
)
def test_unknown_ids_are_explained(bad_id, expected):
    with pytest.raises(UnknownEnvironmentError, match=expected):
        make_environment(bad_id)
