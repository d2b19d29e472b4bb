"""A recorded dataset as an agent's replay: its episodes written through the agent's own adder into in-memory
tables, then sampled by the agent's own dataset iterator.

So an offline learner reads exactly the items an online one does (n-step transitions where its config asks for
n > 1, rewards clipped where it clips them, ``[U, B]`` stacks for fused updates), shuffled by uniform sampling
with replacement, and no second copy of that data path exists. A dataset larger than memory is streamed from
disk instead (``StreamedReplay``): episodes in a fresh random order each pass, through the same adder into a
bounded shuffle buffer. Only agents that learn from replay tables with a samples-per-insert or size limit can
learn offline; rollout queues (PPO, IMPALA) are on-policy, and recurrent agents (R2D2) need the recurrent state a
dataset does not hold: both are refused.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator

import dm_env
import numpy as np
import tree

from acme import core, specs
from acme.datasets.minari_format import Dataset, Episode, stream_episodes
from acme.jax.actors import RecurrentPolicy
from acme.replay import tables as replay_tables
from acme.replay.local_client import LocalReplay


def timesteps_of(episode: Episode, environment_spec: specs.EnvironmentSpec) -> Iterator[tuple[Any, dm_env.TimeStep]]:
    """The episode as dm_env saw it: ``(None, first timestep)``, then ``(action, next timestep)`` per step, with
    discount 0 on a terminating step and 1 otherwise (truncation keeps it)."""
    reward_dtype = environment_spec.rewards.dtype
    discount_dtype = environment_spec.discounts.dtype
    observation = lambda t: tree.map_structure(lambda x: x[t], episode.observations)  # noqa: E731
    yield None, dm_env.restart(observation(0))
    steps = len(episode)
    for t in range(steps):
        action = np.asarray(episode.actions[t], environment_spec.actions.dtype)
        last = t == steps - 1
        timestep = dm_env.TimeStep(
            step_type=dm_env.StepType.LAST if last else dm_env.StepType.MID,
            reward=np.asarray(episode.rewards[t], reward_dtype),
            discount=np.asarray(0.0 if episode.terminations[t] else 1.0, discount_dtype),
            observation=observation(t + 1),
        )
        yield action, timestep


def add_steps(adder: Any, episode: Episode, environment_spec: specs.EnvironmentSpec) -> Iterator[None]:
    """Writes ``episode`` through ``adder`` as an actor would have, pausing (yielding) after each step."""
    for action, timestep in timesteps_of(episode, environment_spec):
        if action is None:
            adder.add_first(timestep)
        else:
            adder.add(action, timestep)
        yield


def _offline_tables(builder: Any, environment_spec: specs.EnvironmentSpec, policy: Any) -> list:
    """The builder's table specs, refused with the reason for agents that cannot learn from a dataset."""
    agent = getattr(builder, "agent_name", type(builder).__name__)
    if isinstance(policy, RecurrentPolicy):
        raise ValueError(
            f"{agent} learns from sequences that carry its recurrent state, which a recorded dataset does not hold, "
            "so it cannot learn from one. Offline agents learn from transitions: bc, cql, td3_bc, iql (or dqn, sac, "
            "td3 as plain off-policy learners)."
        )
    tables = list(builder.make_replay_tables(environment_spec, policy))
    for table in tables:
        if isinstance(table.rate_limiter, replay_tables.Queue):
            raise ValueError(
                f"{agent} learns on-policy from a rollout queue, so it cannot learn from a recorded dataset. Offline "
                "agents learn from transitions: bc, cql, td3_bc, iql (or dqn, sac, td3 as plain off-policy learners)."
            )
    return tables


def dataset_replay(
    builder: Any, environment_spec: specs.EnvironmentSpec, policy: Any, dataset: Dataset, seed: int = 0
) -> LocalReplay:
    """In-memory tables of ``builder``'s kind holding every item ``dataset`` makes through the builder's adder;
    sampling never waits for inserts (a minimum size of one item) and nothing is removed."""
    capacity = max(1, dataset.num_steps)
    tables = [
        dataclasses.replace(table, max_size=capacity, rate_limiter=replay_tables.MinSize(1), max_times_sampled=0)
        for table in _offline_tables(builder, environment_spec, policy)
    ]
    replay = LocalReplay(tables, seed=seed, wait_on_insert=False)
    adder = builder.make_adder(replay, environment_spec, policy)
    for episode in dataset.episodes:
        for _ in add_steps(adder, episode, environment_spec):
            pass
    return replay


