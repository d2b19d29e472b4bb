"""Wrappers: gymnasium adapter, single precision, step limit, canonical actions."""

import dm_env
import gymnasium
import numpy as np
import pytest
from dm_env import specs

from acme import wrappers
from acme.testing import fakes


def test_gymnasium_termination_has_zero_discount():
    env = wrappers.GymnasiumToDmEnv(gymnasium.make("CartPole-v1"), seed=0)
    timestep = env.reset()
    assert timestep.first()
    steps = 0
    while not timestep.last():
        timestep = env.step(0)  # always pushing left topples the pole quickly
        steps += 1
    assert steps < 100
    assert timestep.step_type == dm_env.StepType.LAST
    assert float(timestep.discount) == 0.0


def test_gymnasium_truncation_keeps_discount():
    env = wrappers.GymnasiumToDmEnv(gymnasium.make("Pendulum-v1"), seed=0)  # no termination, truncated at 200
    timestep = env.reset()
    steps = 0
    while not timestep.last():
        timestep = env.step(np.zeros(1, np.float32))
        steps += 1
    assert steps == 200
    assert float(timestep.discount) == 1.0
    # The next step starts a new episode, as dm_env requires.
    assert env.step(np.zeros(1, np.float32)).first()


def test_gymnasium_specs_and_seeding():
    env = wrappers.GymnasiumToDmEnv(gymnasium.make("CartPole-v1"), seed=3)
    assert isinstance(env.action_spec(), specs.DiscreteArray)
    assert env.action_spec().num_values == 2
    assert env.observation_spec().shape == (4,)
    first = env.reset().observation
    again = wrappers.GymnasiumToDmEnv(gymnasium.make("CartPole-v1"), seed=3).reset().observation
    np.testing.assert_array_equal(first, again)
    pendulum = wrappers.GymnasiumToDmEnv(gymnasium.make("Pendulum-v1"))
    assert isinstance(pendulum.action_spec(), specs.BoundedArray)
    np.testing.assert_allclose(pendulum.action_spec().maximum, [2.0])


class _SpacesEnv(gymnasium.Env):
    """A gymnasium environment of the given spaces (only its spaces are read)."""

    def __init__(self, observation_space: gymnasium.Space, action_space: gymnasium.Space):
        self.observation_space = observation_space
        self.action_space = action_space


_BOX = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)


@pytest.mark.parametrize(
    "observation_space, action_space, message",
    [
        (_BOX, gymnasium.spaces.MultiDiscrete([3, 2]), r"action: gymnasium space MultiDiscrete\(\[3 2\]\) is not"),
        (
            gymnasium.spaces.Dict({"position": _BOX, "command": gymnasium.spaces.Text(8)}),
            gymnasium.spaces.Discrete(2),
            r"observation/command: gymnasium space Text\(1, 8, .*\) is not",
        ),
        (
            gymnasium.spaces.Tuple((_BOX, gymnasium.spaces.Graph(_BOX, None))),
            gymnasium.spaces.Discrete(2),
            r"observation/1: gymnasium space Graph\(.*\) is not",
        ),
        (_BOX, gymnasium.spaces.Discrete(3, start=1), "action: Discrete spaces must start at 0, got start=1"),
    ],
    ids=["multi-discrete action", "text in a dict", "graph in a tuple", "discrete from 1"],
)
def test_an_unsupported_gymnasium_space_is_refused_naming_it_and_where_it_is(observation_space, action_space, message):
    accepted = "" if "start" in message else " supported; accepted: Box, Discrete, MultiBinary, Dict, Tuple."
    with pytest.raises(ValueError, match=message + accepted.replace(".", r"\.")):
        wrappers.GymnasiumToDmEnv(_SpacesEnv(observation_space, action_space))


def test_single_precision_casts_values_and_specs():
    env = wrappers.SinglePrecisionWrapper(wrappers.GymnasiumToDmEnv(gymnasium.make("Pendulum-v1"), seed=0))
    assert env.observation_spec().dtype == np.float32
    assert env.reward_spec().dtype == np.float32
    timestep = env.step(np.zeros(1, np.float32))
    assert timestep.observation.dtype == np.float32
    timestep = env.step(np.zeros(1, np.float32))
    assert timestep.reward.dtype == np.float32
    assert timestep.discount.dtype == np.float32


