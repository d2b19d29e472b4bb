"""The actor: a jitted policy acting in K environments at once (K = 1 included), with one vmapped policy call per
step for all K (``VectorActor``), and its recurrent form (``RecurrentVectorActor``) that carries each environment's
policy state across steps. ``ActingState`` is the bookkeeping every actor shares (also one served by an inference
server): each environment's random key, step count, adder and episode."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

import dm_env
import jax
import jax.numpy as jnp
import numpy as np

from acme import core, types
from acme.adders import Adder
from acme.jax.variable_client import VariableClient

# policy(params, key, observation, actor_step) -> action, for one unbatched observation.
ActorPolicy = Callable[[types.Params, types.PRNGKey, types.NestedArray, jnp.ndarray], types.NestedArray]


class ExtrasPolicy(NamedTuple):
    """A policy that returns ``(action, extras)``: actors hand the extras (e.g. the behaviour
    log-probability) to their adder with the action."""

    policy: ActorPolicy


class RecurrentPolicy(NamedTuple):
    """A policy with a recurrent state carried across an episode's steps.

    ``policy(params, key, observation, core_state, actor_step) -> (action, extras, new_core_state)`` for one
    unbatched observation; ``initial_state(params)`` is the state at an episode's start. ``extras`` (a dict,
    maybe empty) goes to the adder.
    """

    policy: Callable
    initial_state: Callable


class _Placed:
    """A jitted ``select(params, key, *inputs)`` run on ``device``, else on ``backend``'s first device (None:
    jax's default).

    The parameters are put on that device when the variable client hands over a
    new set (from the learner's devices and layout, Sebulba's resharding), the
    keys once (``place``; ``select`` returns them there), and jax runs a call
    where its committed inputs are. (``jax.jit``'s ``backend`` argument, which
    did this before, is deprecated.)
    """

    def __init__(self, jitted, backend: str | None, device: Any = None):
        self._jitted = jitted
        if device is None:
            device = jax.local_devices(backend=backend)[0] if backend is not None else None
            # On jax's default device (the CPU of a machine without accelerators) nothing needs moving: a
            # device_put of every new set of parameters would cost a Python-side dispatch per leaf for nothing.
            device = None if device == jax.devices()[0] else device
        self._device = device
        self._params, self._placed_params = None, None

    @property
    def device(self) -> Any:
        """The device the policy runs on (None: where its inputs are, jax's default)."""
        return self._device

    def place(self, tree):
        """``tree`` on this device (as it is without a backend)."""
        return jax.device_put(tree, self._device) if self._device is not None else tree

    def __call__(self, params, key, *inputs):
        if params is not self._params:
            self._params, self._placed_params = params, self.place(params)
        return self._jitted(self._placed_params, key, *inputs)


class ActingState(core.Actor):
    """What an actor keeps per environment, whoever evaluates its policy: a random key, a step count (exploration
    schedules follow it), whether the episode starts afresh (a recurrent policy's state is reset there), the adder
    and whether its episode is open, and the extras of the last batched action (handed to each adder with its
    environment's action). Subclasses choose the actions (``select_actions``) and fetch parameters (``update``).
    """

    def __init__(self, random_keys: Sequence[types.PRNGKey], adders: Sequence[Adder | None] | None):
        if len(random_keys) < 1:
            raise ValueError("random_keys must hold one key per environment (at least one).")
        if adders is not None and len(adders) != len(random_keys):
            raise ValueError(f"Give one adder per environment: {len(random_keys)} keys but {len(adders)} adders.")
        self._keys: Any = np.stack([np.asarray(jax.device_get(key)) for key in random_keys])
        self._steps = np.zeros(len(random_keys), np.int32)
        self._no_resets = np.zeros(len(random_keys), bool)  # never written: safe to hand to every call
        self._resets = np.ones(len(random_keys), bool)  # every environment starts from the initial state
        self._resets_pending = True
        self._extras: Any = ()
        self._has_extras = True  # whether select_actions leaves extras for the adders (subclasses may say no)
        self._adders = list(adders) if adders is not None else [None] * len(random_keys)
        self._episode_open = [False] * len(random_keys)

    @property
    def num_envs(self) -> int:
        return len(self._adders)

    @property
    def num_steps(self) -> int:
        """Steps taken over all environments."""
        return int(self._steps.sum())

    def save(self) -> dict:
        """Each environment's step count and random key (a recurrent state is not kept: episodes restart)."""
        return {"num_steps": self._steps.copy(), "key": np.array(jax.device_get(self._keys))}

    def restore(self, state: dict) -> None:
        """Continues from ``save()``'s state (of an actor with as many environments)."""
        steps, keys = np.asarray(state["num_steps"], np.int32), state.get("key")
        if steps.ndim == 0 and self.num_envs == 1:  # saved by the one-environment actor of earlier versions
            steps, keys = steps[None], None if keys is None else np.asarray(keys)[None]
        if steps.shape != self._steps.shape:
            raise ValueError(
                f"The saved actor drove {steps.size} environments; this one drives {self.num_envs} "
                "(resume with the same num_envs_per_actor)."
            )
        self._steps = steps.copy()
        if keys is not None:
            self._keys = self._place_keys(np.asarray(keys))

    def _place_keys(self, keys: np.ndarray) -> Any:
        """The keys where ``select_actions`` uses them."""
        return keys.copy()

    def _stepped(self) -> None:
        """After a batched action whose results are on the host: no environment starts afresh any more, each took
        a step. (On CPU jax may read a numpy argument in place until its call is done, so the arrays a call read
        are changed only once its results are here, and the resets set by ``observe_first`` go in a new array.)"""
        if self._resets_pending:
            self._resets, self._resets_pending = self._no_resets, False
        self._steps += 1

    def observe_first(self, index: int, timestep: dm_env.TimeStep) -> None:
        if not self._resets_pending:  # a new array: the one the last call read is left as it was
            self._resets, self._resets_pending = np.zeros(self.num_envs, bool), True
        self._resets[index] = True  # a new episode starts from the initial state
        adder = self._adders[index]
        if adder is not None:
            if self._episode_open[index]:  # the previous episode was cut short (e.g. a step budget)
                adder.reset()
            adder.add_first(timestep)
            self._episode_open[index] = True

    def observe(self, index: int, action: types.NestedArray, next_timestep: dm_env.TimeStep) -> None:
        adder = self._adders[index]
        if adder is not None:
            extras = jax.tree.map(lambda x: x[index], self._extras) if self._has_extras else ()
            adder.add(action, next_timestep, extras)
            self._episode_open[index] = not next_timestep.last()


class VectorActor(ActingState):
    """Acts with ``policy`` under the parameters that ``variable_client`` holds, in K environments at once.

    The policy and the random-key split run in one jitted, vmapped call per step for all K. Environment ``i``
    has its own random key, step count (passed to the policy, for exploration schedules) and adder, so K
    environments driven by one actor produce what K one-environment actors with the same keys would. An
    ``ExtrasPolicy``'s extras go to the adders with the actions.
    """

    def __init__(
        self,
        policy: ActorPolicy | ExtrasPolicy,
        random_keys: Sequence[types.PRNGKey],
        variable_client: VariableClient | None,
        adders: Sequence[Adder | None] | None = None,
        backend: str | None = "cpu",
        device: Any = None,
    ):
        super().__init__(random_keys, adders)
        self._variable_client = variable_client
        self._select = _Placed(jax.jit(self._batched_select(policy)), backend, device)
        self._keys = self._place_keys(self._keys)
        self._has_extras = isinstance(policy, (ExtrasPolicy, RecurrentPolicy))

    def _batched_select(self, policy: ActorPolicy | ExtrasPolicy) -> Callable:
        """``select(params, keys, observations, steps) -> (actions, extras, next_keys)`` for all K environments.
        (Each output is a new device buffer per call, so the step counts are counted here, on the host.)"""
        with_extras = isinstance(policy, ExtrasPolicy)
        act = policy.policy if with_extras else policy

        def select(params, key, observation, step):
            key, policy_key = jax.random.split(key)
            action = act(params, policy_key, observation, step)
            action, extras = action if with_extras else (action, ())
            return action, extras, key

        return jax.vmap(select, in_axes=(None, 0, 0, 0))

    def _place_keys(self, keys: np.ndarray) -> Any:
        return self._select.place(jnp.asarray(keys))

    def _params(self) -> Any:
        return self._variable_client.params if self._variable_client is not None else None

    def select_actions(self, observations: types.NestedArray) -> np.ndarray:
        """Actions for a batch of K observations (leaves ``[K, ...]``), one per environment."""
        actions, extras, self._keys = self._select(self._params(), self._keys, observations, self._steps)
        actions = np.asarray(actions)  # waits for the call to be done
        self._stepped()
        if self._has_extras:
            self._extras = jax.tree.map(np.asarray, extras)
        return actions

    def update(self, wait: bool = False) -> None:
        if self._variable_client is not None:
            self._variable_client.update(wait)


def recurrent_select_with_reset(policy: RecurrentPolicy) -> Callable:
    """``select(params, key, observation, core_state, reset, step) -> (action, extras, new_state, next_key)`` for
    one environment: the state is the policy's initial one where ``reset``, and ``extras["core_state"]`` is the
    state the action was chosen from."""

    def select(params, key, observation, core_state, reset, step):
        initial = policy.initial_state(params)
        core_state = jax.tree.map(lambda s, i: jnp.where(reset, i, s), core_state, initial)
        key, policy_key = jax.random.split(key)
        action, extras, new_state = policy.policy(params, policy_key, observation, core_state, step)
        return action, {**extras, "core_state": core_state}, new_state, key

    return select


class RecurrentVectorActor(VectorActor):
    """Acts with a ``RecurrentPolicy`` in K environments at once: one jitted, vmapped call for all K, each
    environment with its own recurrent state (reset when its episode starts), key, step count and adder.

    The adder of environment ``i`` receives, with every action, the policy's extras and ``extras["core_state"]``:
    the state the action was chosen from (so a learner can start unrolling a stored sequence from its first
    step's state). A recurrent state is not kept across a restart: the episode restarts.
    """

    def __init__(
        self,
        policy: RecurrentPolicy,
        random_keys: Sequence[types.PRNGKey],
        variable_client: VariableClient | None,
        adders: Sequence[Adder | None] | None = None,
        backend: str | None = "cpu",
        device: Any = None,
    ):
        super().__init__(policy, random_keys, variable_client, adders, backend, device)
        self._initial_state = jax.jit(policy.initial_state)
        self._core_state = None

    def _batched_select(self, policy: RecurrentPolicy) -> Callable:
        """``select(params, keys, observations, core_states, resets, steps) -> (actions, extras, new_states,
        next_keys)`` for all K environments."""
        return jax.vmap(recurrent_select_with_reset(policy), in_axes=(None, 0, 0, 0, 0, 0))

    def select_actions(self, observations: types.NestedArray) -> np.ndarray:
        params = self._params()
        if self._core_state is None:  # each environment's slot is reset before its first step
            self._core_state = jax.tree.map(
                lambda x: jnp.zeros((self.num_envs, *x.shape), x.dtype), self._initial_state(self._select.place(params))
            )
        actions, extras, self._core_state, self._keys = self._select(
            params, self._keys, observations, self._core_state, self._resets, self._steps
        )
        actions = np.asarray(actions)  # waits for the call to be done
        self._stepped()
        self._extras = jax.tree.map(np.asarray, extras)
        return actions
