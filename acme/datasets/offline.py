"""A recorded dataset as an agent's replay: its episodes written through the agent's own adder into in-memory
tables, then sampled by the agent's own dataset iterator.

So an offline learner reads exactly the items an online one does (n-step transitions where its config asks for
n > 1, rewards clipped where it clips them, ``[U, B]`` stacks for fused updates), shuffled by uniform sampling
with replacement, and no second copy of that data path exists. Only agents that learn from replay tables with a
samples-per-insert or size limit can learn offline; rollout queues (PPO, IMPALA) are on-policy, and recurrent
agents (R2D2) need the recurrent state a dataset does not hold: both are refused.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator

import dm_env
import numpy as np
import tree

from acme import specs
from acme.datasets.minari_format import Dataset, Episode
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


def dataset_replay(
    builder: Any, environment_spec: specs.EnvironmentSpec, policy: Any, dataset: Dataset, seed: int = 0
) -> LocalReplay:
    """In-memory tables of ``builder``'s kind holding every item ``dataset`` makes through the builder's adder;
    sampling never waits for inserts (a minimum size of one item) and nothing is removed."""
    agent = getattr(builder, "agent_name", type(builder).__name__)
    if isinstance(policy, RecurrentPolicy):
        raise ValueError(
            f"{agent} learns from sequences that carry its recurrent state, which a recorded dataset does not hold, "
            "so it cannot learn from one. Offline agents learn from transitions: bc, cql, td3_bc, iql (or dqn, sac, "
            "td3 as plain off-policy learners)."
        )
    tables = builder.make_replay_tables(environment_spec, policy)
    for table in tables:
        if isinstance(table.rate_limiter, replay_tables.Queue):
            raise ValueError(
                f"{agent} learns on-policy from a rollout queue, so it cannot learn from a recorded dataset. Offline "
                "agents learn from transitions: bc, cql, td3_bc, iql (or dqn, sac, td3 as plain off-policy learners)."
            )
    capacity = max(1, dataset.num_steps)
    tables = [
        dataclasses.replace(table, max_size=capacity, rate_limiter=replay_tables.MinSize(1), max_times_sampled=0)
        for table in tables
    ]
    replay = LocalReplay(tables, seed=seed, wait_on_insert=False)
    adder = builder.make_adder(replay, environment_spec, policy)
    for episode in dataset.episodes:
        for action, timestep in timesteps_of(episode, environment_spec):
            if action is None:
                adder.add_first(timestep)
            else:
                adder.add(action, timestep)
    return replay