def test_step_limit_truncates_and_restarts():
    env = wrappers.StepLimitWrapper(fakes.FakeEnvironment(fakes.discrete_spec(), episode_length=50), step_limit=7)
    timestep = env.reset()
    for _ in range(6):
        timestep = env.step(0)
        assert timestep.mid()
    timestep = env.step(0)
    assert timestep.last() and float(timestep.discount) == 1.0
    assert env.step(0).first()


def test_step_limit_keeps_earlier_termination():
    env = wrappers.StepLimitWrapper(fakes.FakeEnvironment(fakes.discrete_spec(), episode_length=3), step_limit=10)
    env.reset()
    env.step(0)
    env.step(0)
    timestep = env.step(0)
    assert timestep.last() and float(timestep.discount) == 0.0


def test_step_limit_rejects_nonpositive():
    with pytest.raises(ValueError, match="step_limit"):
        wrappers.StepLimitWrapper(fakes.FakeEnvironment(fakes.discrete_spec()), step_limit=0)


class _RecordingEnv(fakes.FakeEnvironment):
    def step(self, action):
        self.received = np.asarray(action)
        return super().step(np.zeros(self.action_spec().shape, np.float32))


def test_canonical_action_spec_rescales_to_bounds():
    spec = fakes.continuous_spec(action_dim=2)
    spec = spec._replace(actions=specs.BoundedArray((2,), np.float32, [0.0, -4.0], [10.0, 4.0]))
    inner = _RecordingEnv(spec, validate_actions=False)
    env = wrappers.CanonicalActionSpecWrapper(inner)
    np.testing.assert_array_equal(env.action_spec().minimum, [-1, -1])
    np.testing.assert_array_equal(env.action_spec().maximum, [1, 1])
    env.reset()
    env.step(np.array([-1.0, 1.0], np.float32))
    np.testing.assert_allclose(inner.received, [0.0, 4.0])
    env.step(np.array([0.0, 5.0], np.float32))  # clipped to 1 before rescaling
    np.testing.assert_allclose(inner.received, [5.0, 4.0])


def test_canonical_action_spec_leaves_discrete_alone():
    env = wrappers.CanonicalActionSpecWrapper(fakes.FakeEnvironment(fakes.discrete_spec(num_actions=3)))
    assert env.action_spec().num_values == 3


def _rescaled_by_formula(action, low, high):
    action = np.clip(np.asarray(action, np.float32), -1.0, 1.0)
    return (low + (action + 1.0) * (high - low) / 2.0).astype(np.float32)


def test_canonical_action_fast_path_matches_the_formula_bitwise_and_keeps_nan():
    low, high = np.array([0.0, -4.0], np.float32), np.array([10.0, 4.0], np.float32)
    spec = fakes.continuous_spec(action_dim=2)._replace(actions=specs.BoundedArray((2,), np.float32, low, high))
    inner = _RecordingEnv(spec, validate_actions=False)
    env = wrappers.CanonicalActionSpecWrapper(inner)
    env.reset()
    rng = np.random.default_rng(0)
    actions = [rng.uniform(-2, 2, size=2).astype(np.float32) for _ in range(200)]
    actions += [np.array([-0.0, 1.0], np.float32), np.array([np.nan, -np.inf], np.float32)]
    for action in actions:
        env.step(action)
        assert inner.received.dtype == np.float32
        np.testing.assert_array_equal(inner.received, _rescaled_by_formula(action, low, high))


def test_canonical_action_with_a_nested_action_for_a_single_spec_is_an_error():
    spec = fakes.continuous_spec(action_dim=2)
    env = wrappers.CanonicalActionSpecWrapper(_RecordingEnv(spec, validate_actions=False))
    env.reset()
    with pytest.raises((ValueError, TypeError)):
        env.step([np.zeros(2, np.float32), np.zeros(2, np.float32)])


def test_single_precision_convert_value_single_and_nested():
    spec = specs.Array((3,), np.float32)
    converted = wrappers.single_precision.convert_value(np.arange(3, dtype=np.float64), spec)
    assert converted.dtype == np.float32
    np.testing.assert_array_equal(converted, [0, 1, 2])
    nested_spec = {"a": specs.Array((), np.float32), "b": specs.Array((2,), np.int32)}
    nested = wrappers.single_precision.convert_value({"a": 1.5, "b": np.array([1, 2], np.int64)}, nested_spec)
    assert nested["a"].dtype == np.float32 and nested["b"].dtype == np.int32
    with pytest.raises((ValueError, TypeError)):
        wrappers.single_precision.convert_value({"a": 1.0}, spec)
