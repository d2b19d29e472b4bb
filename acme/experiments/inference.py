"""Central batched inference (SEED RL's idea): one node holds the policy and acts for every actor.

``InferenceServer`` polls the learner's ``"policy"`` parameters, gathers the observations that actors send,
evaluates them in one jitted call per batch (at most ``max_batch_size`` observations, waiting at most
``max_wait_seconds`` for more after the first), and answers each actor with its actions. ``ServedActor``
is the actor side: it keeps its environments' random keys, step counts and adders, and sends each step's
observations, keys and steps to the server, so that its actions are those its own policy would take with
the same parameters and keys. Feed-forward policies without extras only (DQN and the continuous agents).
"""

from __future__ import annotations

import dataclasses
import os
import queue
import threading
import time
from typing import Any, Sequence

import dm_env
import jax
import numpy as np

from acme import core, specs, types
from acme.experiments.config import ExperimentConfig
from acme.jax.actors import ExtrasPolicy, RecurrentPolicy
from acme.jax.polling_source import PollingVariableSource

INFERENCE_MODES = ("actor", "server")


def check_servable(policy: Any, agent: str = "this agent") -> None:
    """Raises ``ValueError`` unless ``policy`` is a plain feed-forward policy the server can evaluate."""
    if isinstance(policy, RecurrentPolicy):
        kind = "recurrent (its state would have to live on the server, per actor and environment)"
    elif isinstance(policy, ExtrasPolicy):
        kind = "one that returns extras with its actions (e.g. behaviour log-probabilities)"
    else:
        return
    raise ValueError(
        f"inference='server' evaluates feed-forward policies without extras (DQN, SAC, TD3, D4PG, MPO); the "
        f"policy of {agent} is {kind}. Use inference='actor'."
    )


@dataclasses.dataclass
class _Request:
    observations: Any  # leaves [K, ...]
    keys: np.ndarray  # [K, key]
    steps: np.ndarray  # [K]
    done: threading.Event = dataclasses.field(default_factory=threading.Event)
    result: Any = None
    error: BaseException | None = None

    @property
    def size(self) -> int:
        return len(self.steps)


def _bucket(size: int, largest: int) -> int:
    """The padded batch size for ``size`` observations: the next power of two, but no more than ``largest``
    (unless ``size`` alone is more), so that the jitted policy compiles for a few shapes only."""
    padded = 1
    while padded < size:
        padded *= 2
    return max(size, min(padded, largest))


