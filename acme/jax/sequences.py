"""On-policy targets over the sequences a ``SequenceAdder`` writes with episodes joined in one stream.

With ``break_end_of_episode=False`` a sequence of ``T + 1`` steps may hold the
end of one episode and the start of the next. An episode's final timestep
becomes a step of its own (its observation, with zero action, reward and
discount) and the next step starts a new episode. So step ``t < T`` is a
*final* step exactly when step ``t + 1`` has ``start_of_episode``; a final
step was not acted on, so it carries no loss, and returns must not flow across
it from the next episode. The last step of a sequence only supplies the value
to bootstrap from (consecutive sequences overlap by that one step).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import rlax


def final_steps(start_of_episode: jnp.ndarray) -> jnp.ndarray:
    """``[..., T]`` booleans: step ``t`` of a ``[..., T + 1]`` sequence is an episode's final step."""
    return start_of_episode[..., 1:]


def generalized_advantages(
    rewards: jnp.ndarray,
    discounts: jnp.ndarray,
    values: jnp.ndarray,
    is_final: jnp.ndarray,
    lambda_: float,
) -> jnp.ndarray:
    """GAE(lambda) advantages ``[T]`` of one stream of steps; 0 at final steps.

    ``rewards[t]`` and ``discounts[t]`` (the agent's discount times the
    environment's) follow the action at step ``t``; ``values`` has ``T + 1``
    entries, the last to bootstrap from. With
    ``delta_t = r_t + discount_t V_{t+1} - V_t``,
    ``A_t = delta_t + discount_t lambda A_{t+1}`` (rlax's truncated GAE). A
    final step gets ``A_t = 0`` (by giving rlax ``r_t = V_t`` and
    ``discount_t = 0`` there), so the step before it bootstraps from the final
    observation's value (a time limit) or not at all (a termination, discount
    0), and nothing of the next episode leaks back.
    """
    rewards = jnp.where(is_final, values[:-1], rewards)
    discounts = jnp.where(is_final, 0.0, discounts)
    return rlax.truncated_generalized_advantage_estimation(rewards, discounts, lambda_, values)


def batched_generalized_advantages(
    rewards: jnp.ndarray,
    discounts: jnp.ndarray,
    values: jnp.ndarray,
    is_final: jnp.ndarray,
    lambda_: float,
) -> jnp.ndarray:
    """``generalized_advantages`` over a batch: leaves ``[B, T]`` (values ``[B, T + 1]``)."""
    return jax.vmap(generalized_advantages, in_axes=(0, 0, 0, 0, None))(rewards, discounts, values, is_final, lambda_)


def lambda_returns(
    rewards: jnp.ndarray,
    discounts: jnp.ndarray,
    values: jnp.ndarray,
    is_final: jnp.ndarray,
    lambda_: float,
) -> jnp.ndarray:
    """lambda-returns ``[T]`` of one stream of steps (rlax's ``lambda_returns``); a final step's is its own value.

    ``G_t = r_t + discount_t ((1 - lambda) V_{t+1} + lambda G_{t+1})``, the last
    step bootstrapping from ``V_T``: with ``V_t = max_a Q(x_t, a)`` these are
    Peng's Q(lambda) targets (PQN's). ``values`` has ``T + 1`` entries. A final
    step gets ``G_t = V_t`` (reward ``V_t``, discount 0), so the step before it
    bootstraps from the final observation's value (a time limit) or not at all
    (a termination, discount 0), and nothing of the next episode leaks back.
    """
    rewards = jnp.where(is_final, values[:-1], rewards)
    discounts = jnp.where(is_final, 0.0, discounts)
    return rlax.lambda_returns(rewards, discounts, values[1:], lambda_)


def batched_lambda_returns(
    rewards: jnp.ndarray,
    discounts: jnp.ndarray,
    values: jnp.ndarray,
    is_final: jnp.ndarray,
    lambda_: float,
) -> jnp.ndarray:
    """``lambda_returns`` over a batch: leaves ``[B, T]`` (values ``[B, T + 1]``)."""
    return jax.vmap(lambda_returns, in_axes=(0, 0, 0, 0, None))(rewards, discounts, values, is_final, lambda_)


def masked_mean(x: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
    """The mean of ``x`` where ``mask`` is true (0 where it is nowhere true)."""
    mask = mask.astype(x.dtype)
    return jnp.sum(x * mask) / jnp.maximum(jnp.sum(mask), 1.0)


def vtrace(
    values: jnp.ndarray,
    rewards: jnp.ndarray,
    discounts: jnp.ndarray,
    rhos: jnp.ndarray,
    is_final: jnp.ndarray,
    lambda_: float = 1.0,
    clip_rho_threshold: float = 1.0,
    clip_pg_rho_threshold: float = 1.0,
) -> Any:
    """V-trace over one stream of steps (rlax's ``vtrace_td_error_and_advantage``), with final steps cut out.

    ``values`` has ``T + 1`` entries; ``rewards``, ``discounts`` and the
    importance weights ``rhos = pi(a_t|x_t) / mu(a_t|x_t)`` have ``T``. At a
    final step the temporal difference is made 0 (reward ``V_t``, discount 0,
    as in ``generalized_advantages``), so its target is its own value and
    nothing flows across the episode boundary. Targets carry no gradient.
    Returns ``errors`` (``v_s - V_t``), ``pg_advantage`` and ``q_estimate``.
    """
    rewards = jnp.where(is_final, jax.lax.stop_gradient(values[:-1]), rewards)
    discounts = jnp.where(is_final, 0.0, discounts)
    rhos = jnp.where(is_final, 1.0, rhos)
    return rlax.vtrace_td_error_and_advantage(
        values[:-1], values[1:], rewards, discounts, rhos, lambda_, clip_rho_threshold, clip_pg_rho_threshold
    )


def batched_vtrace(
    values: jnp.ndarray,
    rewards: jnp.ndarray,
    discounts: jnp.ndarray,
    rhos: jnp.ndarray,
    is_final: jnp.ndarray,
    lambda_: float = 1.0,
    clip_rho_threshold: float = 1.0,
    clip_pg_rho_threshold: float = 1.0,
) -> Any:
    """``vtrace`` over a batch: leaves ``[B, T]`` (values ``[B, T + 1]``)."""
    return jax.vmap(vtrace, in_axes=(0, 0, 0, 0, 0, None, None, None))(
        values, rewards, discounts, rhos, is_final, lambda_, clip_rho_threshold, clip_pg_rho_threshold
    )
