"""Central batched inference: the server's actions equal the actors' own, batching, and a distributed run."""

from __future__ import annotations

import csv
import threading

import jax
import numpy as np
import pytest

import launch
from acme import specs
from acme.experiments import make_distributed_experiment
from acme.experiments.inference import InferenceServer, ServedActor, ServedVectorActor
from acme.jax.actors import GenericActor
from acme.jax.variable_client import VariableClient
from acme.utils import loggers
from baselines import registry

STEPS = 40


class FixedParams:
    """A learner stand-in that serves one set of policy parameters."""

    def __init__(self, params):
        self._params = params

    def get_variables(self, names):
        return [self._params for _ in names]


def _setup(agent: str, environment: str):
    config = registry.make_experiment_config(agent, environment, seed=0, max_steps=1_000)
    environment_instance = config.environment_factory(0)
    spec = specs.make_environment_spec(environment_instance)
    networks = config.network_factory(spec)
    learner = config.builder.make_learner(jax.random.PRNGKey(7), networks, iter(()), lambda *a, **k: _NoLogger(), spec)
    params = jax.device_get(learner.get_variables(["policy"])[0])
    observations = [environment_instance.reset().observation]
    rng = np.random.default_rng(0)
    while len(observations) < STEPS:  # observations of a random walk, the same for every actor
        step = environment_instance.step(
            rng.integers(spec.actions.num_values) if agent == "dqn" else spec.actions.generate_value()
        )
        observations.append(environment_instance.reset().observation if step.last() else step.observation)
    return config, spec, networks, params, observations


class _NoLogger:
    def write(self, data):
        pass

    def close(self):
        pass


def _own_actions(config, spec, networks, params, key, observations):
    """What an actor with its own copy of the policy and parameters does."""
    policy = config.builder.make_policy(networks, spec, evaluation=False)
    actor = GenericActor(policy, key, VariableClient(FixedParams(params), "policy"))
    actor.update(wait=True)
    return [actor.select_action(observation) for observation in observations]


def _served_actions(server, key, observations, results, index):
    actor = ServedActor(server, key)
    results[index] = [actor.select_action(observation) for observation in observations]


@pytest.mark.parametrize("agent, environment", [("dqn", "gymnasium:CartPole-v1"), ("sac", "gymnasium:Pendulum-v1")])
def test_two_actors_on_the_threads_launcher_act_as_their_own_policies_would(agent, environment):
    config, spec, networks, params, observations = _setup(agent, environment)
    keys = [jax.random.PRNGKey(11), jax.random.PRNGKey(12)]
    results: dict[int, list] = {}
    program = launch.Program("served")
    learner = program.add_node(launch.ServiceNode(FixedParams, params), "learner")
    server = program.add_node(launch.ServiceNode(InferenceServer, config, spec, learner, 8, 0.01), "inference")
    for index, key in enumerate(keys):
        program.add_node(
            launch.FunctionNode(_served_actions, server, key, observations, results, index),
            f"actor_{index}",
            terminal=True,
        )

    launch.launch(program, "threads", timeout=120)

    for index, key in enumerate(keys):
        own = _own_actions(config, spec, networks, params, key, observations)
        served = results[index]
        assert len(served) == STEPS
        if agent == "dqn":  # epsilon-greedy: the random actions depend on the keys too
            assert [int(a) for a in served] == [int(a) for a in own]
        else:
            np.testing.assert_allclose(np.stack(served), np.stack(own), rtol=1e-5, atol=1e-6)
    if agent == "sac":  # its Gaussian exploration differs with the key: each actor's own keys reached the server
        assert not np.allclose(np.stack(results[0]), np.stack(results[1]))


def test_requests_that_arrive_together_are_evaluated_in_one_batch():
    config, spec, networks, params, observations = _setup("dqn", "gymnasium:CartPole-v1")
    server = InferenceServer(config, spec, FixedParams(params), max_batch_size=8, max_wait_seconds=1.0)
    try:
        actors = [ServedVectorActor(server, [jax.random.PRNGKey(i), jax.random.PRNGKey(100 + i)]) for i in range(3)]
        batch = np.stack(observations[:2])
        threads = [threading.Thread(target=actor.select_actions, args=(batch,)) for actor in actors]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        # 3 actors of 2 environments each within the 1 s wait: one policy call for all 6 observations.
        assert server.batch_sizes == [6]
        assert [actor.num_steps for actor in actors] == [2, 2, 2]
        # A batch never holds more than max_batch_size observations: 5 actors of 2 make batches of at most 8.
        server.batch_sizes.clear()
        actors = [ServedVectorActor(server, [jax.random.PRNGKey(i), jax.random.PRNGKey(50 + i)]) for i in range(5)]
        threads = [threading.Thread(target=actor.select_actions, args=(batch,)) for actor in actors]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert sum(server.batch_sizes) == 10 and max(server.batch_sizes) <= 8
    finally:
        server.stop()


@pytest.mark.parametrize("agent", ["ppo", "r2d2"])
def test_policies_the_server_cannot_evaluate_are_refused_before_the_run(agent):
    config = registry.make_experiment_config(agent, "gymnasium:CartPole-v1", seed=0, max_steps=1_000)
    with pytest.raises(ValueError, match="inference='server' evaluates feed-forward policies without extras"):
        make_distributed_experiment(config, num_actors=1, replay="local", inference="server")


def test_an_unknown_inference_mode_is_refused():
    config = registry.make_experiment_config("dqn", "gymnasium:CartPole-v1", seed=0, max_steps=1_000)
    with pytest.raises(ValueError, match="inference must be one of"):
        make_distributed_experiment(config, num_actors=1, replay="local", inference="gpu")


def test_a_distributed_dqn_run_with_an_inference_server_trains(tmp_path):
    config = registry.make_experiment_config(
        "dqn",
        "gymnasium:CartPole-v1",
        seed=0,
        max_steps=3_000,
        eval_every=0,
        logger_factory=loggers.make_logger_factory(str(tmp_path), time_delta=0.0, terminal=False),
    )
    program = make_distributed_experiment(config, num_actors=2, replay="local", inference="server")
    assert "inference" in program.labels
    launch.launch(program, "threads", timeout=300)
    for actor in ("actor_0", "actor_1"):
        with open(tmp_path / f"{actor}.csv") as f:
            assert list(csv.DictReader(f))[-1]["actor_finished"] == "1"
    with open(tmp_path / "learner.csv") as f:
        assert int(float(list(csv.DictReader(f))[-1]["learner_steps"])) > 0
