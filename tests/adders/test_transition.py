"""NStepTransitionAdder on local tables (every stack) and on an in-process reverb server where reverb is installed."""

from __future__ import annotations

import dm_env
import numpy as np
import pytest
import tree

from acme import specs, types
from acme.adders import NStepTransitionAdder
from acme.testing import fakes
from tests.adders.helpers import make_episode, queue, read_all, run_episode

GAMMA = 0.9
SPEC = fakes.discrete_spec(obs_shape=(2,), num_actions=2)


def _adder(make_client, n_step, spec=SPEC, extras_spec=(), **kwargs):
    signature = NStepTransitionAdder.signature(spec, extras_spec)
    client = make_client(queue("replay", signature))
    adder = NStepTransitionAdder(client, n_step=n_step, discount=GAMMA, priority_fns={"replay": None}, **kwargs)
    return client, adder


def _fields(items):
    data = [item.data for item in items]
    return dict(
        obs=[float(d.observation[0]) for d in data],
        action=[int(d.action) for d in data],
        reward=np.array([d.reward for d in data]),
        discount=np.array([d.discount for d in data]),
        next_obs=[float(d.next_observation[0]) for d in data],
    )


# Hand-computed expectations. FakeEnvironment: reward of timestep t is t, observation is
# filled with t, env discount 1 except a termination (0); gamma = 0.9.
HAND_COMPUTED = {
    # (n, episode_length, truncate): (rewards, discounts, next_observations)
    (1, 4, False): ([1, 2, 3, 4], [0.9, 0.9, 0.9, 0.0], [1, 2, 3, 4]),
    (1, 4, True): ([1, 2, 3, 4], [0.9, 0.9, 0.9, 0.9], [1, 2, 3, 4]),
    # t=0: 1 + .9*2 + .81*3 = 5.23; t=1: 2 + .9*3 + .81*4 = 7.94; t=2: 3 + 3.6 + 4.05 = 10.65;
    # t=3 (2 steps left): 4 + .9*5 = 8.5; t=4 (1 step left): 5.
    (3, 5, False): ([5.23, 7.94, 10.65, 8.5, 5.0], [0.729, 0.729, 0.0, 0.0, 0.0], [3, 4, 5, 5, 5]),
    (3, 5, True): ([5.23, 7.94, 10.65, 8.5, 5.0], [0.729, 0.729, 0.729, 0.81, 0.9], [3, 4, 5, 5, 5]),
    # Episode shorter than n: t=0: 1 + .9*2 = 2.8; t=1: 2.
    (5, 2, False): ([2.8, 2.0], [0.0, 0.0], [2, 2]),
    (5, 2, True): ([2.8, 2.0], [0.81, 0.9], [2, 2]),
}


@pytest.mark.parametrize("n_step,length,truncate", sorted(HAND_COMPUTED))
def test_hand_computed_transitions(make_client, n_step, length, truncate):
    client, adder = _adder(make_client, n_step)
    env = fakes.FakeEnvironment(SPEC, episode_length=length, truncate=truncate)
    run_episode(adder, env, actions=lambda t: np.int32(t % 2))

    got = _fields(read_all(client, "replay"))
    rewards, discounts, next_obs = HAND_COMPUTED[(n_step, length, truncate)]
    assert len(got["obs"]) == length  # one transition per environment step
    assert got["obs"] == list(range(length))
    assert got["action"] == [t % 2 for t in range(length)]
    np.testing.assert_allclose(got["reward"], rewards, rtol=1e-6)
    np.testing.assert_allclose(got["discount"], discounts, rtol=1e-6, atol=1e-7)
    assert got["next_obs"] == next_obs


