"""Central batched inference (SEED RL's idea): one node holds the policy and acts for every actor.

``InferenceServer`` polls the learner's ``"policy"`` parameters, gathers the observations that actors send,
evaluates them in jitted calls over batches (at most ``max_batch_size`` observations, waiting at most
``max_wait_seconds`` for more after the first), and answers each actor with its actions and the policy's extras.
``ServedActor`` is the actor side: it keeps its environments' random keys, step counts and adders as every
actor does, and sends each step's observations, keys and steps to the server, so that its actions are
those its own policy would take with the same parameters and keys.

It serves every actor policy kind: feed-forward, ``ExtrasPolicy`` (the extras come back to the actor's adders)
and ``RecurrentPolicy``, whose recurrent state the server holds per actor and environment (reset when the
actor starts an episode; the state each action was chosen from comes back as ``extras["core_state"]``, as from a
``RecurrentVectorActor``). Actors whose builder gives them their own policy (``builder.for_actor``: e.g. Ape-X's spread
of epsilons) are evaluated with it: one call per distinct policy in a batch. Builders that bound the policy lag
(``actors_fetch_directly``) are refused: the server's parameters are polled, so their lag is not bounded.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import os
import queue
import threading
import time
import uuid
from typing import Any, Callable, Sequence

import jax
import numpy as np

from acme import core, specs, types
from acme.experiments.config import ExperimentConfig
from acme.experiments.inference_transport import InferenceClient, InferenceListener
from acme.jax.actors import ActingState, ExtrasPolicy, RecurrentPolicy, recurrent_select_with_reset
from acme.jax.polling_source import CLOSE_SECONDS, PollingVariableSource

BATCH_SIZES_KEPT = 10_000


def check_servable(builder: Any, num_envs_per_actor: int) -> None:
    """Raises when the server cannot act for ``builder``'s actors: ``ValueError`` when they bound their policy lag;
    the agent's own refusal (``check_vector_acting``) when they cannot drive ``num_envs_per_actor`` environments."""
    builder.check_vector_acting(num_envs_per_actor)
    if getattr(builder, "actors_fetch_directly", False):
        raise ValueError(
            f"inference='server' polls the learner's parameters, so it cannot keep the policy-lag bound of "
            f"{type(builder).__name__} (its actors fetch from the learner directly: max_policy_lag is set). Use "
            "inference='actor', or max_policy_lag=None."
        )


def _served_select(policy: Any) -> Callable:
    """``select(params, key, observation, core_state, reset, step) -> (action, extras, new_state, key)`` for one
    environment, for any policy kind (feed-forward policies carry the empty state ``()`` and extras ``()``)."""
    if isinstance(policy, RecurrentPolicy):
        return recurrent_select_with_reset(policy)
    has_extras = isinstance(policy, ExtrasPolicy)
    function = policy.policy if has_extras else policy

    def select(params, key, observation, core_state, reset, step):
        key, policy_key = jax.random.split(key)
        output = function(params, policy_key, observation, step)
        action, extras = output if has_extras else (output, ())
        return action, extras, (), key

    return select


class _ServedPolicy:
    """One actor policy as the server evaluates it: the vmapped select, and its recurrent state's initial value."""

    def __init__(self, policy: Any):
        self.select = jax.jit(jax.vmap(_served_select(policy), in_axes=(None, 0, 0, 0, 0, 0)))
        self.recurrent = isinstance(policy, RecurrentPolicy)
        self._initial_state = jax.jit(policy.initial_state) if self.recurrent else None

    def fresh_state(self, params: Any, rows: int) -> Any:
        """A state of ``rows`` environments (to be reset before use); ``()`` for feed-forward policies."""
        if not self.recurrent:
            return ()
        initial = jax.device_get(self._initial_state(params))
        return jax.tree.map(lambda x: np.repeat(np.asarray(x)[None], rows, axis=0), initial)


@dataclasses.dataclass
class _Request:
    client: str  # the actor's own identifier: its recurrent states are kept under it
    actor_id: int
    observations: Any  # leaves [K, ...]
    keys: np.ndarray  # [K, key]
    steps: np.ndarray  # [K]
    resets: np.ndarray  # [K] bool: the environment starts an episode
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


def _stack_padded(leaves: Sequence[Any], padded: int) -> np.ndarray:
    """The leaves joined along their first axis, with the last row repeated up to ``padded`` rows."""
    joined = np.concatenate([np.asarray(leaf) for leaf in leaves])
    missing = padded - len(joined)
    return np.concatenate([joined, np.repeat(joined[-1:], missing, axis=0)]) if missing > 0 else joined


