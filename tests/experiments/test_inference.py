"""Central batched inference: the server's actions and extras equal the actors' own (feed-forward, extras and
recurrent policies, per-actor policies), batching, refusals, and distributed runs."""

from __future__ import annotations

import csv
import dataclasses
import os
import subprocess
import sys
import threading
from multiprocessing import AuthenticationError

import dm_env
import jax
import numpy as np
import pytest

import launch
from acme import specs
from acme.environment_loop import EnvironmentLoop
from acme.experiments import make_distributed_experiment
from acme.experiments.inference import InferenceServer, ServedActor, connect
from acme.experiments.inference_transport import InferenceClient, InferenceServerGoneError
from acme.jax.actors import RecurrentVectorActor
from acme.jax.variable_client import VariableClient
from acme.utils import loggers
from baselines import registry

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STEPS = 60
LATE_STEP = 50_000  # past every exploration schedule's decay: each actor acts with its own final epsilon


class FixedParams:
    """A learner stand-in that serves one set of policy parameters."""

    def __init__(self, params):
        self._params = params

    def get_variables(self, names):
        return [self._params for _ in names]


class RecordingAdder:
    """Keeps what an actor hands its adder: each action with its extras, and the episode starts."""

    def __init__(self):
        self.steps: list = []
        self.episode_starts = 0

    def add_first(self, timestep: dm_env.TimeStep) -> None:
        self.episode_starts += 1

    def add(self, action, next_timestep, extras=()) -> None:
        self.steps.append((np.asarray(action), jax.tree.map(np.asarray, extras)))

    def reset(self) -> None:
        pass


class _NoLogger:
    def write(self, data):
        pass

    def close(self):
        pass


def _setup(agent: str, environment: str):
    config = registry.make_experiment_config(agent, environment, seed=0, max_steps=1_000)
    spec = specs.make_environment_spec(config.environment_factory(0))
    networks = config.network_factory(spec)
    learner = config.builder.make_learner(jax.random.PRNGKey(7), networks, iter(()), lambda *a, **k: _NoLogger(), spec)
    params = jax.device_get(learner.get_variables(["policy"])[0])
    return config, spec, networks, params


def _act(actor, environment, adder: RecordingAdder) -> RecordingAdder:
    """``STEPS`` steps of ``actor`` in ``environment``, episodes restarting; the adder records them."""
    EnvironmentLoop(environment, actor, logger=loggers.NoOpLogger(), should_update=False).run(STEPS)
    return adder


def _own(config, spec, networks, params, key, actor_id, num_actors) -> RecordingAdder:
    """What actor ``actor_id`` does with its own policy (``builder.for_actor``) and a copy of the parameters."""
    builder = config.builder.for_actor(actor_id, num_actors)
    policy = builder.make_policy(networks, spec, evaluation=False)
    adder = RecordingAdder()
    actor = builder.make_actor([key], policy, spec, variable_source=FixedParams(params), adders=[adder])
    actor.update(wait=True)
    actor.restore({"num_steps": np.full(1, LATE_STEP, np.int32)})
    return _act(actor, config.environment_factory(actor_id), adder)


def _served(server, config, key, actor_id, results) -> None:
    adder = RecordingAdder()
    actor = ServedActor(server, [key], [adder], actor_id)
    actor.restore({"num_steps": np.full(1, LATE_STEP, np.int32)})
    results[actor_id] = _act(actor, config.environment_factory(actor_id), adder)
    actor.close()