def test_items_have_no_time_dimension_and_spec_dtypes(make_client):
    client, adder = _adder(make_client, 2)
    run_episode(adder, fakes.FakeEnvironment(SPEC, episode_length=3))
    (item, *_) = read_all(client, "replay")
    data = item.data
    assert data.observation.shape == (2,) and data.observation.dtype == np.float32
    assert data.next_observation.shape == (2,) and data.next_observation.dtype == np.float32
    assert data.action.shape == () and data.action.dtype == np.int32
    assert data.reward.shape == () and data.reward.dtype == np.float32
    assert data.discount.shape == () and data.discount.dtype == np.float32
    assert data.extras == ()


def _reference(rewards, env_discounts, n, gamma):
    """Straightforward n-step sums, for comparison."""
    T = len(rewards)
    out = []
    for t in range(T):
        m = min(n, T - t)
        reward, factor = 0.0, 1.0
        for k in range(m):
            reward += factor * rewards[t + k]
            factor *= gamma * env_discounts[t + k]
        out.append((reward, factor, t + m))
    return out


@pytest.mark.parametrize("n_step", [1, 2, 3, 4])
@pytest.mark.parametrize("length", [1, 2, 3, 6])
@pytest.mark.parametrize("truncate", [False, True])
def test_count_and_values_match_reference(make_client, n_step, length, truncate):
    # Mid-episode env discounts of 0.5 exercise the product of discounts.
    client, adder = _adder(make_client, n_step)
    env = fakes.FakeEnvironment(SPEC, episode_length=length, truncate=truncate, discount_fn=lambda t: 0.5)
    timesteps = run_episode(adder, env)
    rewards = [float(ts.reward) for ts in timesteps[1:]]
    discounts = [float(ts.discount) for ts in timesteps[1:]]
    got = _fields(read_all(client, "replay"))
    expected = _reference(rewards, discounts, n_step, GAMMA)
    assert len(got["obs"]) == length
    np.testing.assert_allclose(got["reward"], [e[0] for e in expected], rtol=1e-6)
    np.testing.assert_allclose(got["discount"], [e[1] for e in expected], rtol=1e-6, atol=1e-7)
    assert got["next_obs"] == [float(e[2]) for e in expected]


def test_non_unit_env_discounts_hand_computed(make_client):
    # n=2, gamma=.9, env discount .5 mid-episode, termination at t=3.
    client, adder = _adder(make_client, 2)
    env = fakes.FakeEnvironment(SPEC, episode_length=3, discount_fn=lambda t: 0.5)
    run_episode(adder, env)
    got = _fields(read_all(client, "replay"))
    # t=0: 1 + .9*.5*2 = 1.9, discount .81*.25; t=1: 2 + .45*3 = 3.35, discount 0; t=2: 3, 0.
    np.testing.assert_allclose(got["reward"], [1.9, 3.35, 3.0], rtol=1e-6)
    np.testing.assert_allclose(got["discount"], [0.2025, 0.0, 0.0], rtol=1e-6)
    assert got["next_obs"] == [2, 3, 3]


def test_transition_written_as_soon_as_next_observation_known(make_client):
    client, adder = _adder(make_client, 2)
    env = fakes.FakeEnvironment(SPEC, episode_length=6)
    timestep = env.reset()
    adder.add_first(timestep)
    for steps in range(1, 4):
        timestep = env.step(np.int32(0))
        adder.add(np.int32(0), timestep)
        adder.flush()
        # After `steps` steps, the transitions starting at 0 .. steps - n_step are complete.
        assert client.server_info()["replay"].current_size == steps - 2 + 1


def test_consecutive_episodes_do_not_mix(make_client):
    client, adder = _adder(make_client, 3)
    first = make_episode([0, 1, 2], rewards=[1, 2], discounts=[1, 0])
    second = make_episode([10, 11, 12, 13], rewards=[10, 20, 30], discounts=[1, 1, 1])
    for episode in (first, second):
        adder.add_first(episode[0])
        for ts in episode[1:]:
            adder.add(np.int32(1), ts)
    got = _fields(read_all(client, "replay"))
    assert got["obs"] == [0, 1, 10, 11, 12]
    assert got["next_obs"] == [2, 2, 13, 13, 13]
    np.testing.assert_allclose(got["reward"], [1 + 0.9 * 2, 2, 10 + 0.9 * 20 + 0.81 * 30, 20 + 0.9 * 30, 30], rtol=1e-6)
    np.testing.assert_allclose(got["discount"], [0, 0, 0.729, 0.81, 0.9], rtol=1e-6)


