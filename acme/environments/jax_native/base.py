"""The functional interface of a JAX-native environment: pure ``reset`` and ``step`` that jit, vmap and scan.

``reset(key) -> (state, timestep)`` and ``step(state, action) -> (state, timestep)``
with dm_env's meaning: step types FIRST, MID, LAST; discount 0 at termination
and 1 at truncation (a step limit); reward 0 and discount 1 on FIRST. A step
taken from a LAST timestep ignores its action and starts the next episode
(automatic reset), so a scan over steps never stops.

A subclass writes only its dynamics: ``initial(key)`` (a new episode's physics
and observation) and ``transition(physics, action, key)`` (the next physics,
observation, reward and whether the episode terminated); one whose library
cuts episodes short by its own rules also writes ``truncated(physics)``.
"""

from __future__ import annotations

import abc
from typing import Any, NamedTuple

import dm_env
import jax
import jax.numpy as jnp

from acme import specs

FIRST, MID, LAST = (int(t) for t in (dm_env.StepType.FIRST, dm_env.StepType.MID, dm_env.StepType.LAST))


class TimeStep(NamedTuple):
    """dm_env's timestep as arrays (a batch of them under vmap)."""

    step_type: jax.Array
    reward: jax.Array
    discount: jax.Array
    observation: Any


def strongly_typed(tree: Any) -> Any:
    """``tree`` with every leaf an array of its own dtype, none weakly typed. A library's state can hold a leaf
    weakly typed after its reset and strongly after its step (Brax's reward, Craftax's player direction, Navix's
    return): the state a step returned then had other types than the one it took, and a jitted step compiled a
    second time on its second call (5-11 s on one core for Brax, Craftax and Navix)."""
    return jax.tree.map(lambda leaf: jax.lax.convert_element_type(leaf, jnp.result_type(leaf)), tree)


class State(NamedTuple):
    """What an environment carries from one step to the next."""

    physics: Any
    key: jax.Array
    steps: jax.Array  # steps taken in this episode
    step_type: jax.Array  # of the timestep last returned