class InferenceServer:
    """Evaluates the actors' policies in batches; see the module's docstring.

    ``select`` is what actors call, from their own threads (threads launcher) or through the node's Ray
    proxy (the Ray actor serves concurrent calls on threads); a background thread forms the batches and is
    the only one that touches the recurrent states.
    """

    def __init__(
        self,
        config: ExperimentConfig,
        environment_spec: specs.EnvironmentSpec,
        learner: core.VariableSource,
        max_batch_size: int = 64,
        max_wait_seconds: float = 0.002,
        variable_poll_seconds: float = 0.2,
        num_actors: int = 1,
    ):
        if not isinstance(max_batch_size, int) or max_batch_size < 1:
            raise ValueError(f"max_batch_size must be a positive integer, got {max_batch_size!r}.")
        if not max_wait_seconds >= 0:
            raise ValueError(f"max_wait_seconds must be >= 0, got {max_wait_seconds!r}.")
        if isinstance(num_actors, bool) or not isinstance(num_actors, int) or num_actors < 1:
            raise ValueError(f"num_actors must be a positive integer, got {num_actors!r}.")
        check_servable(config.builder, config.num_envs_per_actor)
        self._builder = config.builder
        self._spec = environment_spec
        self._networks = config.network_factory(environment_spec)
        self._num_actors = num_actors
        self._policies: list[tuple[Any, _ServedPolicy]] = []  # (actor config, its served policy), distinct configs
        self._policy_of_actor: dict[int, _ServedPolicy] = {}
        self._states: dict[str, Any] = {}  # client -> recurrent state of its environments, leaves [K, ...]
        self._states_lock = threading.Lock()
        self._listener: InferenceListener | None = None
        self._policy_of_actor[0] = self._served_policy(0)  # built now: a policy the server cannot build fails here
        self._source = PollingVariableSource(learner, ["policy"], variable_poll_seconds)
        self._max_batch_size = max_batch_size
        self._max_wait = max_wait_seconds
        self._requests: queue.Queue[_Request] = queue.Queue()
        self._stop = threading.Event()
        # Observations per batch, the latest BATCH_SIZES_KEPT, for tests and diagnostics (bounded: a server runs
        # for hours, hundreds of batches a second).
        self.batch_sizes: collections.deque[int] = collections.deque(maxlen=BATCH_SIZES_KEPT)
        self.policy_calls = 0  # jitted calls: one per distinct actor policy in each batch
        self._failure: BaseException | None = None  # what ended the batching thread, if anything did
        self._thread = threading.Thread(target=self._serve, name="inference-batcher", daemon=True)
        self._thread.start()

    def _served_policy(self, actor_id: int) -> _ServedPolicy:
        """Actor ``actor_id``'s policy, shared with every actor whose builder config is the same."""
        builder = self._builder.for_actor(actor_id, self._num_actors)
        actor_config = getattr(builder, "config", builder)
        for known, served in self._policies:
            if known == actor_config:
                return served
        served = _ServedPolicy(builder.make_policy(self._networks, self._spec, evaluation=False))
        self._policies.append((actor_config, served))
        return served

    @property
    def distinct_policies(self) -> int:
        """How many distinct actor policies the server has built so far."""
        return len(self._policies)

    def connection_address(self) -> tuple[str, int, bytes]:
        """``(host, port, key)`` of this server's direct connection for actors in other processes (an
        ``InferenceClient``: no Ray call per step); the listener opens on the first call."""
        with self._states_lock:
            if self._listener is None:
                self._listener = InferenceListener(self)
        return self._listener.address

    def pid(self) -> int:
        """This server's process id (for benchmarks that account CPU time by node)."""
        return os.getpid()

    def select(
        self,
        client: str,
        actor_id: int,
        observations: Any,
        keys: np.ndarray,
        steps: np.ndarray,
        resets: np.ndarray,
    ) -> tuple[Any, Any, np.ndarray]:
        """Actions for the K environments of actor ``actor_id`` (the client ``client``): observations (leaves
        ``[K, ...]``), the environments' keys ``[K, ...]``, steps ``[K]`` and whether each starts an episode
        ``[K]``. Returns ``(actions [K, ...], extras (leaves [K, ...]), next keys [K, ...])``."""
        if self._stop.is_set():
            raise RuntimeError("The inference server has stopped.")
        if not self._thread.is_alive():
            raise RuntimeError(f"The inference server's batching thread died: {self._failure!r}")
        if not 0 <= actor_id < self._num_actors:
            raise ValueError(f"actor_id must be in [0, {self._num_actors}) for this server, got {actor_id}.")
        request = _Request(
            client, actor_id, observations, np.asarray(keys), np.asarray(steps, np.int32), np.asarray(resets, bool)
        )
        self._requests.put(request)
        while not request.done.wait(0.1):
            if self._stop.is_set():
                raise RuntimeError("The inference server stopped before answering.")
            if not self._thread.is_alive():  # nothing would ever answer: say why rather than wait forever
                raise RuntimeError(f"The inference server's batching thread died: {self._failure!r}")
        if request.error is not None:
            raise RuntimeError(f"The inference server failed to evaluate the policy: {request.error!r}")
        return request.result

    def forget(self, client: str) -> None:
        """Drops ``client``'s recurrent states (an actor that is done with the server)."""
        with self._states_lock:
            self._states.pop(client, None)

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
        try:
            self._serve_batches()
        except BaseException as error:  # every waiting actor, and every later one, gets it
            self._failure = error
            logging.getLogger(__name__).exception("The inference server's batching thread died.")

    def _serve_batches(self) -> None:
        while not self._stop.is_set():
            batch = self._gather()
            if not batch:
                continue
            groups: dict[_ServedPolicy, list[_Request]] = {}  # by identity: one jitted call per distinct policy
            for request in batch:
                try:
                    policy = self._policy_of_actor.get(request.actor_id)
                    if policy is None:
                        policy = self._policy_of_actor[request.actor_id] = self._served_policy(request.actor_id)
                except BaseException as error:
                    request.error = error
                    request.done.set()
                    continue
                groups.setdefault(policy, []).append(request)
            self.batch_sizes.append(sum(request.size for request in batch))
            for policy, requests in groups.items():
                try:
                    self._evaluate(policy, requests)
                except BaseException as error:  # answered to every waiting actor of the group
                    for request in requests:
                        request.error = error
                for request in requests:
                    request.done.set()

    def _evaluate(self, policy: _ServedPolicy, batch: Sequence[_Request]) -> None:
        sizes = [request.size for request in batch]
        total = sum(sizes)
        padded = _bucket(total, self._max_batch_size)
        params = self._source.get_variables(["policy"])[0]
        resets = [request.resets for request in batch]
        with self._states_lock:
            states = []
            for index, request in enumerate(batch):
                state = self._states.get(request.client)
                if policy.recurrent and (state is None or len(jax.tree.leaves(state)[0]) != request.size):
                    state = policy.fresh_state(params, request.size)  # unknown here (e.g. a restarted server)
                    resets[index] = np.ones(request.size, bool)
                states.append(state)
        stack = lambda *leaves: _stack_padded(leaves, padded)  # noqa: E731
        observations = jax.tree.map(stack, *[request.observations for request in batch])
        core_state = jax.tree.map(stack, *states) if policy.recurrent else ()
        keys = stack(*[request.keys for request in batch])
        steps = stack(*[request.steps for request in batch])
        actions, extras, new_state, next_keys = jax.device_get(
            policy.select(params, keys, observations, core_state, stack(*resets), steps)
        )
        self.policy_calls += 1
        start = 0
        with self._states_lock:
            for request, size in zip(batch, sizes):
                rows = lambda x: np.asarray(x[start : start + size])  # noqa: E731,B023
                if policy.recurrent:
                    self._states[request.client] = jax.tree.map(rows, new_state)
                request.result = (jax.tree.map(rows, actions), jax.tree.map(rows, extras), rows(next_keys))
                start += size

    def stop(self) -> None:
        """Stops the batching thread and the parameter polling; waiting actors get an error."""
        self._stop.set()
        self._source.close()
        self._thread.join(CLOSE_SECONDS)  # its batch in flight: a jax call at exit would abort the process
        if self._listener is not None:
            self._listener.close()


