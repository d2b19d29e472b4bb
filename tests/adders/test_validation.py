"""Clear errors for bad arguments and calls in the wrong order."""

from __future__ import annotations

import dm_env
import numpy as np
import pytest

from acme.adders import EndBehavior, EpisodeAdder, NStepTransitionAdder, SequenceAdder
from acme.testing import fakes
from tests.adders.helpers import queue

SPEC = fakes.discrete_spec(obs_shape=(2,), num_actions=2)
FNS = {"replay": None}


@pytest.fixture
def client(make_client):
    return make_client(queue("replay"))


def _all_adders(client):
    return [
        NStepTransitionAdder(client, 2, 0.9, FNS),
        SequenceAdder(client, 3, 2, FNS),
        EpisodeAdder(client, 10, FNS),
    ]


@pytest.mark.parametrize("n_step", [0, -1, 1.5, True, "3", None])
def test_bad_n_step(client, n_step):
    with pytest.raises(ValueError, match="n_step must be an integer >= 1"):
        NStepTransitionAdder(client, n_step, 0.9, FNS)


@pytest.mark.parametrize("discount", [-0.1, 1.5, float("nan"), "x", None])
def test_bad_discount(client, discount):
    with pytest.raises(ValueError, match=r"discount must be a number in \[0, 1\]"):
        NStepTransitionAdder(client, 1, discount, FNS)


@pytest.mark.parametrize(
    "length,period,name", [(0, 1, "sequence_length"), (3, 0, "period"), (-2, 1, "sequence_length"), (3, 1.0, "period")]
)
def test_bad_sequence_arguments(client, length, period, name):
    with pytest.raises(ValueError, match=f"{name} must be an integer >= 1"):
        SequenceAdder(client, length, period, FNS)


def test_padding_needs_breaking_at_episode_end(client):
    with pytest.raises(ValueError, match="pad_end_of_episode=False"):
        SequenceAdder(client, 3, 1, FNS, break_end_of_episode=False)


@pytest.mark.parametrize("behavior", ["pad", "WRITE", "", 3, True])
def test_bad_end_of_episode_behavior(client, behavior):
    accepted = "'zero_pad', 'truncate', 'drop', 'write', 'continue'"
    with pytest.raises(ValueError, match=f"end_of_episode_behavior must be an EndBehavior or one of {accepted}"):
        SequenceAdder(client, 3, 1, FNS, end_of_episode_behavior=behavior)


@pytest.mark.parametrize("flag", ["pad_end_of_episode", "break_end_of_episode"])
def test_end_of_episode_behavior_or_the_flags_not_both(client, flag):
    with pytest.raises(ValueError, match="Pass end_of_episode_behavior or pad_end_of_episode/break_end_of_episode"):
        SequenceAdder(client, 3, 1, FNS, end_of_episode_behavior="write", **{flag: True})


@pytest.mark.parametrize(
    "kwargs,behavior",
    [
        ({}, EndBehavior.ZERO_PAD),
        ({"pad_end_of_episode": False}, EndBehavior.DROP),
        ({"pad_end_of_episode": False, "break_end_of_episode": False}, EndBehavior.CONTINUE),
        ({"end_of_episode_behavior": "truncate"}, EndBehavior.TRUNCATE),
        ({"end_of_episode_behavior": EndBehavior.WRITE}, EndBehavior.WRITE),
    ],
)
def test_flags_map_to_end_of_episode_behavior(client, kwargs, behavior):
    assert SequenceAdder(client, 3, 1, FNS, **kwargs).end_of_episode_behavior is behavior


@pytest.mark.parametrize("max_length", [0, 1, 2.5])
def test_bad_max_sequence_length(client, max_length):
    with pytest.raises(ValueError, match="max_sequence_length must be an integer >= 2"):
        EpisodeAdder(client, max_length, FNS)


def test_bad_padding_fn(client):
    with pytest.raises(ValueError, match="padding_fn"):
        EpisodeAdder(client, 5, FNS, padding_fn=0)


@pytest.mark.parametrize("fns", [{}, ["replay"], {"replay": 3}, {1: None}, None])
def test_bad_priority_fns(client, fns):
    with pytest.raises(ValueError, match="priority_fns"):
        NStepTransitionAdder(client, 1, 0.9, fns)


def test_bad_max_in_flight_items(client):
    with pytest.raises(ValueError, match="max_in_flight_items must be an integer >= 1"):
        NStepTransitionAdder(client, 1, 0.9, FNS, max_in_flight_items=0)


def test_unknown_table(client):
    adder = NStepTransitionAdder(client, 1, 0.9, {"replay": None, "missing": None})
    with pytest.raises(ValueError, match=r"\['missing'\].*\['replay'\]"):
        adder.add_first(fakes.FakeEnvironment(SPEC).reset())


def test_add_before_add_first(client):
    env = fakes.FakeEnvironment(SPEC)
    env.reset()
    timestep = env.step(np.int32(0))
    for adder in _all_adders(client):
        with pytest.raises(RuntimeError, match=r"call add_first\(\)"):
            adder.add(np.int32(0), timestep)


def test_add_first_twice_and_after_reset(client):
    env = fakes.FakeEnvironment(SPEC)
    for adder in _all_adders(client):
        adder.add_first(env.reset())
        with pytest.raises(RuntimeError, match=r"reset\(\)"):
            adder.add_first(env.reset())
        adder.reset()
        adder.add_first(env.reset())  # fine after reset


def test_add_after_episode_end(client):
    env = fakes.FakeEnvironment(SPEC, episode_length=1)
    for adder in _all_adders(client):
        adder.add_first(env.reset())
        adder.add(np.int32(0), env.step(np.int32(0)))  # last timestep
        with pytest.raises(RuntimeError, match="no episode in progress"):
            adder.add(np.int32(0), env.step(np.int32(0)))


def test_wrong_step_types(client):
    env = fakes.FakeEnvironment(SPEC, episode_length=3)
    first = env.reset()
    mid = env.step(np.int32(0))
    for adder in _all_adders(client):
        with pytest.raises(ValueError, match="FIRST"):
            adder.add_first(mid)
        adder.add_first(first)
        with pytest.raises(ValueError, match=r"add_first\(\)"):
            adder.add(np.int32(0), first)


def test_missing_reward(client):
    adder = NStepTransitionAdder(client, 1, 0.9, FNS)
    adder.add_first(dm_env.restart(np.zeros(2, np.float32)))
    with pytest.raises(ValueError, match="reward is None"):
        adder.add(np.int32(0), dm_env.TimeStep(dm_env.StepType.MID, None, 1.0, np.zeros(2, np.float32)))