@pytest.mark.parametrize(
    "agent, environment",
    [
        ("dqn", "gymnasium:CartPole-v1"),  # per-actor epsilons
        ("sac", "gymnasium:Pendulum-v1"),
        ("impala", "gymnasium:CartPole-v1"),  # extras: the behaviour log-probabilities
        ("r2d2", "gymnasium:CartPole-v1"),  # recurrent: the server holds each actor's state; per-actor epsilons
    ],
)
def test_two_actors_on_the_threads_launcher_act_as_their_own_policies_would(agent, environment):
    config, spec, networks, params = _setup(agent, environment)
    keys = [jax.random.PRNGKey(11), jax.random.PRNGKey(12)]
    results: dict[int, RecordingAdder] = {}
    program = launch.Program("served")
    learner = program.add_node(launch.ServiceNode(FixedParams, params), "learner")
    server = program.add_node(
        launch.ServiceNode(InferenceServer, config, spec, learner, 8, 0.01, 0.2, len(keys)), "inference"
    )
    for actor_id, key in enumerate(keys):
        program.add_node(
            launch.FunctionNode(_served, server, config, key, actor_id, results), f"actor_{actor_id}", terminal=True
        )

    launch.launch(program, "threads", timeout=180)

    for actor_id, key in enumerate(keys):
        own = _own(config, spec, networks, params, key, actor_id, len(keys))
        served = results[actor_id]
        assert len(served.steps) == len(own.steps) == STEPS
        assert served.episode_starts == own.episode_starts
        for (served_action, served_extras), (own_action, own_extras) in zip(served.steps, own.steps):
            if agent == "sac":
                np.testing.assert_allclose(served_action, own_action, rtol=1e-5, atol=1e-6)
            else:  # discrete: exact, with the random actions of epsilon-greedy or sampling
                assert served_action == own_action
            assert jax.tree.structure(served_extras) == jax.tree.structure(own_extras)
            jax.tree.map(lambda s, o: np.testing.assert_allclose(s, o, rtol=1e-5, atol=1e-6), served_extras, own_extras)
    if agent == "r2d2":  # the states handed to the adder change within episodes and restart with them
        states = [extras["core_state"]["hidden"] for _, extras in results[0].steps]
        assert not np.allclose(states[0], states[1]) and np.allclose(states[0], 0.0)
    if agent in ("dqn", "r2d2"):  # Ape-X's spread: the two actors act with two policies
        assert [a for a, _ in results[0].steps] != [a for a, _ in results[1].steps]


def test_a_recurrent_policy_starts_each_episode_from_its_initial_state_on_the_server():
    config, spec, networks, params = _setup("r2d2", "gymnasium:CartPole-v1")
    server = InferenceServer(config, spec, FixedParams(params), max_batch_size=8, max_wait_seconds=0.0)
    try:
        observation = config.environment_factory(0).reset().observation
        first = dm_env.restart(observation)
        adder = RecordingAdder()
        actor = ServedActor(server, [jax.random.PRNGKey(3)], [adder])
        actor.observe_first(0, first)
        for _ in range(3):
            actor.observe(0, actor.select_actions(observation[None])[0], dm_env.transition(1.0, observation))
        actor.observe_first(0, first)  # a new episode: its first state is the initial one again
        action = actor.select_actions(observation[None])[0]
        actor.observe(0, action, dm_env.transition(1.0, observation))
        hidden = [extras["core_state"]["hidden"] for _, extras in adder.steps]
        assert np.allclose(hidden[0], 0.0) and not np.allclose(hidden[1], 0.0) and np.allclose(hidden[3], 0.0)
        # Another actor's state is its own: a fresh actor starts from the initial state too.
        other = RecordingAdder()
        second = ServedActor(server, [jax.random.PRNGKey(4)], [other])
        second.observe_first(0, first)
        second.observe(0, second.select_actions(observation[None])[0], dm_env.transition(1.0, observation))
        assert np.allclose(other.steps[0][1]["core_state"]["hidden"], 0.0)
        actor.close()
        second.close()
    finally:
        server.stop()


def test_an_actor_of_several_environments_has_a_recurrent_state_per_environment_on_the_server():
    config, spec, networks, params = _setup("r2d2", "gymnasium:CartPole-v1")
    policy = config.builder.make_policy(networks, spec, evaluation=False)
    keys = [jax.random.PRNGKey(21), jax.random.PRNGKey(22)]
    server = InferenceServer(config, spec, FixedParams(params), max_batch_size=8, max_wait_seconds=0.0)
    try:
        recorded = {}
        for name in ("own", "served"):
            adders = [RecordingAdder(), RecordingAdder()]
            if name == "own":
                actor = RecurrentVectorActor(policy, keys, VariableClient(FixedParams(params), "policy"), adders)
                actor.update(wait=True)
            else:
                actor = ServedActor(server, keys, adders)
            actor.restore({"num_steps": np.full(2, LATE_STEP, np.int32)})
            environments = [config.environment_factory(index) for index in range(2)]
            timesteps = [environment.reset() for environment in environments]
            for index, timestep in enumerate(timesteps):
                actor.observe_first(index, timestep)
            for _ in range(STEPS):  # the two environments' episodes end at different steps
                actions = actor.select_actions(np.stack([timestep.observation for timestep in timesteps]))
                for index, environment in enumerate(environments):
                    timesteps[index] = environment.step(actions[index])
                    actor.observe(index, actions[index], timesteps[index])
                    if timesteps[index].last():
                        timesteps[index] = environment.reset()
                        actor.observe_first(index, timesteps[index])
            recorded[name] = adders
        for own, served in zip(recorded["own"], recorded["served"]):
            assert own.episode_starts == served.episode_starts > 1
            assert [int(a) for a, _ in served.steps] == [int(a) for a, _ in own.steps]
            for (_, ours), (_, theirs) in zip(served.steps, own.steps):
                jax.tree.map(lambda s, o: np.testing.assert_allclose(s, o, rtol=1e-5, atol=1e-6), ours, theirs)
    finally:
        server.stop()