class ServedActor(ActingState):
    """Acts in K environments through an ``InferenceServer``: each environment's random key, step count and adder
    are kept here (``ActingState``, as every actor keeps them), the policy (and any recurrent state) there.
    ``actor_id`` picks the actor's own policy on the server (``builder.for_actor``)."""

    def __init__(
        self,
        server: Any,
        random_keys: Sequence[types.PRNGKey],
        adders: Sequence[Any | None] | None = None,
        actor_id: int = 0,
    ):
        super().__init__(random_keys, adders)
        self._server = server
        self._client = uuid.uuid4().hex
        self._actor_id = actor_id

    def select_actions(self, observations: types.NestedArray) -> np.ndarray:
        actions, self._extras, self._keys = self._server.select(
            self._client, self._actor_id, observations, self._keys, self._steps, self._resets
        )
        self._stepped()
        return actions

    def update(self, wait: bool = False) -> None:
        """Nothing to fetch: the server holds the parameters."""

    def close(self) -> None:
        """Tells the server to drop this actor's recurrent states."""
        self._server.forget(self._client)


def connect(server: Any) -> tuple[Any, Callable[[], None]]:
    """What an actor calls for its actions: ``server`` itself in the same process, else an ``InferenceClient``
    of its direct connection (a handle's method call per step would cost a Ray call). Returns it and a close."""
    if isinstance(server, InferenceServer):
        return server, lambda: None
    client = InferenceClient(*server.connection_address())
    return client, client.close
