"""Helpers shared by the adder tests."""

from __future__ import annotations

import dm_env
import numpy as np
import tree

from acme.replay import tables
from acme.replay.local import ReplaySample, SampleInfo
from acme.replay.local_client import LocalReplay


def queue(name: str, signature=None, max_size: int = 1000) -> tables.TableSpec:
    """A FIFO table that hands each item back once, in insertion order."""
    return tables.TableSpec.queue(name, max_size, signature=signature)


def read_all(client, table: str):
    """Every item now in ``table`` (oldest first), as ``ReplaySample``\\ s; empties it (either backend)."""
    size = client.server_info()[table].current_size
    if size == 0:
        return []
    if isinstance(client, LocalReplay):  # one at a time: items may differ in length
        batches = [client.sample(table, 1) for _ in range(size)]
        return [
            ReplaySample(SampleInfo(*(f[0] for f in b.info)), tree.map_structure(lambda x: x[0], b.data))
            for b in batches
        ]
    return list(client.sample(table, size, emit_timesteps=False, unpack_as_table_signature=True))


def run_episode(adder, env, actions=None, extras_fn=None):
    """Plays one episode of ``env`` into ``adder``; action ``t`` is ``actions(t)``.

    Returns the list of timesteps.
    """
    timestep = env.reset()
    adder.add_first(timestep)
    timesteps = [timestep]
    t = 0
    while not timestep.last():
        action = actions(t) if actions is not None else np.int32(t % 2)
        timestep = env.step(action)
        if extras_fn is None:
            adder.add(action, timestep)
        else:
            adder.add(action, timestep, extras=extras_fn(t))
        timesteps.append(timestep)
        t += 1
    return timesteps


def make_episode(observations, rewards, discounts, obs_shape=(2,)):
    """Hand-built timesteps: ``observations[0]`` starts, ``rewards/discounts[k]`` follow step k.

    Observation ``k`` is an array of ``obs_shape`` filled with ``observations[k]``.
    """
    assert len(observations) == len(rewards) + 1 == len(discounts) + 1
    steps = [dm_env.restart(np.full(obs_shape, observations[0], np.float32))]
    for k, (r, d) in enumerate(zip(rewards, discounts)):
        last = k == len(rewards) - 1
        steps.append(
            dm_env.TimeStep(
                dm_env.StepType.LAST if last else dm_env.StepType.MID,
                np.float32(r),
                np.float32(d),
                np.full(obs_shape, observations[k + 1], np.float32),
            )
        )
    return steps
