"""Actors around a jitted policy: one environment (``GenericActor``) or K at once (``VectorActor``), and their
recurrent versions (``RecurrentActor``, ``RecurrentVectorActor``) that carry a policy's state across steps."""

from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

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


def _unwrap(policy: ActorPolicy | ExtrasPolicy) -> tuple[ActorPolicy, bool]:
    return (policy.policy, True) if isinstance(policy, ExtrasPolicy) else (policy, False)


class _Placed:
    """A jitted ``select(params, key, *inputs)`` run on ``backend``'s first device (None: jax's default).

    The parameters are put on that device when the variable client hands over a
    new set, the keys once (``place``; ``select`` returns them there), and jax
    runs a call where its committed inputs are. (``jax.jit``'s ``backend``
    argument, which did this before, is deprecated.)
    """

    def __init__(self, jitted, backend: str | None):
        self._jitted = jitted
        device = jax.local_devices(backend=backend)[0] if backend is not None else None
        # On jax's default device (the CPU of a machine without accelerators) nothing needs moving: a
        # device_put of every new set of parameters would cost a Python-side dispatch per leaf for nothing.
        self._device = None if device == jax.devices()[0] else device
        self._params, self._placed_params = None, None

    def place(self, tree):
        """``tree`` on this device (as it is without a backend)."""
        return jax.device_put(tree, self._device) if self._device is not None else tree

    def __call__(self, params, key, *inputs):
        if params is not self._params:
            self._params, self._placed_params = params, self.place(params)
        return self._jitted(self._placed_params, key, *inputs)


class GenericActor(core.Actor):
    """Acts with ``policy`` under the parameters that ``variable_client`` holds.

    The policy and the random-key split run in one jitted call per step, and the
    actor's own step count is passed to the policy (for exploration schedules).
    An ``ExtrasPolicy``'s extras go to the adder with the action.
    """

    def __init__(
        self,
        policy: ActorPolicy | ExtrasPolicy,
        random_key: types.PRNGKey,
        variable_client: VariableClient | None,
        adder: Adder | None = None,
        backend: str | None = "cpu",
    ):
        policy, self._policy_extras = _unwrap(policy)

        def select(params, key, observation, step):
            key, policy_key = jax.random.split(key)
            return policy(params, policy_key, observation, step), key

        self._select = _Placed(jax.jit(select), backend)
        self._key = self._select.place(random_key)
        self._variable_client = variable_client
        self._adder = adder
        self._extras = ()
        self._num_steps = 0
        self._episode_open = False

    @property
    def num_steps(self) -> int:
        return self._num_steps

    def save(self) -> dict:
        """The actor's own state: its step count (exploration schedules follow it) and random key."""
        return {"num_steps": self._num_steps, "key": np.asarray(jax.device_get(self._key))}

    def restore(self, state: dict) -> None:
        """Continues from ``save()``'s state; a state without ``key`` keeps this actor's key."""
        if np.ndim(state["num_steps"]) != 0:
            raise ValueError(
                f"The saved actor drove {np.size(state['num_steps'])} environments; this one drives 1 "
                "(resume with the same num_envs_per_actor)."
            )
        self._num_steps = int(state["num_steps"])
        if "key" in state:
            self._key = self._select.place(np.asarray(state["key"]))

    def select_action(self, observation: types.NestedArray) -> np.ndarray:
        params = self._variable_client.params if self._variable_client is not None else None
        action, self._key = self._select(params, self._key, observation, self._num_steps)
        self._num_steps += 1
        if self._policy_extras:
            action, extras = action
            self._extras = jax.tree.map(np.asarray, extras)
        return np.asarray(action)

    def observe_first(self, timestep: dm_env.TimeStep) -> None:
        if self._adder is not None:
            if self._episode_open:  # the previous episode was cut short (e.g. a step budget)
                self._adder.reset()
            self._adder.add_first(timestep)
            self._episode_open = True

    def observe(self, action: types.NestedArray, next_timestep: dm_env.TimeStep) -> None:
        if self._adder is not None:
            self._adder.add(action, next_timestep, self._extras)
            self._episode_open = not next_timestep.last()

    def update(self, wait: bool = False) -> None:
        if self._variable_client is not None:
            self._variable_client.update(wait)


