"""Pieces every on-policy learner shares: its state, the policy-lag mask and metrics, the variables it serves.

Each step of a rollout records ``extras["policy_step"]``, the learner step of
the parameters that chose its action. At learner step ``L`` that step lags by
``L - policy_step``. With a ``max_policy_lag`` bound, a rollout whose oldest
acted step lags more is left out of the update and counted in
``dropped_rollouts``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import haiku as hk
import jax
import jax.numpy as jnp

from acme.jax.optimization import clipped_adam, gradient_step
from acme.jax.policy_value import PolicyValueNetworks, RecurrentPolicyValueNetworks
from acme.jax.running_statistics import ObservationNormalizer, RunningStatistics
from acme.jax.sequences import final_steps, masked_mean


class OnPolicyState(NamedTuple):
    params: Any  # {"policy": ..., "value": ...}, or {"network": ...} for a recurrent network
    opt_state: Any
    observation_stats: RunningStatistics
    steps: jnp.ndarray  # learner steps (batches of rollouts) taken
    random_key: jax.Array
    dropped_rollouts: jnp.ndarray  # rollouts left out for lagging more than max_policy_lag


def init_on_policy_state(
    networks: Any, config: Any, random_key: jax.Array, observation_spec: Any = None
) -> OnPolicyState:
    """The state before any update of ``networks.init``'s parameters; the optimiser is ``clipped_adam(config)``.
    The observation statistics follow ``observation_spec`` (default: ``networks.environment_spec.observations``,
    as ``PolicyValueNetworks`` hold it)."""
    init_key, random_key = jax.random.split(random_key)
    params = networks.init(init_key)
    if observation_spec is None:
        observation_spec = networks.environment_spec.observations
    return OnPolicyState(
        params=params,
        opt_state=clipped_adam(config).init(params),
        observation_stats=ObservationNormalizer(True).init(observation_spec),
        steps=jnp.zeros((), jnp.int32),
        random_key=random_key,
        dropped_rollouts=jnp.zeros((), jnp.int32),
    )


class LagMask(NamedTuple):
    """Which steps of a ``[B, T + 1]`` batch of rollouts the update learns from, and why."""

    is_final: jnp.ndarray  # [B, T]: episodes' final steps (no action was taken there)
    mask: jnp.ndarray  # [B, T]: acted steps of the rollouts kept
    kept: jnp.ndarray  # [B]: rollouts within the lag bound
    lag: jnp.ndarray  # [B, T]: learner steps each step's parameters lag by


def lag_mask(steps: jnp.ndarray, rollouts: Any, max_policy_lag: int | None) -> LagMask:
    """The ``LagMask`` of ``rollouts`` (a ``Step`` with ``extras["policy_step"]``) at learner step ``steps``."""
    unroll = rollouts.reward.shape[1] - 1
    is_final = final_steps(rollouts.start_of_episode)
    acted = ~is_final
    lag = steps - rollouts.extras["policy_step"][:, :unroll]
    if max_policy_lag is None:
        kept = jnp.ones(lag.shape[0], bool)
    else:
        kept = jnp.max(jnp.where(acted, lag, 0), axis=1) <= max_policy_lag
    return LagMask(is_final, acted & kept[:, None], kept, lag)


def lag_metrics(lags: LagMask, dropped_rollouts: jnp.ndarray) -> dict:
    """``policy_lag_mean`` and ``policy_lag_max`` over the acted steps received, ``trained_policy_lag_max`` over
    those learned from, and the running count of ``dropped_rollouts``."""
    acted = ~lags.is_final
    return {
        "policy_lag_mean": masked_mean(lags.lag.astype(jnp.float32), acted),
        "policy_lag_max": jnp.max(jnp.where(acted, lags.lag, 0)),
        "trained_policy_lag_max": jnp.max(jnp.where(lags.mask, lags.lag, 0)),
        "dropped_rollouts": dropped_rollouts,
    }


def next_on_policy_state(
    state: OnPolicyState, params: Any, opt_state: Any, stats: RunningStatistics, random_key: jax.Array, lags: LagMask
) -> tuple[OnPolicyState, dict]:
    """The state after one update (one more learner step, the rollouts past the lag bound counted) and its
    ``lag_metrics``."""
    dropped = state.dropped_rollouts + jnp.sum(~lags.kept).astype(jnp.int32)
    new_state = OnPolicyState(params, opt_state, stats, state.steps + 1, random_key, dropped)
    return new_state, lag_metrics(lags, dropped)


def minibatch_epochs(
    loss_fn,
    optimizer,
    params: Any,
    opt_state: Any,
    steps: Any,
    key: jax.Array,
    num_epochs: int,
    num_minibatches: int,
    stop_kl: float | jax.Array = 0.0,
) -> tuple[Any, Any, dict]:
    """``num_epochs`` passes over ``steps`` (leaves ``[N, ...]``), each shuffled and split into ``num_minibatches``
    minibatches with one optimiser step of ``loss_fn(params, minibatch) -> (loss, metrics)`` each.

    With ``stop_kl`` > 0 the passes stop early: from the first minibatch whose ``metrics["approx_kl"]`` (of the
    parameters before its step) exceeds it, no step is applied (the parameters and optimiser state stay as they
    were), and ``update_fraction`` reports the share of steps applied. Returns the new ``(params, opt_state)`` and
    the last minibatch's metrics (the last applied one's where the passes stopped, the first's where none was)."""
    num_steps = jax.tree.leaves(steps)[0].shape[0]
    early_stop = not (isinstance(stop_kl, (int, float)) and stop_kl <= 0)

    def minibatch_step(carry, batch):
        params, opt_state, stopped = carry
        (_, metrics), _, new_params, new_opt_state = gradient_step(loss_fn, optimizer, params, opt_state, batch)
        if not early_stop:
            return (new_params, new_opt_state, stopped), (metrics, True)
        stopped = stopped | ((stop_kl > 0) & (metrics["approx_kl"] > stop_kl))
        keep = lambda new, old: jax.tree.map(lambda n, o: jnp.where(stopped, o, n), new, old)  # noqa: E731
        return (keep(new_params, params), keep(new_opt_state, opt_state), stopped), (metrics, ~stopped)

    def epoch(carry, key):
        order = jax.random.permutation(key, num_steps)
        shuffled = jax.tree.map(lambda x: x[order].reshape((num_minibatches, -1, *x.shape[1:])), steps)
        return jax.lax.scan(minibatch_step, carry, shuffled)

    start = (params, opt_state, jnp.zeros((), bool))
    (params, opt_state, _), (metrics, applied) = jax.lax.scan(epoch, start, jax.random.split(key, num_epochs))
    if not early_stop:
        return params, opt_state, jax.tree.map(lambda x: x[-1, -1], metrics)
    # The applied steps are a prefix of the (epochs x minibatches) steps: the last applied one's metrics are at the
    # prefix's end (the first step's where none was applied).
    last = jnp.maximum(jnp.sum(applied) - 1, 0)
    metrics = jax.tree.map(lambda x: merge_leading(x)[last], metrics)
    return params, opt_state, {**metrics, "update_fraction": jnp.mean(applied)}


