"""SequenceAdder on local tables (every stack) and on an in-process reverb server where reverb is installed."""

from __future__ import annotations

import dm_env
import numpy as np
import pytest

from acme import specs
from acme.adders import SequenceAdder, Step
from acme.testing import fakes
from tests.adders.helpers import queue, read_all, run_episode

SPEC = fakes.discrete_spec(obs_shape=(2,), num_actions=2)
PAD = (0.0, 0, 0.0, 0.0, False)


def _adder(make_client, length, period, extras_spec=(), signature_length="same", **kwargs):
    sig_len = length if signature_length == "same" else signature_length
    client = make_client(queue("replay", SequenceAdder.signature(SPEC, sig_len, extras_spec)))
    adder = SequenceAdder(client, sequence_length=length, period=period, priority_fns={"replay": None}, **kwargs)
    return client, adder


def expected_steps(length, final_discount):
    """(obs, action, reward, discount, start) of steps 0..T of a FakeEnvironment episode.

    Action t is t % 2; reward of timestep t is t; env discount 1 except at the end.
    """
    steps = []
    for t in range(length):
        discount = 1.0 if t + 1 < length else final_discount
        steps.append((float(t), t % 2, float(t + 1), discount, t == 0))
    steps.append((float(length), 0, 0.0, 0.0, False))  # the final step
    return steps


def as_tuples(step: Step):
    """Per-time-step (obs, action, reward, discount, start) of a sampled item."""
    return [
        (
            float(step.observation[i, 0]),
            int(step.action[i]),
            float(step.reward[i]),
            float(step.discount[i]),
            bool(step.start_of_episode[i]),
        )
        for i in range(step.action.shape[0])
    ]


def _play(adder, length, truncate=False):
    env = fakes.FakeEnvironment(SPEC, episode_length=length, truncate=truncate)
    run_episode(adder, env, actions=lambda t: np.int32(t % 2))


def test_period_equals_length_with_padding(make_client):
    client, adder = _adder(make_client, 3, 3)
    _play(adder, 4)  # steps 0..4: windows [0, 1, 2] and [3, 4] + 1 padding step
    items = [as_tuples(i.data) for i in read_all(client, "replay")]
    steps = expected_steps(4, final_discount=0.0)
    assert items == [steps[0:3], steps[3:5] + [PAD]]
    assert items[0][0][4] is True and items[0][1][4] is False  # start_of_episode
    assert items[1][1] == (4.0, 0, 0.0, 0.0, False)  # final step: zero action/reward/discount


def test_period_equals_length_final_step_never_starts_an_item(make_client):
    client, adder = _adder(make_client, 3, 3)
    _play(adder, 6)  # steps 0..6: windows [0..2], [3..5]; step 6 (final) would start one
    items = [as_tuples(i.data) for i in read_all(client, "replay")]
    steps = expected_steps(6, final_discount=0.0)
    assert items == [steps[0:3], steps[3:6]]


def test_overlapping_sequences_with_and_without_padding(make_client):
    steps = expected_steps(5, final_discount=1.0)  # truncated: last real step keeps discount 1
    client, adder = _adder(make_client, 4, 2)
    _play(adder, 5, truncate=True)
    items = [as_tuples(i.data) for i in read_all(client, "replay")]
    assert items == [steps[0:4], steps[2:6], steps[4:6] + [PAD, PAD]]

    client, adder = _adder(make_client, 4, 2, pad_end_of_episode=False)
    _play(adder, 5, truncate=True)
    items = [as_tuples(i.data) for i in read_all(client, "replay")]
    assert items == [steps[0:4], steps[2:6]]


def test_short_episode_padded_or_dropped(make_client):
    steps = expected_steps(2, final_discount=0.0)
    client, adder = _adder(make_client, 4, 1)
    _play(adder, 2)
    items = [as_tuples(i.data) for i in read_all(client, "replay")]
    assert items == [steps[0:3] + [PAD], steps[1:3] + [PAD, PAD]]

    client, adder = _adder(make_client, 4, 1, pad_end_of_episode=False)
    _play(adder, 2)
    assert read_all(client, "replay") == []


def test_length_one(make_client):
    client, adder = _adder(make_client, 1, 1)
    _play(adder, 3)
    items = [as_tuples(i.data) for i in read_all(client, "replay")]
    assert items == [[s] for s in expected_steps(3, 0.0)[:3]]