class VectorActor:
    """Acts in K environments at once: one jitted policy call (``jax.vmap``) chooses all K actions.

    Environment ``i`` has its own random key, step count (exploration
    schedules follow it) and adder, so K environments driven by one
    ``VectorActor`` produce what K ``GenericActor``\\ s with the same keys would
    (an ``ExtrasPolicy``'s extras as there).
    """

    def __init__(
        self,
        policy: ActorPolicy | ExtrasPolicy,
        random_keys: Sequence[types.PRNGKey],
        variable_client: VariableClient | None,
        adders: Sequence[Adder | None] | None = None,
        backend: str | None = "cpu",
    ):
        if len(random_keys) < 1:
            raise ValueError("random_keys must hold one key per environment (at least one).")
        if adders is not None and len(adders) != len(random_keys):
            raise ValueError(f"Give one adder per environment: {len(random_keys)} keys but {len(adders)} adders.")
        policy, self._policy_extras = _unwrap(policy)

        def select(params, key, observation, step):
            key, policy_key = jax.random.split(key)
            return policy(params, policy_key, observation, step), key

        self._select = _Placed(jax.jit(jax.vmap(select, in_axes=(None, 0, 0, 0))), backend)
        self._keys = self._select.place(jnp.stack([jnp.asarray(k) for k in random_keys]))
        self._variable_client = variable_client
        self._adders = list(adders) if adders is not None else [None] * len(random_keys)
        self._extras = ()
        self._steps = np.zeros(len(random_keys), np.int32)
        self._episode_open = [False] * len(random_keys)

    @property
    def num_envs(self) -> int:
        return len(self._adders)

    @property
    def num_steps(self) -> int:
        """Steps taken over all environments."""
        return int(self._steps.sum())

    def save(self) -> dict:
        """Each environment's step count and random key."""
        return {"num_steps": self._steps.copy(), "key": np.asarray(jax.device_get(self._keys))}

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
            self._keys = self._select.place(np.asarray(state["key"]))

    def select_actions(self, observations: types.NestedArray) -> np.ndarray:
        """Actions for a batch of K observations (leaves ``[K, ...]``), one per environment."""
        params = self._variable_client.params if self._variable_client is not None else None
        actions, self._keys = self._select(params, self._keys, observations, self._steps)
        # A new array, not += : on CPU jax may read a numpy argument in place after the call has returned.
        self._steps = self._steps + 1
        if self._policy_extras:
            actions, extras = actions
            self._extras = jax.tree.map(np.asarray, extras)
        return np.asarray(actions)

    def observe_first(self, index: int, timestep: dm_env.TimeStep) -> None:
        adder = self._adders[index]
        if adder is not None:
            if self._episode_open[index]:  # the previous episode was cut short
                adder.reset()
            adder.add_first(timestep)
            self._episode_open[index] = True

    def observe(self, index: int, action: types.NestedArray, next_timestep: dm_env.TimeStep) -> None:
        adder = self._adders[index]
        if adder is not None:
            extras = jax.tree.map(lambda x: x[index], self._extras) if self._policy_extras else ()
            adder.add(action, next_timestep, extras)
            self._episode_open[index] = not next_timestep.last()

    def update(self, wait: bool = False) -> None:
        if self._variable_client is not None:
            self._variable_client.update(wait)


class RecurrentPolicy(NamedTuple):
    """A policy with a recurrent state carried across an episode's steps.

    ``policy(params, key, observation, core_state, actor_step) -> (action, extras, new_core_state)`` for one
    unbatched observation; ``initial_state(params)`` is the state at an episode's start. ``extras`` (a dict,
    maybe empty) goes to the adder.
    """

    policy: Callable
    initial_state: Callable


