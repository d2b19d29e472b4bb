"""K environments driven by one actor produce the transitions of K one-environment actors with the same seeds."""

from __future__ import annotations

import jax
import numpy as np
import pytest
import tree

from acme import adders, specs
from acme.environment_loop import EnvironmentLoop
from acme.environments import make_environment
from acme.jax.actors import VectorActor
from acme.jax.variable_client import VariableClient
from acme.replay import tables
from acme.replay.local_client import LocalReplay
from acme.utils import counting, loggers
from baselines import registry

K = 3


class _Static:
    def __init__(self, params):
        self._params = params

    def get_variables(self, names):
        return [self._params for _ in names]


def _agent(agent: str, env_id: str):
    entry = registry.get_agent(agent)
    # DQN explores with epsilon 1: its actions then come from the keys alone, so they are the same bitwise;
    # greedy actions could flip where two Q-values nearly tie and batched matmuls round differently.
    config = entry.make_config(**({"epsilon_end": 1.0, "epsilon_decay_steps": 0} if agent == "dqn" else {}))
    environment = registry.make_agent_environment(agent, env_id, seed=0)
    spec = specs.make_environment_spec(environment)
    networks = entry.make_networks(spec, config)
    builder = entry.make_builder(config)
    learner = builder.make_learner(
        jax.random.PRNGKey(0), networks, iter(()), lambda label, steps_key=None: loggers.NoOpLogger(), spec
    )
    params = learner.get_variables(["policy"])[0]
    return builder.make_policy(networks, spec, evaluation=False), spec, params


def _replay(spec) -> tuple[LocalReplay, adders.Adder]:
    table = tables.TableSpec.queue("replay", 10_000, adders.NStepTransitionAdder.signature(spec))
    replay = LocalReplay([table])
    return replay, adders.NStepTransitionAdder(replay, n_step=3, discount=0.99, priority_fns={"replay": None})


def _items(replay: LocalReplay) -> list:
    size = replay.server_info()["replay"].current_size
    return tree.flatten(replay.sample("replay", size).data) if size else []


@pytest.mark.parametrize(
    "agent, env_id, exact",
    [
        ("dqn", "gymnasium:CartPole-v1", True),  # every transition bitwise equal
        ("sac", "gymnasium:Pendulum-v1", False),  # batched matmuls may round differently: equal to 1e-5
    ],
)
def test_k_environments_give_the_transitions_of_k_one_environment_actors(agent, env_id, exact):
    policy, spec, params = _agent(agent, env_id)
    keys = list(jax.random.split(jax.random.PRNGKey(7), K))
    seeds = [11, 12, 13]
    steps = 150

    singles = []
    for key, seed in zip(keys, seeds):
        replay, adder = _replay(spec)
        actor = VectorActor(policy, [key], VariableClient(_Static(params), "policy"), [adder])
        loop = EnvironmentLoop(
            registry.make_agent_environment(agent, env_id, seed=seed),
            actor,
            logger=loggers.NoOpLogger(),
            should_update=False,
        )
        loop.run(steps)
        singles.append(replay)

    replays, vector_adders = zip(*[_replay(spec) for _ in range(K)])
    actor = VectorActor(policy, keys, VariableClient(_Static(params), "policy"), list(vector_adders))
    counter = counting.Counter()
    finished = []
    loop = EnvironmentLoop(
        [registry.make_agent_environment(agent, env_id, seed=s) for s in seeds],
        actor,
        counter=counter,
        logger=loggers.NoOpLogger(),
        should_update=False,
        on_episode=finished.append,
    )
    loop.run(num_steps=100 * K)  # two calls: episodes carry on across them
    loop.run(num_steps=(steps - 100) * K)
    assert counter.get_counts()["steps"] == steps * K and actor.num_steps == steps * K
    assert counter.get_counts().get("episodes", 0) == len(finished)
    for single, vector in zip(singles, replays):
        a, b = _items(single), _items(vector)
        assert len(a) == len(b) > 0
        for x, y in zip(a, b):
            assert x.shape == y.shape and x.dtype == y.dtype
            if exact:
                np.testing.assert_array_equal(x, y)
            else:
                np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


def test_episodes_end_and_reset_per_environment_and_are_logged():
    policy, spec, params = _agent("dqn", "gymnasium:CartPole-v1")
    rows = []
    environments = [make_environment("gymnasium:CartPole-v1", seed=s, step_limit=10 + 5 * s) for s in range(K)]
    actor = VectorActor(
        policy, list(jax.random.split(jax.random.PRNGKey(0), K)), VariableClient(_Static(params), "policy")
    )
    loop = EnvironmentLoop(
        environments, actor, logger=loggers.NoOpLogger(), should_update=False, on_episode=rows.append
    )
    loop.run(num_steps=300)
    by_env = {i: [r["episode_length"] for r in rows if r["environment_index"] == i] for i in range(K)}
    for i, lengths in by_env.items():
        assert lengths and all(length <= 10 + 5 * i for length in lengths)  # truncated at their own limits
    with pytest.raises(ValueError, match="drives 3 environments but 2 were given"):
        EnvironmentLoop(environments[:2], actor)