def test_extras_align_with_their_action(make_client):
    extras_spec = {"logits": specs.Array((2,), np.float32)}
    client, adder = _adder(make_client, 2, extras_spec=extras_spec)
    run_episode(
        adder,
        fakes.FakeEnvironment(SPEC, episode_length=4),
        actions=lambda t: np.int32(t % 2),
        extras_fn=lambda t: {"logits": np.full((2,), 100 + t, np.float32)},
    )
    items = read_all(client, "replay")
    assert [float(i.data.extras["logits"][0]) for i in items] == [100, 101, 102, 103]
    assert [int(i.data.action) for i in items] == [0, 1, 0, 1]


def test_nested_observations_rewards_and_continuous_actions(make_client):
    spec = fakes.continuous_spec(obs_shape=(3,), action_dim=2)
    spec = spec._replace(
        observations={"pixels": specs.Array((2, 2), np.uint8), "state": specs.Array((3,), np.float32)},
        rewards={"a": specs.Array((), np.float32), "b": specs.Array((2,), np.float32)},
    )
    client, adder = _adder(make_client, 2, spec=spec)
    run_episode(adder, fakes.FakeEnvironment(spec, episode_length=3), actions=lambda t: np.full((2,), 0.5, np.float32))
    items = read_all(client, "replay")
    assert len(items) == 3
    first = items[0].data
    assert first.observation["pixels"].dtype == np.uint8
    np.testing.assert_array_equal(first.observation["pixels"], np.zeros((2, 2)))
    np.testing.assert_array_equal(first.next_observation["state"], np.full((3,), 2.0))
    np.testing.assert_allclose(first.reward["a"], 1 + 0.9 * 2)
    np.testing.assert_allclose(first.reward["b"], [2.8, 2.8])
    np.testing.assert_allclose(first.discount, 0.81)
    np.testing.assert_allclose(items[-1].data.discount, 0.0)


def test_priority_fn_value_is_stored_and_all_tables_written(make_client):
    signature = NStepTransitionAdder.signature(SPEC)
    client = make_client(queue("prioritized", signature), queue("uniform", signature))

    def priority(transition: types.Transition) -> float:
        assert isinstance(transition.reward, np.ndarray)
        return float(transition.reward) + 0.5

    adder = NStepTransitionAdder(client, 1, GAMMA, {"prioritized": priority, "uniform": None})
    run_episode(adder, fakes.FakeEnvironment(SPEC, episode_length=3))
    assert [i.info.priority for i in read_all(client, "prioritized")] == [1.5, 2.5, 3.5]
    assert [i.info.priority for i in read_all(client, "uniform")] == [1.0, 1.0, 1.0]


def test_bad_priority_value(make_client):
    client = make_client(queue("replay"))
    adder = NStepTransitionAdder(client, 1, GAMMA, {"replay": lambda t: -1.0})
    with pytest.raises(ValueError, match="priorit"):
        run_episode(adder, fakes.FakeEnvironment(SPEC, episode_length=2))


def test_python_float_rewards_and_termination_discount_keep_one_dtype(make_client):
    # dm_env.termination uses a Python 0.0 discount; rewards may be Python floats.
    client, adder = _adder(make_client, 2)
    adder.add_first(dm_env.restart(np.zeros(2, np.float32)))
    adder.add(np.int32(0), dm_env.transition(1.0, np.ones(2, np.float32), np.float32(1.0)))
    adder.add(np.int32(0), dm_env.termination(2.0, np.full(2, 2, np.float32)))
    got = _fields(read_all(client, "replay"))
    np.testing.assert_allclose(got["reward"], [2.8, 2.0], rtol=1e-6)
    assert got["discount"].dtype == np.float32