class RecurrentActor(GenericActor):
    """Acts with a ``RecurrentPolicy``, carrying its state across steps and resetting it at episode starts.

    The adder receives, with every action, the policy's extras and
    ``extras["core_state"]``: the recurrent state the action was chosen from
    (so a learner can start unrolling a stored sequence from its first step's
    state). Policy and key split run in one jitted call per step. Saved
    state is ``GenericActor``'s (a recurrent state is not kept across a
    restart: the episode restarts).
    """

    def __init__(
        self,
        policy: RecurrentPolicy,
        random_key: types.PRNGKey,
        variable_client: VariableClient | None,
        adder: Adder | None = None,
        backend: str | None = "cpu",
    ):
        def select(params, key, observation, core_state, step):
            key, policy_key = jax.random.split(key)
            action, extras, core_state = policy.policy(params, policy_key, observation, core_state, step)
            return action, extras, core_state, key

        super().__init__(policy.policy, random_key, variable_client, adder, backend)
        self._select = _Placed(jax.jit(select), backend)
        self._key = self._select.place(random_key)
        self._initial_state = jax.jit(policy.initial_state)
        self._core_state = None

    def _params(self):
        return self._variable_client.params if self._variable_client is not None else None

    def select_action(self, observation: types.NestedArray) -> np.ndarray:
        if self._core_state is None:
            self._core_state = self._initial_state(self._params())
        action, extras, new_state, self._key = self._select(
            self._params(), self._key, observation, self._core_state, self._num_steps
        )
        self._extras = {**jax.tree.map(np.asarray, extras), "core_state": jax.tree.map(np.asarray, self._core_state)}
        self._core_state = new_state
        self._num_steps += 1
        return np.asarray(action)

    def observe_first(self, timestep: dm_env.TimeStep) -> None:
        self._core_state = None  # a new episode starts from the initial state
        super().observe_first(timestep)


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

    As with ``RecurrentActor``, the adder of environment ``i`` receives ``extras["core_state"]``: the state its
    action was chosen from. K environments produce what K ``RecurrentActor``\\ s with the same keys would.
    """

    def __init__(
        self,
        policy: RecurrentPolicy,
        random_keys: Sequence[types.PRNGKey],
        variable_client: VariableClient | None,
        adders: Sequence[Adder | None] | None = None,
        backend: str | None = "cpu",
    ):
        super().__init__(policy.policy, random_keys, variable_client, adders, backend)
        select = jax.vmap(recurrent_select_with_reset(policy), in_axes=(None, 0, 0, 0, 0, 0))
        self._select = _Placed(jax.jit(select), backend)
        self._keys = self._select.place(self._keys)
        self._initial_state = jax.jit(policy.initial_state)
        self._core_state = None
        self._reset = np.ones(self.num_envs, bool)

    def select_actions(self, observations: types.NestedArray) -> np.ndarray:
        params = self._variable_client.params if self._variable_client is not None else None
        if self._core_state is None:  # each environment's slot is reset before its first step
            self._core_state = jax.tree.map(
                lambda x: jnp.zeros((self.num_envs, *x.shape), x.dtype), self._initial_state(params)
            )
        actions, extras, self._core_state, self._keys = self._select(
            params, self._keys, observations, self._core_state, self._reset, self._steps
        )
        # New arrays, not in-place updates: on CPU jax may read numpy arguments in place after the call returned.
        self._reset = np.zeros(self.num_envs, bool)
        self._steps = self._steps + 1
        self._extras = jax.tree.map(np.asarray, extras)
        return np.asarray(actions)

    def observe_first(self, index: int, timestep: dm_env.TimeStep) -> None:
        self._reset[index] = True  # a new episode starts from the initial state
        super().observe_first(index, timestep)

    def observe(self, index: int, action: types.NestedArray, next_timestep: dm_env.TimeStep) -> None:
        adder = self._adders[index]
        if adder is not None:
            adder.add(action, next_timestep, jax.tree.map(lambda x: x[index], self._extras))
            self._episode_open[index] = not next_timestep.last()