class JaxEnvironment(abc.ABC):
    """A JAX-native environment; see the module docstring."""

    def __init__(self, max_episode_steps: int):
        if isinstance(max_episode_steps, bool) or not isinstance(max_episode_steps, int) or max_episode_steps < 1:
            raise ValueError(f"max_episode_steps must be an integer >= 1, got {max_episode_steps!r}.")
        self.max_episode_steps = max_episode_steps

    @abc.abstractmethod
    def spec(self) -> specs.EnvironmentSpec:
        """The specs of observations, actions, rewards and discounts (as the host environment's)."""

    @abc.abstractmethod
    def initial(self, key: jax.Array) -> tuple[Any, Any]:
        """``(physics, observation)`` at the start of an episode."""

    @abc.abstractmethod
    def transition(self, physics: Any, action: jax.Array, key: jax.Array) -> tuple[Any, Any, jax.Array, jax.Array]:
        """``(physics, observation, reward, terminated)`` after ``action``."""

    def truncated(self, physics: Any) -> jax.Array:
        """Whether the episode was cut short (discount 1) after the step to ``physics``, by a rule of the
        environment's own besides ``max_episode_steps``; none by default."""
        del physics
        return jnp.bool_(False)

    def reset(self, key: jax.Array) -> tuple[State, TimeStep]:
        """Starts an episode."""
        key, initial_key = jax.random.split(key)
        physics, observation = self.initial(initial_key)
        return State(strongly_typed(physics), key, jnp.int32(0), jnp.int32(FIRST)), self._first(observation)

    def step(self, state: State, action: jax.Array) -> tuple[State, TimeStep]:
        """One step; from a LAST timestep, the first timestep of the next episode instead."""
        key, transition_key, reset_key = jax.random.split(state.key, 3)
        return self._step_from(state, action, key, transition_key, self.initial(reset_key))

    def step_batch(self, states: State, actions: jax.Array, max_starts: int | None = None) -> tuple[State, TimeStep]:
        """``step`` for a batch of environments (the leading axis of ``states`` and ``actions``).

        ``max_starts=None`` is ``vmap(step)``, which computes every environment's next episode start at every step
        (under vmap the automatic reset is a select). With ``max_starts`` K, only K starts are computed a step: the
        k-th environment to restart in this step (k < K) gets the very start ``step`` gives it, and one beyond the
        K-th starts from a copy of the (k mod K)-th's. For environments whose start costs far more than a step
        (Craftax generates a world); exact whenever at most K environments restart together.
        """
        if max_starts is None:
            return jax.vmap(self.step)(states, actions)
        if isinstance(max_starts, bool) or not isinstance(max_starts, int) or max_starts < 1:
            raise ValueError(f"max_starts must be an integer >= 1 or None, got {max_starts!r}.")
        num_envs = states.step_type.shape[0]
        keys = jax.vmap(lambda k: jax.random.split(k, 3))(states.key)
        key, transition_key, reset_key = keys[:, 0], keys[:, 1], keys[:, 2]
        restart = states.step_type == LAST
        rank = jnp.cumsum(restart.astype(jnp.int32)) - 1  # among this step's restarting environments
        owners = (
            jnp.zeros((max_starts,), jnp.int32)
            .at[jnp.where(restart & (rank < max_starts), rank, max_starts)]
            .set(jnp.arange(num_envs, dtype=jnp.int32), mode="drop")
        )
        starts = jax.vmap(self.initial)(reset_key[owners])
        mine = jax.tree.map(lambda leaf: leaf[rank % max_starts], starts)
        return jax.vmap(self._step_from)(states, actions, key, transition_key, mine)

    def _step_from(
        self, state: State, action: jax.Array, key: jax.Array, transition_key: jax.Array, start: tuple[Any, Any]
    ) -> tuple[State, TimeStep]:
        """``step`` given its keys and the next episode's ``(physics, observation)``, used from a LAST state."""
        advanced, stepped = self._advance(state, action, transition_key)
        restarted_physics, restarted_observation = start
        restart = state.step_type == LAST
        choose = lambda new, old: jax.tree.map(lambda a, b: jnp.where(restart, a, b), new, old)  # noqa: E731
        timestep = choose(self._first(restarted_observation), stepped)
        next_state = State(
            physics=choose(restarted_physics, advanced.physics),
            key=key,
            steps=jnp.where(restart, 0, advanced.steps).astype(jnp.int32),
            step_type=timestep.step_type,
        )
        return next_state, timestep

    def advance(self, state: State, action: jax.Array) -> tuple[State, TimeStep]:
        """One step within an episode: ``step`` for a state that is not LAST, without computing the next episode's
        start (under ``vmap`` ``step`` computes it for every environment at every step; the host, which starts
        episodes with ``reset``, need not)."""
        key, transition_key, _ = jax.random.split(state.key, 3)
        advanced, timestep = self._advance(state, action, transition_key)
        return advanced._replace(key=key), timestep

    def _advance(self, state: State, action: jax.Array, key: jax.Array) -> tuple[State, TimeStep]:
        physics, observation, reward, terminated = self.transition(state.physics, action, key)
        steps = state.steps + 1
        last = terminated | self.truncated(physics) | (steps >= self.max_episode_steps)
        timestep = TimeStep(
            step_type=jnp.where(last, LAST, MID).astype(jnp.int32),
            reward=jnp.asarray(reward, self.spec().rewards.dtype),
            discount=jnp.where(terminated, 0.0, 1.0).astype(self.spec().discounts.dtype),
            observation=observation,
        )
        return State(strongly_typed(physics), state.key, steps.astype(jnp.int32), timestep.step_type), timestep

    def _first(self, observation: Any) -> TimeStep:
        spec = self.spec()
        return TimeStep(
            step_type=jnp.int32(FIRST),
            reward=jnp.zeros((), spec.rewards.dtype),
            discount=jnp.ones((), spec.discounts.dtype),
            observation=observation,
        )