class InferenceServer:
    """Evaluates the policy for many actors in batches; see the module's docstring.

    ``select`` is what actors call, from their own threads (threads launcher) or through the node's Ray
    proxy (the Ray actor serves concurrent calls on threads); a background thread forms the batches.
    """

    def __init__(
        self,
        config: ExperimentConfig,
        environment_spec: specs.EnvironmentSpec,
        learner: core.VariableSource,
        max_batch_size: int = 64,
        max_wait_seconds: float = 0.002,
        variable_poll_seconds: float = 0.2,
    ):
        if not isinstance(max_batch_size, int) or max_batch_size < 1:
            raise ValueError(f"max_batch_size must be a positive integer, got {max_batch_size!r}.")
        if not max_wait_seconds >= 0:
            raise ValueError(f"max_wait_seconds must be >= 0, got {max_wait_seconds!r}.")
        networks = config.network_factory(environment_spec)
        policy = config.builder.make_policy(networks, environment_spec, evaluation=False)
        check_servable(policy, type(config.builder).__name__)

        def select(params, key, observation, step):
            key, policy_key = jax.random.split(key)
            return policy(params, policy_key, observation, step), key

        self._select = jax.jit(jax.vmap(select, in_axes=(None, 0, 0, 0)))
        self._source = PollingVariableSource(learner, ["policy"], variable_poll_seconds)
        self._max_batch_size = max_batch_size
        self._max_wait = max_wait_seconds
        self._requests: queue.Queue[_Request] = queue.Queue()
        self._stop = threading.Event()
        self.batch_sizes: list[int] = []  # observations per policy call, for tests and diagnostics
        self._thread = threading.Thread(target=self._serve, name="inference-batcher", daemon=True)
        self._thread.start()

    def pid(self) -> int:
        """This server's process id (for benchmarks that account CPU time by node)."""
        return os.getpid()

    def select(self, observations: Any, keys: np.ndarray, steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Actions for K observations (leaves ``[K, ...]``) with their environments' keys ``[K, ...]`` and steps
        ``[K]``; returns ``(actions [K, ...], next keys [K, ...])``."""
        if self._stop.is_set():
            raise RuntimeError("The inference server has stopped.")
        request = _Request(observations, np.asarray(keys), np.asarray(steps, np.int32))
        self._requests.put(request)
        while not request.done.wait(0.1):
            if self._stop.is_set():
                raise RuntimeError("The inference server stopped before answering.")
        if request.error is not None:
            raise RuntimeError(f"The inference server failed to evaluate the policy: {request.error!r}")
        return request.result

    def _gather(self) -> list[_Request]:
        """The requests of one batch: the first to come, then others for up to ``max_wait_seconds`` while they
        fit in ``max_batch_size`` observations."""
        try:
            first = self._requests.get(timeout=0.1)
        except queue.Empty:
            return []
        batch, size = [first], first.size
        deadline = time.monotonic() + self._max_wait
        while size < self._max_batch_size:
            remaining = deadline - time.monotonic()
            try:
                request = self._requests.get(timeout=remaining) if remaining > 0 else self._requests.get_nowait()
            except queue.Empty:
                break
            if size + request.size > self._max_batch_size:
                self._requests.put(request)  # the next batch's first
                break
            batch.append(request)
            size += request.size
        return batch

    def _serve(self) -> None:
        while not self._stop.is_set():
            batch = self._gather()
            if not batch:
                continue
            try:
                self._evaluate(batch)
            except BaseException as error:  # answered to every waiting actor
                for request in batch:
                    request.error = error
            for request in batch:
                request.done.set()

    def _evaluate(self, batch: Sequence[_Request]) -> None:
        sizes = [request.size for request in batch]
        total = sum(sizes)
        padded = _bucket(total, self._max_batch_size)

        def stacked(*leaves):
            joined = np.concatenate([np.asarray(leaf) for leaf in leaves])
            return (
                np.concatenate([joined, np.repeat(joined[-1:], padded - total, axis=0)]) if padded > total else joined
            )

        observations = jax.tree.map(stacked, *[request.observations for request in batch])
        keys = stacked(*[request.keys for request in batch])
        steps = stacked(*[request.steps for request in batch])
        params = self._source.get_variables(["policy"])[0]
        actions, next_keys = jax.device_get(self._select(params, keys, observations, steps))
        self.batch_sizes.append(total)
        start = 0
        for request, size in zip(batch, sizes):
            request.result = (
                jax.tree.map(lambda x: np.asarray(x[start : start + size]), actions),
                np.asarray(next_keys[start : start + size]),
            )
            start += size

    def stop(self) -> None:
        """Stops the batching thread and the parameter polling; waiting actors get an error."""
        self._stop.set()
        self._source.close()


class ServedVectorActor:
    """Acts in K environments through an ``InferenceServer``: the ``VectorActor`` interface, with each
    environment's random key, step count and adder kept here and the policy evaluated there."""

    def __init__(self, server: Any, random_keys: Sequence[types.PRNGKey], adders: Sequence[Any | None] | None = None):
        if len(random_keys) < 1:
            raise ValueError("random_keys must hold one key per environment (at least one).")
        if adders is not None and len(adders) != len(random_keys):
            raise ValueError(f"Give one adder per environment: {len(random_keys)} keys but {len(adders)} adders.")
        self._server = server
        self._keys = np.stack([np.asarray(jax.device_get(key)) for key in random_keys])
        self._steps = np.zeros(len(random_keys), np.int32)
        self._adders = list(adders) if adders is not None else [None] * len(random_keys)
        self._episode_open = [False] * len(random_keys)

    @property
    def num_envs(self) -> int:
        return len(self._adders)

    @property
    def num_steps(self) -> int:
        return int(self._steps.sum())

    def save(self) -> dict:
        """Each environment's step count and random key."""
        return {"num_steps": self._steps.copy(), "key": self._keys.copy()}

    def restore(self, state: dict) -> None:
        """Continues from ``save()``'s state (of an actor with as many environments)."""
        steps = np.asarray(state["num_steps"], np.int32)
        if steps.shape != self._steps.shape:
            raise ValueError(
                f"The saved actor drove {steps.size} environments; this one drives {self.num_envs} "
                "(resume with the same num_envs_per_actor)."
            )
        self._steps = steps.copy()
        if "key" in state:
            self._keys = np.asarray(state["key"]).copy()

    def select_actions(self, observations: types.NestedArray) -> np.ndarray:
        actions, self._keys = self._server.select(observations, self._keys, self._steps)
        self._steps = self._steps + 1
        return actions

    def observe_first(self, index: int, timestep: dm_env.TimeStep) -> None:
        adder = self._adders[index]
        if adder is not None:
            if self._episode_open[index]:
                adder.reset()
            adder.add_first(timestep)
            self._episode_open[index] = True

    def observe(self, index: int, action: types.NestedArray, next_timestep: dm_env.TimeStep) -> None:
        adder = self._adders[index]
        if adder is not None:
            adder.add(action, next_timestep, ())
            self._episode_open[index] = not next_timestep.last()

    def update(self, wait: bool = False) -> None:
        """Nothing to fetch: the server holds the parameters."""


class ServedActor(core.Actor):
    """One environment's actor through an ``InferenceServer`` (the ``GenericActor`` interface)."""

    def __init__(self, server: Any, random_key: types.PRNGKey, adder: Any | None = None):
        self._vector = ServedVectorActor(server, [random_key], [adder])

    @property
    def num_steps(self) -> int:
        return self._vector.num_steps

    def save(self) -> dict:
        state = self._vector.save()
        return {"num_steps": int(state["num_steps"][0]), "key": state["key"][0]}

    def restore(self, state: dict) -> None:
        if np.ndim(state["num_steps"]) != 0:
            raise ValueError(f"The saved actor drove {np.size(state['num_steps'])} environments; this one drives 1.")
        vector_state = {"num_steps": np.asarray([state["num_steps"]], np.int32)}
        if "key" in state:
            vector_state["key"] = np.asarray(state["key"])[None]
        self._vector.restore(vector_state)

    def select_action(self, observation: types.NestedArray) -> np.ndarray:
        batched = jax.tree.map(lambda x: np.asarray(x)[None], observation)
        return jax.tree.map(lambda x: x[0], self._vector.select_actions(batched))

    def observe_first(self, timestep: dm_env.TimeStep) -> None:
        self._vector.observe_first(0, timestep)

    def observe(self, action: types.NestedArray, next_timestep: dm_env.TimeStep) -> None:
        self._vector.observe(0, action, next_timestep)

    def update(self, wait: bool = False) -> None:
        """Nothing to fetch: the server holds the parameters."""