def test_period_longer_than_length_skips_steps(make_client):
    client, adder = _adder(make_client, 2, 3)
    _play(adder, 7)
    steps = expected_steps(7, 0.0)
    items = [as_tuples(i.data) for i in read_all(client, "replay")]
    assert items == [steps[0:2], steps[3:5], steps[6:8]]


def _reference_items(T, L, P, behavior, final_discount):
    """The items of one episode of ``T`` environment steps (steps ``0 .. T``), written out plainly."""
    steps = expected_steps(T, final_discount)
    items = []
    for s in range(0, T, P):  # windows start at real steps only
        if s + L <= T + 1:
            items.append(steps[s : s + L])
        elif behavior == "zero_pad":
            items.append(steps[s:] + [PAD] * (s + L - T - 1))
        elif behavior == "truncate":
            items.append(steps[s:])
    last = T + 1 - L  # start of the last L steps
    if behavior == "write" and 0 <= last < T and last % P:
        items.append(steps[last:])
    return items


BEHAVIOR_KWARGS = {
    "flags_pad": ("zero_pad", {"pad_end_of_episode": True}),
    "flags_no_pad": ("drop", {"pad_end_of_episode": False}),
    **{b: (b, {"end_of_episode_behavior": b}) for b in ("zero_pad", "drop", "truncate", "write")},
}


@pytest.mark.parametrize("L,P", [(1, 1), (2, 1), (3, 1), (3, 2), (3, 3), (2, 5), (5, 2)])
@pytest.mark.parametrize("T", [1, 2, 5, 8])
@pytest.mark.parametrize("variant", sorted(BEHAVIOR_KWARGS))
def test_against_reference(make_client, L, P, T, variant):
    behavior, kwargs = BEHAVIOR_KWARGS[variant]
    client, adder = _adder(make_client, L, P, signature_length=None, **kwargs)
    _play(adder, T, truncate=True)
    _play(adder, T)  # a second episode: windows restart at its first step
    items = [as_tuples(i.data) for i in read_all(client, "replay")]
    assert items == _reference_items(T, L, P, behavior, 1.0) + _reference_items(T, L, P, behavior, 0.0)


# Hand-written steps of a 5-step FakeEnvironment episode ending in a termination:
# (observation, action, reward, discount, start_of_episode); S5 is the final step.
S0, S1, S2 = (0.0, 0, 1.0, 1.0, True), (1.0, 1, 2.0, 1.0, False), (2.0, 0, 3.0, 1.0, False)
S3, S4, S5 = (3.0, 1, 4.0, 1.0, False), (4.0, 0, 5.0, 0.0, False), (5.0, 0, 0.0, 0.0, False)
# ... and of a 2-step one.
E0, E1, E2 = (0.0, 0, 1.0, 1.0, True), (1.0, 1, 2.0, 0.0, False), (2.0, 0, 0.0, 0.0, False)


@pytest.mark.parametrize(
    "behavior,L,P,T,expected",
    [
        # Acme's EndBehavior.WRITE case: the last 3 steps although 3 is not a multiple of the period.
        ("write", 3, 2, 5, [[S0, S1, S2], [S2, S3, S4], [S3, S4, S5]]),
        ("write", 3, 3, 5, [[S0, S1, S2], [S3, S4, S5]]),  # the last 3 steps are already an item
        ("write", 4, 1, 2, []),  # shorter than sequence_length: nothing
        ("write", 1, 1, 2, [[E0], [E1]]),  # the final step alone would start an item
        ("truncate", 3, 2, 5, [[S0, S1, S2], [S2, S3, S4], [S4, S5]]),
        ("truncate", 4, 3, 5, [[S0, S1, S2, S3], [S3, S4, S5]]),
        ("truncate", 4, 1, 2, [[E0, E1, E2], [E1, E2]]),  # Acme writes only the first
        ("zero_pad", 3, 2, 5, [[S0, S1, S2], [S2, S3, S4], [S4, S5, PAD]]),
        ("drop", 3, 2, 5, [[S0, S1, S2], [S2, S3, S4]]),
    ],
)
def test_end_of_episode_behaviors_hand_written(make_client, behavior, L, P, T, expected):
    client, adder = _adder(make_client, L, P, signature_length=None, end_of_episode_behavior=behavior)
    _play(adder, T)
    assert [as_tuples(i.data) for i in read_all(client, "replay")] == expected


