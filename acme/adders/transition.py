"""An adder that writes n-step transitions to Reverb."""

from __future__ import annotations

import collections
import math
from typing import Any

import dm_env
import numpy as np
import tree

from acme import specs, types
from acme.adders import base, writer

_REWARD = "n_step_reward"
_DISCOUNT = "n_step_discount"


def _n_step_dtype(dtype) -> np.dtype:
    """The dtype of a computed n-step quantity: the input's if floating, else float32."""
    dtype = np.dtype(getattr(dtype, "as_numpy_dtype", dtype))
    return dtype if np.issubdtype(dtype, np.floating) else np.dtype(np.float32)


def _n_step_spec(spec, discount_spec=None) -> base.LeafSpec:
    """The ``LeafSpec`` of a computed n-step quantity: ``spec`` broadcast against ``discount_spec``."""
    shape = tuple(spec.shape)
    if discount_spec is not None:
        try:
            shape = np.broadcast_shapes(shape, tuple(discount_spec.shape))
        except ValueError:
            raise ValueError(
                f"The reward spec's shape {shape} does not broadcast against the discount spec's shape "
                f"{tuple(discount_spec.shape)}; the n-step reward is their broadcast (e.g. reward () with "
                "discount (2,), or (1, 2) with (2, 2))."
            ) from None
    return base.LeafSpec(shape, _n_step_dtype(spec.dtype))