def test_requests_that_arrive_together_are_evaluated_in_one_batch():
    config, spec, networks, params = _setup("dqn", "gymnasium:CartPole-v1")
    server = InferenceServer(config, spec, FixedParams(params), max_batch_size=8, max_wait_seconds=1.0)
    try:
        observation = config.environment_factory(0).reset().observation
        batch = np.stack([observation, observation])
        actors = [ServedActor(server, [jax.random.PRNGKey(i), jax.random.PRNGKey(100 + i)]) for i in range(3)]
        threads = [threading.Thread(target=actor.select_actions, args=(batch,)) for actor in actors]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        # 3 actors of 2 environments each within the 1 s wait: one policy call for all 6 observations.
        assert list(server.batch_sizes) == [6] and server.policy_calls == 1
        assert [actor.num_steps for actor in actors] == [2, 2, 2]
        # A batch never holds more than max_batch_size observations: 5 actors of 2 make batches of at most 8.
        server.batch_sizes.clear()
        actors = [ServedActor(server, [jax.random.PRNGKey(i), jax.random.PRNGKey(50 + i)]) for i in range(5)]
        threads = [threading.Thread(target=actor.select_actions, args=(batch,)) for actor in actors]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert sum(server.batch_sizes) == 10 and max(server.batch_sizes) <= 8
    finally:
        server.stop()


class _BreaksOnFirstBatch(InferenceServer):
    """A server whose batching thread dies once it has taken the first request, leaving it unanswered."""

    def _gather(self):
        batch = super()._gather()
        if batch:
            raise MemoryError("out of host memory")
        return batch


def test_an_actor_waiting_on_a_server_whose_batching_thread_died_gets_the_reason():
    config, spec, networks, params = _setup("dqn", "gymnasium:CartPole-v1")
    server = _BreaksOnFirstBatch(config, spec, FixedParams(params), max_batch_size=8, max_wait_seconds=0.0)
    try:
        observation = np.stack([config.environment_factory(0).reset().observation])
        actor = ServedActor(server, [jax.random.PRNGKey(0)])
        with pytest.raises(RuntimeError, match=r"batching thread died: MemoryError\('out of host memory'\)"):
            actor.select_actions(observation)
        with pytest.raises(RuntimeError, match="batching thread died"):  # and every later request at once
            actor.select_actions(observation)
    finally:
        server.stop()


def test_actors_with_their_own_policies_share_a_batch_with_one_call_per_policy():
    config, spec, networks, params = _setup("dqn", "gymnasium:CartPole-v1")
    server = InferenceServer(config, spec, FixedParams(params), max_batch_size=8, max_wait_seconds=1.0, num_actors=2)
    try:
        observation = config.environment_factory(0).reset().observation
        batch = np.stack([observation, observation])
        actors = [ServedActor(server, [jax.random.PRNGKey(i)] * 2, actor_id=i % 2) for i in range(3)]
        threads = [threading.Thread(target=actor.select_actions, args=(batch,)) for actor in actors]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert list(server.batch_sizes) == [6] and server.policy_calls == 2 and server.distinct_policies == 2
        with pytest.raises(ValueError, match=r"actor_id must be in \[0, 2\)"):
            ServedActor(server, [jax.random.PRNGKey(0)], actor_id=2).select_actions(batch[:1])
    finally:
        server.stop()


def test_a_policy_lag_bound_is_refused_before_the_run():
    config = registry.make_experiment_config(
        "impala", "gymnasium:CartPole-v1", seed=0, max_steps=1_000, config_overrides={"max_policy_lag": 4}
    )
    with pytest.raises(ValueError, match="cannot keep the policy-lag bound"):
        make_distributed_experiment(config, num_actors=1, replay="local", inference="server")