def test_truncated_items_need_an_open_length_signature(make_client):
    client, adder = _adder(make_client, 3, 2, end_of_episode_behavior="truncate")  # signature of length 3
    with pytest.raises(Exception, match="(?i)signature"):
        _play(adder, 5)


def test_sequences_span_episodes_when_not_breaking(make_client):
    client, adder = _adder(make_client, 3, 2, pad_end_of_episode=False, break_end_of_episode=False)
    _play(adder, 2)
    _play(adder, 2)
    items = [as_tuples(i.data) for i in read_all(client, "replay")]
    ep = expected_steps(2, 0.0)  # 3 steps per episode; the stream is ep + ep
    assert items == [ep[0:3], [ep[2], ep[0], ep[1]]]
    assert [s[4] for s in items[1]] == [False, True, False]


def test_extras_and_padding_are_zero_after_the_last_action(make_client):
    extras_spec = {"logits": specs.Array((2,), np.float32)}
    client, adder = _adder(make_client, 4, 4, extras_spec=extras_spec)
    env = fakes.FakeEnvironment(SPEC, episode_length=2)
    run_episode(adder, env, extras_fn=lambda t: {"logits": np.full((2,), 10.0 + t, np.float32)})
    (item,) = read_all(client, "replay")
    np.testing.assert_array_equal(item.data.extras["logits"][:, 0], [10, 11, 0, 0])
    np.testing.assert_array_equal(item.data.observation[:, 0], [0, 1, 2, 0])


def test_item_shapes_dtypes_and_signature(make_client):
    signature = SequenceAdder.signature(SPEC, 3)
    assert isinstance(signature, Step)
    assert signature.observation.shape == (3, 2)
    assert signature.action.shape == (3,) and signature.start_of_episode.shape == (3,)
    client, adder = _adder(make_client, 3, 1)
    _play(adder, 3)
    items = read_all(client, "replay")
    assert len(items) == 3
    data = items[0].data
    assert data.observation.shape == (3, 2) and data.observation.dtype == np.float32
    assert data.action.shape == (3,) and data.action.dtype == np.int32
    assert data.reward.shape == (3,) and data.reward.dtype == np.float32
    assert data.discount.shape == (3,) and data.discount.dtype == np.float32
    assert data.start_of_episode.shape == (3,) and data.start_of_episode.dtype == bool


def test_unspecified_length_signature_accepts_items(make_client):
    client, adder = _adder(make_client, 2, 2, signature_length=None)
    _play(adder, 3)
    assert len(read_all(client, "replay")) == 2


def test_python_floats_take_the_dtype_of_a_float64_spec(make_client):
    # An environment with single_precision=False declares float64 rewards and discounts, then emits Python floats.
    spec = SPEC._replace(rewards=specs.Array((), np.float64), discounts=specs.BoundedArray((), np.float64, 0.0, 1.0))
    client = make_client(queue("replay", SequenceAdder.signature(spec, 3)))  # the table accepts float64 only
    adder = SequenceAdder(client, 3, 3, {"replay": None})
    adder.add_first(dm_env.restart(np.zeros(2, np.float32)))
    adder.add(np.int32(1), dm_env.transition(1.0, np.ones(2, np.float32), 1.0))
    adder.add(np.int32(1), dm_env.termination(2.0, np.full(2, 2, np.float32)))
    (item,) = read_all(client, "replay")
    assert item.data.reward.dtype == np.float64 and item.data.discount.dtype == np.float64
    assert item.data.reward.tolist() == [1.0, 2.0, 0.0] and item.data.discount.tolist() == [1.0, 0.0, 0.0]


def test_priority_fn_sees_the_sequence(make_client):
    signature = SequenceAdder.signature(SPEC, 2)
    client = make_client(queue("replay", signature))
    adder = SequenceAdder(client, 2, 2, {"replay": lambda step: float(np.sum(step.reward))})
    _play(adder, 4)  # windows [0,1] rewards 1+2, [2,3] rewards 3+4
    assert [i.info.priority for i in read_all(client, "replay")] == [3.0, 7.0]