class NStepTransitionAdder(writer.ReverbAdder):
    r"""Writes one n-step transition per environment step.

    Each item is an ``acme.types.Transition`` with no time dimension::

        Transition(observation, action, reward, discount, next_observation, extras)

    For the transition that starts at step ``t`` of an episode of ``T`` steps,
    let ``m = min(n_step, T - t)``, ``r_{t+1..t+m}`` and ``d_{t+1..t+m}`` be the
    rewards and environment discounts of the timesteps that followed, and
    ``gamma`` the agent's ``discount``. Then

    * ``observation`` is ``o_t``, ``action`` is ``a_t``, ``extras`` are the
      extras passed with ``a_t``;
    * ``reward = sum_{k=0}^{m-1} gamma^k (prod_{j=1}^{k} d_{t+j}) r_{t+k+1}``;
    * ``discount = gamma^m prod_{j=1}^{m} d_{t+j}``;
    * ``next_observation`` is ``o_{t+m}``.

    A learner's target is therefore ``reward + discount * V(next_observation)``
    with no further factor of gamma. A termination (environment discount 0)
    gives ``discount == 0`` for every transition that reaches it; a truncated
    episode (last timestep with discount 1, e.g. a time limit) keeps a non-zero
    discount and bootstraps from the last observation.

    An episode of ``T`` steps yields exactly ``T`` transitions: the transition
    starting at ``t`` is written as soon as ``o_{t+n}`` is known, and the last
    ``min(n, T)`` transitions (with ``m <= n``) are written when the episode's
    last timestep arrives. Transitions never span two episodes.

    Rewards and discounts may be nests of arrays; the discount must either have
    the reward's structure or be a single array that applies to every reward
    leaf. Each computed reward has its reward leaf's shape broadcast against its
    discount's (reward ``()`` with discount ``(2,)`` gives ``(2,)``), each
    computed discount its discount's shape; ``signature`` describes exactly
    that. The computed reward and discount keep the input dtypes when they are
    floating point and are float32 otherwise.

    Storage: each environment step is one ``writer.append`` of the new
    observation, the action that led to it, its extras and one computed
    (reward, discount) pair; transitions reference the observation column for
    both ``observation`` and ``next_observation``, so observations are stored
    once. At the end of an episode up to ``n_step - 1`` extra rows hold the
    remaining computed pairs.

    Args:
      client: a ``reverb.Client`` or a ``LocalReplay`` (the same items either way).
      n_step: the number of steps ``n`` to accumulate (>= 1; 1 gives ordinary
        one-step transitions).
      discount: the agent's discount ``gamma``, in [0, 1].
      priority_fns: replay table name -> priority function of the transition
        (a ``Transition`` of numpy arrays) or None for priority 1.0.
      max_in_flight_items: items that may await the server before ``add``
        blocks.
      validate_items: check items against the tables' signatures.
    """

    def __init__(
        self,
        client,
        n_step: int,
        discount: float,
        priority_fns: base.PriorityFns,
        max_in_flight_items: int = 5,
        validate_items: bool = True,
    ):
        n_step = base.check_positive_int("n_step", n_step)
        try:
            gamma = float(discount)
        except (TypeError, ValueError):
            raise ValueError(f"discount must be a number in [0, 1] (the agent's gamma), got {discount!r}.") from None
        if not math.isfinite(gamma) or not 0.0 <= gamma <= 1.0:
            raise ValueError(f"discount must be a number in [0, 1] (the agent's gamma), got {discount!r}.")
        super().__init__(
            client,
            priority_fns=priority_fns,
            max_in_flight_items=max_in_flight_items,
            # A transition spans rows t .. t + n of the writer's history.
            num_keep_alive_refs=n_step + 1,
            validate_items=validate_items,
        )
        self._n_step = n_step
        self._gamma = gamma
        self._reset_state()

    @property
    def n_step(self) -> int:
        return self._n_step

    @property
    def discount(self) -> float:
        return self._gamma

    # ------------------------------------------------------------ signature

    @staticmethod
    def signature(environment_spec: specs.EnvironmentSpec, extras_spec: Any = ()):
        """The backend-free signature of the items (a ``Transition`` of ``LeafSpec``), for a ``TableSpec``.

        It describes what the adder writes: each n-step reward has the shape
        of its reward leaf broadcast against its discount (e.g. reward ``()``
        with discount ``(2,)`` gives ``(2,)``), and a floating dtype.
        """
        obs = base.nested_leaf_spec(environment_spec.observations)
        rewards, discounts = environment_spec.rewards, environment_spec.discounts
        if NStepTransitionAdder._check_structures(rewards, discounts):
            reward = tree.map_structure(lambda r: _n_step_spec(r, discounts), rewards)
        else:
            reward = tree.map_structure(_n_step_spec, rewards, discounts)
        return types.Transition(
            observation=obs,
            action=base.nested_leaf_spec(environment_spec.actions),
            reward=reward,
            discount=tree.map_structure(_n_step_spec, discounts),
            next_observation=obs,
            extras=base.nested_leaf_spec(extras_spec),
        )

    # ------------------------------------------------------------ internals

    def _reset_state(self) -> None:
        self._steps = 0  # environment steps taken in the current episode
        self._rows = 0  # rows appended to the writer in the current episode
        self._next_start = 0  # first step whose transition is not yet written
        self._recent = collections.deque(maxlen=self._n_step)  # (r_k, d_k) pairs
        self._discount_broadcasts: bool | None = None
        self._flat_values: bool | None = None

    def _on_first(self, timestep: dm_env.TimeStep) -> None:
        self._reset_state()
        self._writer.append({"observation": timestep.observation})
        self._rows = 1

    def _on_step(self, action, next_timestep: dm_env.TimeStep, extras) -> None:
        self._recent.append((next_timestep.reward, next_timestep.discount))
        self._steps += 1
        # Row k + 1 holds o_{k+1} with the action a_k and extras that led to it.
        row = {"observation": next_timestep.observation, "action": action, "extras": extras}
        start = self._next_start
        ready = self._steps - start >= self._n_step or next_timestep.last()
        if ready:
            length = min(self._n_step, self._steps - start)
            row.update(self._n_step_values(length))
        self._writer.append(row)
        self._rows += 1
        if ready:
            self._write_transition(start, length)

    def _on_last(self) -> None:
        # The last timestep's row carried the first of the remaining transitions;
        # each further one gets a row holding only its computed reward/discount.
        while self._next_start < self._steps:
            length = self._steps - self._next_start
            self._writer.append(self._n_step_values(length))
            self._rows += 1
            self._write_transition(self._next_start, length)

    def _n_step_values(self, length: int) -> dict:
        """The n-step reward and discount over the last ``length`` steps."""
        pairs = list(self._recent)[-length:]
        first_reward, first_discount = pairs[0]
        if self._discount_broadcasts is None:
            self._discount_broadcasts = self._check_structures(first_reward, first_discount)

        if self._flat_values is None:
            self._flat_values = not tree.is_nested(first_reward) and not tree.is_nested(first_discount)
        if self._flat_values:  # fast path: one reward array and one discount array, summed in float64
            if np.ndim(first_reward) == 0 and np.ndim(first_discount) == 0:  # scalars: Python floats are float64
                total, factor = 0.0, 1.0
                for reward, env_discount in pairs:
                    total += factor * float(reward)
                    factor = factor * self._gamma * float(env_discount)
            else:
                total, factor = np.zeros(np.shape(first_reward)), np.ones(np.shape(first_discount))
                for reward, env_discount in pairs:
                    total = total + factor * reward
                    factor = factor * self._gamma * env_discount
            return {
                _REWARD: np.asarray(total, _n_step_dtype(np.asarray(first_reward).dtype)),
                _DISCOUNT: np.asarray(factor, _n_step_dtype(np.asarray(first_discount).dtype)),
            }

        total = tree.map_structure(lambda r: np.zeros(np.shape(r), np.float64), first_reward)
        factor = tree.map_structure(lambda d: np.ones(np.shape(d), np.float64), first_discount)
        for reward, env_discount in pairs:
            if self._discount_broadcasts:
                total = tree.map_structure(lambda acc, r: acc + factor * np.asarray(r, np.float64), total, reward)
            else:
                total = tree.map_structure(lambda acc, f, r: acc + f * np.asarray(r, np.float64), total, factor, reward)
            factor = tree.map_structure(lambda f, d: f * self._gamma * np.asarray(d, np.float64), factor, env_discount)
        reward_out = tree.map_structure(
            lambda acc, r: acc.astype(_n_step_dtype(np.asarray(r).dtype)), total, first_reward
        )
        discount_out = tree.map_structure(
            lambda f, d: f.astype(_n_step_dtype(np.asarray(d).dtype)), factor, first_discount
        )
        return {_REWARD: reward_out, _DISCOUNT: discount_out}

    @staticmethod
    def _check_structures(reward, discount) -> bool:
        """True if one discount applies to every reward leaf, False if they pair up."""
        if not tree.is_nested(discount):
            return True
        try:
            tree.assert_same_structure(reward, discount)
        except (ValueError, TypeError) as e:
            raise ValueError(
                "The timestep's discount must be a single array or have the same "
                f"structure as its reward; got reward {reward!r} and discount {discount!r}."
            ) from e
        return False

    def _write_transition(self, start: int, length: int) -> None:
        """Creates the transition from step ``start`` over ``length`` steps.

        Its computed reward/discount are in the last appended row.
        """
        history = self._writer.history
        values_row = self._rows - 1

        def at(columns, index):
            if not tree.is_nested(columns):  # fast path: a single column
                return columns[index]
            if not columns:  # no extras
                return columns
            return tree.map_structure(lambda column: column[index], columns)

        transition = types.Transition(
            observation=at(history["observation"], start),
            action=at(history["action"], start + 1),
            reward=at(history[_REWARD], values_row),
            discount=at(history[_DISCOUNT], values_row),
            next_observation=at(history["observation"], start + length),
            extras=at(history["extras"], start + 1),
        )
        self._create_item(transition)
        self._next_start = start + 1