@pytest.mark.parametrize("inference", ["actor", "server"])
def test_more_environments_per_actor_than_the_agent_allows_are_refused_before_the_run(inference):
    """R2D2 refuses num_envs_per_actor > 1; a served actor never calls make_actor, so the refusal must not
    depend on it, and neither path may reach an actor's process with it."""
    config = registry.make_experiment_config("r2d2", "gymnasium:CartPole-v1", seed=0, max_steps=1_000)
    config = dataclasses.replace(config, num_envs_per_actor=2)
    with pytest.raises(NotImplementedError, match="R2D2 acts with one environment per actor"):
        make_distributed_experiment(config, num_actors=2, replay="local", inference=inference)
    with pytest.raises(NotImplementedError, match="R2D2 acts with one environment per actor"):
        InferenceServer(config, specs.make_environment_spec(config.environment_factory(0)), FixedParams(None))


def test_an_unknown_inference_mode_is_refused():
    config = registry.make_experiment_config("dqn", "gymnasium:CartPole-v1", seed=0, max_steps=1_000)
    with pytest.raises(ValueError, match="inference must be one of"):
        make_distributed_experiment(config, num_actors=1, replay="local", inference="gpu")


@pytest.mark.parametrize("agent", ["dqn", "r2d2"])
def test_a_distributed_run_with_an_inference_server_trains(agent, tmp_path):
    config = registry.make_experiment_config(
        agent,
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


class _Remote:
    """A handle to the server as another process holds it: its methods, but not the server itself."""

    def __init__(self, server):
        self.connection_address = server.connection_address


def test_a_direct_connection_acts_as_the_server_itself_and_refuses_a_wrong_key():
    config, spec, networks, params = _setup("r2d2", "gymnasium:CartPole-v1")
    server = InferenceServer(config, spec, FixedParams(params), max_batch_size=8, max_wait_seconds=0.0)
    try:
        client, disconnect = connect(_Remote(server))  # as from another process: through the socket
        direct, connected = RecordingAdder(), RecordingAdder()
        for adder, endpoint in ((direct, server), (connected, client)):
            actor = ServedActor(endpoint, [jax.random.PRNGKey(5)], [adder])
            actor.restore({"num_steps": np.full(1, LATE_STEP, np.int32)})
            _act(actor, config.environment_factory(0), adder)
            actor.close()
        assert [int(a) for a, _ in connected.steps] == [int(a) for a, _ in direct.steps]
        for (_, ours), (_, theirs) in zip(connected.steps, direct.steps):
            jax.tree.map(np.testing.assert_array_equal, ours, theirs)
        # The server's own errors reach the actor as errors.
        with pytest.raises(RuntimeError, match=r"could not select: ValueError: actor_id must be in \[0, 1\)"):
            ServedActor(client, [jax.random.PRNGKey(0)], actor_id=3).select_actions(
                np.stack([config.environment_factory(0).reset().observation])
            )
        disconnect()
        host, port, _ = server.connection_address()
        with pytest.raises(AuthenticationError):
            InferenceClient(host, port, b"not the key")
    finally:
        server.stop()


# A server process as a Ray node runs it, reduced to its listener: it answers every select with action 0.
_SERVER_PROCESS = """
import sys
import numpy as np
from acme.experiments.inference_transport import InferenceListener

class Server:
    def select(self, client, actor_id, observations, keys, steps, resets):
        return np.zeros(len(steps), np.int32), (), keys

    def forget(self, client):
        pass

host, port, key = InferenceListener(Server(), host="127.0.0.1").address
print(host, port, key.hex(), flush=True)
sys.stdin.read()
"""


def test_an_inference_server_whose_process_dies_fails_its_actors_with_an_error_naming_it():
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER_PROCESS],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=ROOT),
    )
    try:
        host, port, key = server.stdout.readline().split()
        client = InferenceClient(host, int(port), bytes.fromhex(key))
        actor = ServedActor(client, [jax.random.PRNGKey(0), jax.random.PRNGKey(1)])
        observations = np.zeros((2, 4), np.float32)
        np.testing.assert_array_equal(actor.select_actions(observations), [0, 0])
    finally:
        server.kill()
        server.wait(timeout=30)
    gone = f"The inference server at {host}:{port} is gone .*its process died or closed the connection"
    with pytest.raises(InferenceServerGoneError, match=gone):
        actor.select_actions(observations)
    with pytest.raises(InferenceServerGoneError, match=gone):  # every later step too, without waiting
        actor.select_actions(observations)
    actor.close()  # nothing to drop on a server that is gone: closing after the error does not raise another
    with pytest.raises(InferenceServerGoneError, match=f"Cannot reach the inference server at {host}:{port}"):
        InferenceClient(host, int(port), bytes.fromhex(key))  # a restarted actor finds no server either
