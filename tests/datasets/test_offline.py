"""A recorded dataset as an agent's replay: the agent's own adder makes its items (n-step returns included)."""

from __future__ import annotations

import numpy as np
import pytest

from acme import specs
from acme.datasets.minari_format import Dataset, Episode, read_dataset, read_metadata, stream_episodes, write_dataset
from acme.datasets.offline import StreamedReplay, dataset_replay
from agents import dqn, ppo, r2d2


def _episode(num_steps: int, terminated: bool) -> Episode:
    ends = np.arange(num_steps) == num_steps - 1
    return Episode(
        observations=np.repeat(np.arange(num_steps + 1, dtype=np.float32)[:, None], 4, axis=1),  # obs t is all t
        actions=np.arange(num_steps, dtype=np.int64) % 2,
        rewards=np.arange(1, num_steps + 1, dtype=np.float64),  # r_t = t + 1
        terminations=ends & terminated,
        truncations=ends & (not terminated),
    )


SPEC = specs.EnvironmentSpec(
    observations=specs.Array((4,), np.float32),
    actions=specs.DiscreteArray(2, dtype=np.int64),
    rewards=specs.Array((), np.float32),
    discounts=specs.BoundedArray((), np.float32, 0.0, 1.0),
)


@pytest.mark.parametrize("terminated", [True, False])
def test_a_dataset_becomes_the_n_step_transitions_the_agents_adder_makes(terminated):
    """Three-step returns at discount 0.5 from a 5-step episode: each item's reward, discount and next observation
    by hand; a termination zeroes the discount of the items that reach it, a truncation keeps it."""
    builder = dqn.DQNBuilder(dqn.DQNConfig(n_step=3, discount=0.5))
    networks = dqn.make_networks(SPEC)
    policy = builder.make_policy(networks, SPEC)
    replay = dataset_replay(builder, SPEC, policy, Dataset([_episode(5, terminated)], {}))
    observation, action, reward, discount, next_observation = replay.table("priority_table").save()["columns"]
    assert len(reward) == 5
    rewards = np.arange(1, 6, dtype=np.float64)
    for t in range(5):
        window = rewards[t : t + 3]
        expected_reward = sum(0.5**k * r for k, r in enumerate(window))
        reaches_end = t + 3 >= 5
        expected_discount = 0.0 if (reaches_end and terminated) else 0.5 ** len(window)
        np.testing.assert_allclose(reward[t], expected_reward, rtol=1e-6)
        np.testing.assert_allclose(discount[t], expected_discount, rtol=1e-6)
        assert observation[t][0] == t and next_observation[t][0] == min(t + 3, 5) and action[t] == t % 2


def test_an_agent_that_learns_from_rollout_queues_is_refused():
    builder = ppo.PPOBuilder(ppo.PPOConfig())
    networks = ppo.make_networks(SPEC)
    with pytest.raises(ValueError, match="PPO learns on-policy from a rollout queue.*bc, cql, td3_bc, iql"):
        dataset_replay(builder, SPEC, builder.make_policy(networks, SPEC), Dataset([_episode(5, True)], {}))


def test_a_recurrent_agent_is_refused():
    builder = r2d2.R2D2Builder(r2d2.R2D2Config())
    policy = builder.make_policy(r2d2.make_networks(SPEC), SPEC)
    with pytest.raises(ValueError, match="R2D2 learns from sequences that carry its recurrent state"):
        dataset_replay(builder, SPEC, policy, Dataset([_episode(5, True)], {}))


def _written(directory, lengths) -> str:
    episodes = [_episode(n, terminated=True) for n in lengths]
    for i, episode in enumerate(episodes):
        episode.observations[:, 1] = i  # the episode's index, to tell them apart
    write_dataset(str(directory), episodes, SPEC, "test:counting")
    return str(directory)


def test_streaming_reads_every_episode_once_per_epoch_in_a_fresh_order(tmp_path):
    directory = _written(tmp_path / "d", [3, 4, 5, 6, 7, 8])
    stored = read_dataset(directory).episodes
    streamed = list(stream_episodes(directory, seed=1, epochs=3))
    orders = [[int(e.observations[0, 1]) for e in streamed[k : k + 6]] for k in (0, 6, 12)]
    assert all(sorted(order) == list(range(6)) for order in orders) and len({tuple(o) for o in orders}) > 1
    for episode in streamed:
        original = stored[int(episode.observations[0, 1])]
        np.testing.assert_array_equal(episode.observations, original.observations)
        np.testing.assert_array_equal(episode.rewards, original.rewards)
    with pytest.raises(ValueError, match="epochs must be a positive integer or None"):
        next(stream_episodes(directory, epochs=0))


def test_a_streamed_dataset_holds_at_most_its_buffer_and_reads_as_the_ratio_asks(tmp_path):
    """A 20-item buffer over 90 steps: sampling starts once it is full, it never holds more, and each 32-item batch
    at 4 samples per insert has read about 8 items more from disk."""
    directory = _written(tmp_path / "d", [10, 20, 30, 30])
    builder = dqn.DQNBuilder(dqn.DQNConfig(n_step=1, batch_size=32, num_sgd_steps_per_step=1))
    policy = builder.make_policy(dqn.make_networks(SPEC), SPEC)
    stream = StreamedReplay(builder, SPEC, policy, read_metadata(directory), buffer_size=20, samples_per_insert=4.0)
    batches = stream.iterator(builder.make_dataset_iterator(stream.replay))
    table = stream.replay.table("priority_table")
    seen = set()
    for _ in range(40):
        batch = next(batches)
        assert len(table) <= 20
        observations = np.asarray(batch.data.observation).reshape(-1, 4)
        seen.update(zip(observations[:, 0].tolist(), observations[:, 1].tolist()))
    info = table.info()
    assert info["num_samples"] == 40 * 32
    assert info["num_samples"] <= 4 * info["num_inserts"] + 4 + 4 * 20 and info["num_inserts"] <= 40 * 8 + 20 + 30
    assert stream.episodes_read > 4 and len(seen) == 90  # every (step, episode) pair was sampled: more than a pass
    with pytest.raises(ValueError, match="buffer_size must be a positive integer"):
        StreamedReplay(builder, SPEC, policy, read_metadata(directory), buffer_size=0, samples_per_insert=4.0)