def test_python_floats_take_the_dtype_of_a_float64_spec(make_client):
    # An environment with single_precision=False declares float64 rewards and discounts, then emits Python floats.
    spec = SPEC._replace(rewards=specs.Array((), np.float64), discounts=specs.BoundedArray((), np.float64, 0.0, 1.0))
    client, adder = _adder(make_client, 2, spec=spec)  # the table accepts float64 only
    adder.add_first(dm_env.restart(np.zeros(2, np.float32)))
    adder.add(np.int32(0), dm_env.transition(1.0, np.ones(2, np.float32), 1.0))
    adder.add(np.int32(0), dm_env.termination(2.0, np.full(2, 2, np.float32)))
    items = read_all(client, "replay")
    assert [(i.data.reward.dtype, i.data.discount.dtype) for i in items] == [(np.float64, np.float64)] * 2
    np.testing.assert_allclose([i.data.reward for i in items], [1 + 0.9 * 2, 2.0], rtol=1e-12)
    np.testing.assert_array_equal([i.data.discount for i in items], [0.0, 0.0])


def test_python_floats_are_float32_for_a_table_without_signature(make_client):
    client = make_client(queue("replay"))
    adder = NStepTransitionAdder(client, 1, GAMMA, {"replay": None})
    adder.add_first(dm_env.restart(np.zeros(2, np.float32)))
    adder.add(np.int32(0), dm_env.termination(2.0, np.ones(2, np.float32)))
    (item,) = read_all(client, "replay")
    _, _, reward, discount, *_ = tree.flatten(item.data)  # reverb gives a list of columns without a signature
    assert reward.dtype == np.float32 and discount.dtype == np.float32


def test_reset_drops_partial_episode(make_client):
    client, adder = _adder(make_client, 3)
    env = fakes.FakeEnvironment(SPEC, episode_length=10)
    adder.add_first(env.reset())
    for _ in range(2):
        adder.add(np.int32(0), env.step(np.int32(0)))
    adder.reset()
    run_episode(adder, fakes.FakeEnvironment(SPEC, episode_length=2))
    got = _fields(read_all(client, "replay"))
    assert got["obs"] == [0, 1]
    assert got["next_obs"] == [2, 2]


def test_signature_matches_written_items(make_client):
    extras_spec = {"logits": specs.Array((2,), np.float32)}
    signature = NStepTransitionAdder.signature(SPEC, extras_spec)
    assert isinstance(signature, types.Transition)
    assert signature.observation.shape == (2,) and signature.reward.shape == ()
    assert signature.next_observation == signature.observation
    # The table validates every item against the signature (writer and server side).
    client, adder = _adder(make_client, 2, extras_spec=extras_spec)
    run_episode(
        adder, fakes.FakeEnvironment(SPEC, episode_length=3), extras_fn=lambda t: {"logits": np.zeros(2, np.float32)}
    )
    assert len(read_all(client, "replay")) == 3


def test_signature_mismatch_is_rejected(make_client):
    client, adder = _adder(make_client, 1)
    episode = make_episode([0, 1], rewards=[1], discounts=[0])
    adder.add_first(episode[0])
    with pytest.raises(Exception, match="(?i)signature|dtype"):
        adder.add(np.float32(0.0), episode[1])  # the signature's action is int32


