"""EpisodeAdder on local tables (every stack) and on an in-process reverb server where reverb is installed."""

from __future__ import annotations

import dm_env
import numpy as np
import pytest

from acme import specs
from acme.adders import EpisodeAdder
from acme.testing import fakes
from tests.adders.helpers import queue, read_all, run_episode
from tests.adders.test_sequence import PAD, as_tuples, expected_steps

SPEC = fakes.discrete_spec(obs_shape=(2,), num_actions=2)


def _play(adder, length, truncate=False):
    env = fakes.FakeEnvironment(SPEC, episode_length=length, truncate=truncate)
    run_episode(adder, env, actions=lambda t: np.int32(t % 2))


def test_whole_episodes_exact_content(make_client):
    client = make_client(queue("replay", EpisodeAdder.signature(SPEC)))
    adder = EpisodeAdder(client, max_sequence_length=10, priority_fns={"replay": None})
    _play(adder, 3)
    _play(adder, 5, truncate=True)
    items = [as_tuples(i.data) for i in read_all(client, "replay")]
    assert items == [expected_steps(3, 0.0), expected_steps(5, 1.0)]  # 4 and 6 steps
    assert items[0][0][4] and not any(s[4] for s in items[0][1:])


def test_padding_to_max_sequence_length(make_client):
    client = make_client(queue("replay", EpisodeAdder.signature(SPEC, sequence_length=6)))
    adder = EpisodeAdder(client, 6, {"replay": None}, padding_fn=np.zeros)
    _play(adder, 3)
    (item,) = read_all(client, "replay")
    assert as_tuples(item.data) == expected_steps(3, 0.0) + [PAD, PAD]
    assert item.data.observation.shape == (6, 2)


def test_padding_steps_never_start_an_episode(make_client):
    client = make_client(queue("replay", EpisodeAdder.signature(SPEC, sequence_length=5)))
    adder = EpisodeAdder(client, 5, {"replay": None}, padding_fn=np.ones)
    _play(adder, 2)  # steps 0..2, then 2 padding steps of ones
    (item,) = read_all(client, "replay")
    assert item.data.start_of_episode.tolist() == [True, False, False, False, False]
    assert item.data.action.tolist() == [0, 1, 0, 1, 1] and item.data.reward.tolist() == [1, 2, 0, 1, 1]


def test_episode_of_exactly_max_length(make_client):
    client = make_client(queue("replay"))
    adder = EpisodeAdder(client, 4, {"replay": None})
    _play(adder, 3)  # 3 environment steps + the final step = 4 steps
    (item,) = read_all(client, "replay")
    assert len(item.data[0]) == 4


def test_too_long_episode_raises_and_reset_recovers(make_client):
    client = make_client(queue("replay", EpisodeAdder.signature(SPEC)))
    adder = EpisodeAdder(client, 3, {"replay": None})
    env = fakes.FakeEnvironment(SPEC, episode_length=5)
    adder.add_first(env.reset())
    adder.add(np.int32(0), env.step(np.int32(0)))
    adder.add(np.int32(0), env.step(np.int32(0)))  # 3 steps so far: still fits
    with pytest.raises(ValueError, match="max_sequence_length=3"):
        adder.add(np.int32(0), env.step(np.int32(0)))
    adder.reset()
    _play(adder, 2)
    items = [as_tuples(i.data) for i in read_all(client, "replay")]
    assert items == [expected_steps(2, 0.0)]


def test_priority_fn_sees_the_episode(make_client):
    client = make_client(queue("replay"))
    adder = EpisodeAdder(client, 10, {"replay": lambda step: float(step.reward.shape[0])})
    _play(adder, 4)
    assert [i.info.priority for i in read_all(client, "replay")] == [5.0]


def test_python_floats_take_the_dtype_of_a_float64_spec(make_client):
    # An environment with single_precision=False declares float64 rewards and discounts, then emits Python floats.
    spec = SPEC._replace(rewards=specs.Array((), np.float64), discounts=specs.BoundedArray((), np.float64, 0.0, 1.0))
    client = make_client(queue("replay", EpisodeAdder.signature(spec)))  # the table accepts float64 only
    adder = EpisodeAdder(client, 10, {"replay": None})
    adder.add_first(dm_env.restart(np.zeros(2, np.float32)))
    adder.add(np.int32(1), dm_env.termination(2.0, np.ones(2, np.float32)))
    (item,) = read_all(client, "replay")
    assert item.data.reward.dtype == np.float64 and item.data.discount.dtype == np.float64
    assert item.data.reward.tolist() == [2.0, 0.0] and item.data.discount.tolist() == [0.0, 0.0]
