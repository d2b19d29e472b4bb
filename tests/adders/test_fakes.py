"""The fake environment used by adder, loop and agent tests."""

from __future__ import annotations

import dm_env
import numpy as np
import pytest

from acme import specs
from acme.testing import FakeEnvironment, continuous_spec, discrete_spec


def test_specs():
    spec = discrete_spec(obs_shape=(4,), num_actions=3)
    assert isinstance(spec, specs.EnvironmentSpec)
    assert isinstance(spec.actions, specs.DiscreteArray) and spec.actions.num_values == 3
    assert spec.observations.shape == (4,) and spec.observations.dtype == np.float32
    assert spec.rewards.shape == () and spec.rewards.dtype == np.float32
    assert isinstance(spec.discounts, specs.BoundedArray) and spec.discounts.maximum == 1.0
    cont = continuous_spec(obs_shape=(3,), action_dim=2)
    assert isinstance(cont.actions, specs.BoundedArray) and cont.actions.shape == (2,)
    assert cont.actions.dtype == np.float32


@pytest.mark.parametrize("truncate", [False, True])
def test_episode(truncate):
    spec = discrete_spec()
    env = FakeEnvironment(spec, episode_length=3, truncate=truncate)
    assert specs.make_environment_spec(env) == spec
    ts = env.reset()
    assert ts.first() and ts.reward is None
    np.testing.assert_array_equal(ts.observation, np.zeros(4, np.float32))
    seen = []
    while not ts.last():
        ts = env.step(np.int32(1))
        seen.append(ts)
    assert [float(t.observation[0]) for t in seen] == [1, 2, 3]
    assert [float(t.reward) for t in seen] == [1, 2, 3]
    assert [float(t.discount) for t in seen] == [1, 1, 1 if truncate else 0]
    for t in seen:
        spec.observations.validate(t.observation)
        spec.rewards.validate(t.reward)
        spec.discounts.validate(t.discount)
    # Stepping after the last timestep starts a new episode.
    assert env.step(np.int32(0)).first()
    assert env.num_episodes == 2 and env.num_steps == 3


def test_nested_observations_and_custom_functions():
    spec = continuous_spec()._replace(observations={"a": specs.Array((2,), np.int32), "b": specs.Array((), np.float32)})
    env = FakeEnvironment(spec, episode_length=2, reward_fn=lambda t: 10 * t, discount_fn=lambda t: 0.5)
    env.reset()
    ts = env.step(np.zeros(1, np.float32))
    assert ts.observation["a"].dtype == np.int32 and list(ts.observation["a"]) == [1, 1]
    assert float(ts.reward) == 10 and float(ts.discount) == 0.5


def test_action_validation():
    env = FakeEnvironment(discrete_spec(num_actions=2))
    env.reset()
    with pytest.raises(ValueError, match="out of the bounds"):
        env.step(5)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(2, np.int32))
    env.step(1)  # Python ints are fine
    cont = FakeEnvironment(continuous_spec(action_dim=2))
    cont.reset()
    with pytest.raises(ValueError, match="out of the bounds"):
        cont.step(np.array([0.0, 2.0]))
    assert cont.step(np.array([0.0, 1.0])).mid()


def test_bad_episode_length():
    with pytest.raises(ValueError, match="episode_length"):
        FakeEnvironment(discrete_spec(), episode_length=0)
    assert isinstance(FakeEnvironment(discrete_spec()), dm_env.Environment)
