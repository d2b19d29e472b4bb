"""Small learners of every agent and batches from their own replay, for the sharding and multi-process checks.

Importing this module starts nothing of jax's: the scripts that use it set their devices first.
"""

from __future__ import annotations

import jax
import numpy as np

from acme.environment_loop import EnvironmentLoop
from acme.jax.sharding import LearnerSharding
from acme.replay.local_client import LocalReplay
from acme.testing import fakes
from acme.utils import loggers
from baselines import registry

TRANSITIONS = dict(batch_size=16, min_replay_size=32, samples_per_insert=8.0, num_sgd_steps_per_step=1)
SMALL = {
    "dqn": dict(hidden_sizes=(16,), **TRANSITIONS),
    "mdqn": dict(hidden_sizes=(16,), **TRANSITIONS),
    "c51": dict(hidden_sizes=(16,), num_atoms=11, **TRANSITIONS),
    "qrdqn": dict(hidden_sizes=(16,), num_quantiles=8, **TRANSITIONS),
    "sac": dict(policy_hidden_sizes=(16,), critic_hidden_sizes=(16,), **TRANSITIONS),
    "td3": dict(policy_hidden_sizes=(16,), critic_hidden_sizes=(16,), **TRANSITIONS),
    "d4pg": dict(
        policy_hidden_sizes=(16,), critic_hidden_sizes=(16,), num_atoms=11, vmin=-10.0, vmax=10.0, **TRANSITIONS
    ),
    "mpo": dict(policy_hidden_sizes=(16,), critic_hidden_sizes=(16,), num_samples=4, **TRANSITIONS),
    "ppo": dict(hidden_sizes=(16,), unroll_length=4, batch_size=8, num_epochs=2, num_minibatches=2),
    "impala": dict(hidden_sizes=(16,), unroll_length=4, batch_size=8),
    "r2d2": dict(
        torso_sizes=(8,),
        lstm_size=8,
        burn_in_length=2,
        trace_length=4,
        sequence_period=3,
        n_step=2,
        batch_size=8,
        min_replay_size=8,
        samples_per_insert=4.0,
    ),
}


def quiet(label, steps_key=None):
    return loggers.NoOpLogger()


def parts(agent: str):
    entry = registry.get_agent(agent)
    config = entry.make_config(**SMALL[agent])
    spec = (
        fakes.continuous_spec((3,), 2)
        if entry.action_space == "continuous"
        else fakes.discrete_spec(obs_shape=(3,), num_actions=3)
    )
    builder = entry.make_builder(config)
    return spec, builder, entry.make_networks(spec, config)


def batches(agent: str, count: int) -> list:
    """``count`` samples of the agent's own replay, filled by its actor in a fake environment."""
    spec, builder, networks = parts(agent)
    policy = builder.make_policy(networks, spec)
    replay = LocalReplay(builder.make_replay_tables(spec, policy), seed=0, wait_on_insert=False)
    learner = builder.make_learner(jax.random.PRNGKey(0), networks, iter(()), quiet, spec, replay)
    actor = builder.make_actor(
        [jax.random.PRNGKey(1)], policy, spec, learner, [builder.make_adder(replay, spec, policy)]
    )
    loop = EnvironmentLoop(fakes.FakeEnvironment(spec, episode_length=10), actor, logger=loggers.NoOpLogger())
    iterator = builder.make_dataset_iterator(replay)
    samples = []
    while len(samples) < count:
        loop.run(40)
        while iterator.ready() and len(samples) < count:
            samples.append(jax.device_get(next(iterator)))
    return samples


def learner(agent: str, samples: list, sharding: LearnerSharding | None):
    spec, builder, networks = parts(agent)
    return builder.make_learner(jax.random.PRNGKey(3), networks, iter(samples), quiet, spec, sharding=sharding)


def after_updates(agent: str, samples: list, sharding: LearnerSharding | None, count: int) -> list[np.ndarray]:
    """The learner's state leaves after ``count`` updates on ``samples`` (gathered from every device, and over
    several processes from every process: all of them call it together)."""
    trained = learner(agent, samples, sharding)
    for _ in range(count):
        trained.step()
    return [np.asarray(leaf) for leaf in jax.tree.leaves(trained.save())]


def compare(one: list[np.ndarray], other: list[np.ndarray]) -> dict:
    """The largest difference of a float leaf relative to its own size (at least 1), and whether every integer
    leaf (step counts, random keys) is equal."""
    relative, integers_equal = 0.0, True
    for a, b in zip(one, other, strict=True):
        if np.issubdtype(a.dtype, np.floating):
            a, b = a.astype(np.float64), b.astype(np.float64)
            relative = max(relative, float(np.max(np.abs(a - b), initial=0.0)) / max(1.0, float(np.max(np.abs(a)))))
        else:
            integers_equal = integers_equal and bool(np.array_equal(a, b))
    return {"relative_difference": relative, "integers_equal": integers_equal, "leaves": len(one)}
