"""A deterministic fake environment, for tests of adders, loops and agents.

Every observation leaf of timestep ``t`` of an episode (``t = 0`` for the
first timestep) is filled with ``t``, so a test can tell exactly which step of
an episode ended up where.
"""

from __future__ import annotations

from typing import Any, Callable

import dm_env
import numpy as np
import tree

from acme import specs


def discrete_spec(obs_shape: tuple = (4,), num_actions: int = 2) -> specs.EnvironmentSpec:
    """Float32 observations of ``obs_shape`` and ``num_actions`` discrete actions."""
    return specs.EnvironmentSpec(
        observations=specs.Array(tuple(obs_shape), np.float32, name="observation"),
        actions=specs.DiscreteArray(num_actions, dtype=np.int32, name="action"),
        rewards=specs.Array((), np.float32, name="reward"),
        discounts=specs.BoundedArray((), np.float32, 0.0, 1.0, name="discount"),
    )


def continuous_spec(obs_shape: tuple = (3,), action_dim: int = 1) -> specs.EnvironmentSpec:
    """Float32 observations of ``obs_shape`` and float32 actions in [-1, 1]^action_dim."""
    return specs.EnvironmentSpec(
        observations=specs.Array(tuple(obs_shape), np.float32, name="observation"),
        actions=specs.BoundedArray((action_dim,), np.float32, -1.0, 1.0, name="action"),
        rewards=specs.Array((), np.float32, name="reward"),
        discounts=specs.BoundedArray((), np.float32, 0.0, 1.0, name="discount"),
    )


def _filled(spec, value) -> np.ndarray:
    return np.full(spec.shape, value, dtype=spec.dtype)


class FakeEnvironment(specs.SpecEnvironment):
    """A deterministic environment with fixed-length episodes.

    Episodes have ``episode_length`` steps: timesteps ``0 .. episode_length``,
    the first from ``reset()``. At timestep ``t``:

    * every observation leaf is filled with ``t`` (cast to the leaf's dtype;
      bounds of the observation spec are not respected);
    * for ``t >= 1`` the reward (every leaf) is ``reward_fn(t)``, by default
      ``float(t)``; the first timestep's reward and discount are None;
    * for ``1 <= t < episode_length`` the discount is ``discount_fn(t)``, by
      default 1.0;
    * the last timestep (``t == episode_length``) is a termination with
      discount 0 when ``truncate`` is False, or a truncation with discount
      ``discount_fn(t)`` (1.0 by default) when it is True.

    Actions are checked against the action spec (shape, bounds, and integer
    values for discrete actions; the dtype only needs to be castable). As with
    any dm_env environment, ``step`` before the first ``reset`` or after the
    last timestep starts a new episode.

    Args:
      spec: the environment's specs (observations may be nested).
      episode_length: environment steps per episode (>= 1).
      truncate: end episodes with a truncation (discount kept) instead of a
        termination.
      reward_fn: reward of timestep ``t``.
      discount_fn: environment discount of the non-terminal timestep ``t``.
      validate_actions: check the actions passed to ``step``.
    """

    def __init__(
        self,
        spec: specs.EnvironmentSpec,
        episode_length: int = 10,
        truncate: bool = False,
        reward_fn: Callable[[int], float] | None = None,
        discount_fn: Callable[[int], float] | None = None,
        validate_actions: bool = True,
    ):
        if isinstance(episode_length, bool) or not isinstance(episode_length, (int, np.integer)):
            raise ValueError(f"episode_length must be an integer >= 1, got {episode_length!r}.")
        if episode_length < 1:
            raise ValueError(f"episode_length must be an integer >= 1, got {episode_length}.")
        self._spec = spec
        self._episode_length = int(episode_length)
        self._truncate = bool(truncate)
        self._reward_fn = reward_fn if reward_fn is not None else float
        self._discount_fn = discount_fn if discount_fn is not None else (lambda t: 1.0)
        self._validate_actions = validate_actions
        self._t = 0
        self._needs_reset = True
        self.num_episodes = 0  # episodes started with reset()
        self.num_steps = 0  # steps taken over all episodes
        self.last_action: Any = None

    @property
    def episode_length(self) -> int:
        return self._episode_length

    @property
    def truncate(self) -> bool:
        return self._truncate

    def _observation(self, t: int):
        return tree.map_structure(lambda s: _filled(s, t), self._spec.observations)

    def _reward(self, t: int):
        value = self._reward_fn(t)
        return tree.map_structure(lambda s: _filled(s, value), self._spec.rewards)

    def _discount(self, value: float):
        return tree.map_structure(lambda s: _filled(s, value), self._spec.discounts)

    def reset(self) -> dm_env.TimeStep:
        self._t = 0
        self._needs_reset = False
        self.num_episodes += 1
        return dm_env.restart(self._observation(0))

    def step(self, action) -> dm_env.TimeStep:
        if self._needs_reset:
            return self.reset()
        if self._validate_actions:
            self._check_action(action)
        self.last_action = action
        self._t += 1
        self.num_steps += 1
        t = self._t
        observation, reward = self._observation(t), self._reward(t)
        if t < self._episode_length:
            return dm_env.transition(reward, observation, self._discount(self._discount_fn(t)))
        self._needs_reset = True
        discount = self._discount(self._discount_fn(t) if self._truncate else 0.0)
        return dm_env.TimeStep(dm_env.StepType.LAST, reward, discount, observation)

    def _check_action(self, action) -> None:
        try:
            tree.assert_same_structure(self._spec.actions, action)
        except (ValueError, TypeError) as e:
            raise ValueError(
                f"The action {action!r} does not have the structure of the action spec {self._spec.actions!r}."
            ) from e
        tree.map_structure(_check_leaf, self._spec.actions, action)


def _check_leaf(spec, value) -> None:
    array = np.asarray(value)
    if array.shape != tuple(spec.shape):
        raise ValueError(f"Action {value!r} has shape {array.shape}, the spec {spec!r} expects {tuple(spec.shape)}.")
    if isinstance(spec, specs.DiscreteArray) or np.issubdtype(spec.dtype, np.integer):
        if not (np.issubdtype(array.dtype, np.integer) or np.all(np.mod(array, 1) == 0)):
            raise ValueError(f"Action {value!r} must be integer-valued for the spec {spec!r}.")
    if isinstance(spec, specs.BoundedArray):
        if np.any(array < spec.minimum) or np.any(array > spec.maximum):
            raise ValueError(
                f"Action {value!r} is out of the bounds [{spec.minimum}, {spec.maximum}] of the spec {spec!r}."
            )