@pytest.mark.reverb
def test_learner_side_dataset_reads_items(make_reverb_client):
    import reverb

    client, adder = _adder(make_reverb_client, 2)
    run_episode(adder, fakes.FakeEnvironment(SPEC, episode_length=3))
    dataset = reverb.TrajectoryDataset.from_table_signature(
        server_address=client.server_address, table="replay", max_in_flight_samples_per_worker=3
    )
    samples = list(dataset.take(3).as_numpy_iterator())
    assert [float(s.data.observation[0]) for s in samples] == [0, 1, 2]
    # The dataset rebuilds the signature's namedtuple: same name and fields, not the same class.
    assert samples[0].data._fields == types.Transition._fields
    assert samples[0].data.reward.dtype == np.float32


def _broadcast_episode(rewards, discounts):
    """Hand-built two-step episode ending in a truncation; ``rewards/discounts[k]`` follow step k."""
    steps = [dm_env.restart(np.zeros(2, np.float32))]
    for k, (r, d) in enumerate(zip(rewards, discounts)):
        step_type = dm_env.StepType.LAST if k == len(rewards) - 1 else dm_env.StepType.MID
        reward, discount = np.asarray(r, np.float32), np.asarray(d, np.float32)
        steps.append(dm_env.TimeStep(step_type, reward, discount, np.full(2, k + 1, np.float32)))
    return steps


# n = 2, gamma = .9. Transition 0: r1 + .9 d1 r2, discount .81 d1 d2; transition 1: r2, discount .9 d2.
BROADCAST_CASES = {
    # reward () with discount (2,): reward 1 + .9 * [1, .5] * 2 = [2.8, 1.9], then 2 -> [2, 2].
    "scalar_reward_vector_discount": (
        (), (2,), [1.0, 2.0], [[1.0, 0.5], [1.0, 1.0]],
        [[2.8, 1.9], [2.0, 2.0]], [[0.81, 0.405], [0.9, 0.9]],
    ),
    # reward (1, 2) with discount (2, 2): [[1 + .9*3, 2 + .45*4], [1 + .45*3, 2 + .9*4]], then [[3, 4]] twice.
    "row_reward_matrix_discount": (
        (1, 2), (2, 2), [[[1.0, 2.0]], [[3.0, 4.0]]], [[[1.0, 0.5], [0.5, 1.0]], np.ones((2, 2))],
        [[[3.7, 3.8], [2.35, 5.6]], [[3.0, 4.0], [3.0, 4.0]]], [[[0.81, 0.405], [0.405, 0.81]], np.full((2, 2), 0.9)],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BROADCAST_CASES))
def test_broadcast_reward_fits_a_table_built_from_the_adders_signature(make_client, case):
    reward_shape, discount_shape, rewards, discounts, want_rewards, want_discounts = BROADCAST_CASES[case]
    spec = SPEC._replace(
        rewards=specs.Array(reward_shape, np.float32),
        discounts=specs.BoundedArray(discount_shape, np.float32, 0.0, 1.0),
    )
    signature = NStepTransitionAdder.signature(spec)
    broadcast = np.broadcast_shapes(reward_shape, discount_shape)
    assert signature.reward.shape == broadcast and signature.discount.shape == discount_shape
    client, adder = _adder(make_client, 2, spec=spec)  # the table validates items against `signature`
    episode = _broadcast_episode([np.full(reward_shape, r) for r in rewards], discounts)
    adder.add_first(episode[0])
    for timestep in episode[1:]:
        adder.add(np.int32(0), timestep)
    items = read_all(client, "replay")
    assert [i.data.reward.shape for i in items] == [broadcast, broadcast]
    np.testing.assert_allclose([i.data.reward for i in items], want_rewards, rtol=1e-6)
    np.testing.assert_allclose([i.data.discount for i in items], want_discounts, rtol=1e-6)


def test_signature_refuses_reward_and_discount_shapes_that_do_not_broadcast():
    spec = SPEC._replace(rewards=specs.Array((3,), np.float32), discounts=specs.Array((2,), np.float32))
    with pytest.raises(ValueError, match=r"reward spec's shape \(3,\) does not broadcast .* \(2,\)"):
        NStepTransitionAdder.signature(spec)