def merge_leading(x: jnp.ndarray, num: int = 2) -> jnp.ndarray:
    """``x`` with its first ``num`` dimensions merged into one."""
    return x.reshape((-1, *x.shape[num:]))


MAX_ROWS_PER_CALL = 65_536  # observations one network call of apply_over_time takes at most


def apply_over_time(apply, params: Any, observations: Any) -> Any:
    """``apply(params, observations)`` for observations ``[B, T, ...]``: the network sees ``[B * T, ...]``, or,
    past ``MAX_ROWS_PER_CALL`` rows, one ``[B, ...]`` step at a time (a ``lax.map`` over T), so that its
    activations are those of one step: 4,096 rollouts of 129 MinAtar boards through the small torso's patches
    took 31 GB for three seeds at once."""
    batch, time = jax.tree.leaves(observations)[0].shape[:2]
    if batch * time <= MAX_ROWS_PER_CALL:
        output = apply(params, jax.tree.map(merge_leading, observations))
        return jax.tree.map(lambda x: x.reshape((batch, time, *x.shape[1:])), output)
    by_time = jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), observations)
    output = jax.lax.map(lambda step: apply(params, step), by_time)  # [T, B, ...]
    return jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), output)


def policy_value_over_time(
    networks: PolicyValueNetworks | RecurrentPolicyValueNetworks, params: Any, rollouts: Any, observations: Any
) -> tuple[Any, jnp.ndarray]:
    """The policy outputs and values ``[B, T + 1]`` of a batch of rollouts' (normalised) ``observations``.

    A recurrent network starts each rollout from the state its actor stored at the rollout's first step
    (``extras["core_state"]``) and is reset at every episode start within it.
    """
    if isinstance(networks, RecurrentPolicyValueNetworks):
        first_state = jax.tree.map(lambda x: x[:, 0], rollouts.extras["core_state"])
        return unroll_over_time(networks, params, observations, rollouts.start_of_episode, first_state)
    return apply_over_time(networks.policy_and_value, params, observations)


def unroll_over_time(
    networks: RecurrentPolicyValueNetworks,
    params: Any,
    observations: Any,
    start_of_episode: jnp.ndarray,
    first_state: dict,
) -> tuple[Any, jnp.ndarray]:
    """The policy outputs and values ``[B, T]`` of a recurrent network over ``observations`` ``[B, T, ...]``,
    from ``first_state`` (``{"hidden", "cell"}``, leaves ``[B, lstm_size]``: what the actors stored at the first
    step), reset at every step where ``start_of_episode`` ``[B, T]``."""

    def time_major(x):
        return jnp.swapaxes(x, 0, 1)

    state = hk.LSTMState(hidden=first_state["hidden"], cell=first_state["cell"])
    outputs, _ = networks.unroll(
        params["network"], jax.tree.map(time_major, observations), time_major(start_of_episode), state
    )
    return jax.tree.map(time_major, outputs)


def on_policy_variables(state: OnPolicyState) -> dict:
    """``"policy"``: the acting parameters (the policy's, or a shared or recurrent network's whole), the
    observation statistics and the learner step that made them; ``"value"``: a separate value network's
    parameters."""
    if "network" in state.params:
        return {"policy": (state.params["network"], state.observation_stats, state.steps)}
    return {
        "policy": (state.params["policy"], state.observation_stats, state.steps),
        "value": state.params["value"],
    }