class StreamedReplay:
    """A dataset streamed from disk through a shuffle buffer: tables of the builder's kind holding the last
    ``buffer_size`` items, fed step by step from episodes read one at a time (``stream_episodes``: each pass over
    the data in a fresh random order) through the builder's adder whenever the learner's next batch is not ready.

    A sample-to-insert ratio of ``samples_per_insert`` paces the two: each item is sampled about that many times
    (counting each place in a batch) before it is pushed out of the buffer, and sampling starts once the buffer
    holds ``min(buffer_size, the dataset's steps)`` items. Only the episode being read and the buffer are in
    memory, so a dataset larger than memory can be learned from.
    """

    def __init__(
        self,
        builder: Any,
        environment_spec: specs.EnvironmentSpec,
        policy: Any,
        dataset: Dataset,
        buffer_size: int,
        samples_per_insert: float,
        seed: int = 0,
    ):
        if isinstance(buffer_size, bool) or not isinstance(buffer_size, int) or buffer_size < 1:
            raise ValueError(f"buffer_size must be a positive integer (items held), got {buffer_size!r}.")
        if isinstance(samples_per_insert, bool) or not isinstance(samples_per_insert, (int, float)):
            raise ValueError(f"samples_per_insert must be a number > 0, got {samples_per_insert!r}.")
        if not samples_per_insert > 0:
            raise ValueError(f"samples_per_insert must be a number > 0, got {samples_per_insert!r}.")
        if not dataset.path:
            raise ValueError("A streamed dataset needs the directory it is read from (read_metadata(DIR) gives it).")
        min_size = max(1, min(buffer_size, dataset.num_steps))
        limiter = replay_tables.SampleToInsertRatio(
            samples_per_insert=float(samples_per_insert),
            min_size_to_sample=min_size,
            error_buffer=max(1.0, float(samples_per_insert)),
        )
        tables = [
            dataclasses.replace(table, max_size=buffer_size, rate_limiter=limiter, max_times_sampled=0)
            for table in _offline_tables(builder, environment_spec, policy)
        ]
        self.replay = LocalReplay(tables, seed=seed, wait_on_insert=False)
        self._adder = builder.make_adder(self.replay, environment_spec, policy)
        self._steps = self._write_steps(stream_episodes(dataset.path, seed=seed), environment_spec)
        self.episodes_read = 0

    def _write_steps(self, episodes: Iterator[Episode], environment_spec: specs.EnvironmentSpec) -> Iterator[None]:
        for episode in episodes:
            self.episodes_read += 1
            yield from add_steps(self._adder, episode, environment_spec)

    def feed(self) -> None:
        """Writes the next step into the buffer through the adder (reading the next episode from disk first where
        the last one is done): one step at a time, so no item leaves the buffer before it could be sampled."""
        next(self._steps)

    def iterator(self, batches: core.PrefetchingIterator) -> "FeedingIterator":
        """``batches`` (the builder's iterator over ``self.replay``), fed from disk before each batch."""
        return FeedingIterator(batches, self)


class FeedingIterator(core.PrefetchingIterator):
    """The agent's own batch iterator over a ``StreamedReplay``'s tables, which reads episodes from disk into them
    until its next batch can be sampled, in the learner's thread (so it is always ready)."""

    def __init__(self, batches: core.PrefetchingIterator, stream: StreamedReplay):
        if not hasattr(batches, "ready"):
            raise TypeError(f"Streaming needs an iterator that says when a batch is ready, got {type(batches)}.")
        self._batches = batches
        self._stream = stream

    def __iter__(self) -> "FeedingIterator":
        return self

    def __next__(self) -> Any:
        while not self._batches.ready():
            self._stream.feed()
        return next(self._batches)

    def ready(self) -> bool:
        return True

    def retrieved_elements(self) -> int:
        return self._batches.retrieved_elements()
