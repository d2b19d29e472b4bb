"""The R2D2 learner: n-step double Q-learning on stored sequences, with burn-in and value rescaling.

For a batch of sequences ``[B, burn_in + trace]`` the learner starts both
networks from the recurrent state the actor stored at the first step,
unrolls them over the burn-in steps without gradient, then over the trace
(with ``learn_burn_in_at_episode_start``, a sequence that begins its episode,
whose stored state is the reset one and never stale, learns its burn-in steps
as trace steps). Targets are n-step double-Q returns in value-rescaled space
(``h(x) = sign(x)(sqrt(|x| + 1) - 1) + eps x``, rlax's signed-hyperbolic
pair) from the target network, over the steps the actor acted on
(``extras["acted"]``; not an episode's final step, not padding). A return's
window stops at its episode's final step and bootstraps from that step's
value (``sequence_td_errors``): an episode cut off by a time limit (discount 1)
is worth more than its remaining rewards. Sequences
are weighted by importance weights ``(1 / P)^beta`` (normalised by their
maximum), and each gets the new priority
``eta max_t |td_t| + (1 - eta) mean_t |td_t|``.
"""

from __future__ import annotations

import haiku as hk
import jax
import jax.numpy as jnp
import rlax

from acme.jax.learner import PRIORITIES, LearnerDefinition, importance_weights
from acme.jax.optimization import clipped_adam
from acme.jax.sequences import masked_mean
from acme.jax.value_learning import TargetNetworkState, init_target_network_state, target_network_step
from agents.r2d2.config import R2D2Config
from agents.r2d2.networks import R2D2Networks

TrainingState = TargetNetworkState


def make_initial_state(networks: R2D2Networks, config: R2D2Config, random_key: jax.Array) -> TrainingState:
    init_key, random_key = jax.random.split(random_key)
    return init_target_network_state(networks.init_params(init_key), clipped_adam(config), random_key)


def mixed_priorities(abs_td: jnp.ndarray, mask: jnp.ndarray, eta: float) -> jnp.ndarray:
    """``eta * max + (1 - eta) * mean`` of ``abs_td`` ``[B, T]`` over the masked steps of each sequence."""
    maximum = jnp.max(jnp.where(mask, abs_td, 0.0), axis=1)
    mean = jnp.sum(abs_td * mask, axis=1) / jnp.maximum(jnp.sum(mask, axis=1), 1.0)
    return eta * maximum + (1.0 - eta) * mean


def _time_major(x: jnp.ndarray) -> jnp.ndarray:
    return jnp.swapaxes(x, 0, 1)


def sequence_td_errors(
    q: jnp.ndarray,
    target_q: jnp.ndarray,
    actions: jnp.ndarray,
    rewards: jnp.ndarray,
    discounts: jnp.ndarray,
    acted: jnp.ndarray,
    n_step: int,
    tx_pair: rlax.TxPair,
) -> jnp.ndarray:
    """The n-step double-Q TD errors ``[T - 1]`` of one stored sequence of ``T`` steps, in ``tx_pair``'s space.

    ``q`` and ``target_q`` ``[T, A]`` are the online and target networks' outputs; ``actions``, ``rewards`` and
    ``discounts`` ``[T]`` follow the sequence adder (step t: the action at t, the reward and the discount (already
    times gamma) that followed it); ``acted`` ``[T]`` is false at an episode's final step and the padding after it.
    The return from step t sums rewards up to ``n_step`` steps ahead and bootstraps from the target network's value
    of the online network's greedy action there, but never past the episode's final step: the window stops there
    and bootstraps from the final step's value (times the discount of the step before it: zero when the episode
    terminated, one times gamma when a time limit cut it). Zero padding after the final step would otherwise drop
    that value, and the last ``n_step - 1`` steps of every time-limited episode would learn that they end the game.
    """
    values = rlax.batched_index(target_q[1:], jnp.argmax(q[1:], axis=-1))
    window_goes_on = acted[1:].astype(jnp.float32)  # lambda 0 at the step into the final one: bootstrap there
    targets = rlax.transformed_n_step_returns(
        tx_pair, rewards[:-1], discounts[:-1], values, n_step, lambda_t=window_goes_on, stop_target_gradients=True
    )
    return targets - rlax.batched_index(q[:-1], actions[:-1])


def make_update(networks: R2D2Networks, config: R2D2Config):
    """``update(state, (sequences, probabilities)) -> (state, metrics)``: one step on a batch of sequences."""
    optimizer = clipped_adam(config)
    tx_pair = rlax.SIGNED_HYPERBOLIC_PAIR if config.value_rescaling else rlax.IDENTITY_PAIR
    burn_in = config.burn_in_length

    def loss_fn(params, target_params, sequences, probabilities):
        observations = jax.tree.map(_time_major, sequences.observation)  # [L, B, ...]
        core = sequences.extras["core_state"]
        state = hk.LSTMState(hidden=core["hidden"][:, 0], cell=core["cell"][:, 0])
        # A sequence that begins its episode starts from the reset state, which no policy change makes stale: with
        # learn_burn_in_at_episode_start its burn-in steps are learned too (with gradients through them), else an
        # episode's first burn-in steps never are. Other sequences' burn-in only warms their stored state up.
        learn_start = bool(burn_in) and config.learn_burn_in_at_episode_start
        starts_episode = sequences.start_of_episode[:, 0]
        online_state, target_state = state, state
        if burn_in:
            burn = jax.tree.map(lambda x: x[:burn_in], observations)
            burn_q, online_state = networks.unroll(params, burn, state)  # [burn_in, B, A]
            burn_target_q, target_state = networks.unroll(target_params, burn, state)
            if learn_start:
                online_state = jax.tree.map(
                    lambda x: jnp.where(starts_episode[:, None], x, jax.lax.stop_gradient(x)), online_state
                )
            else:
                online_state = jax.lax.stop_gradient(online_state)
        trace = jax.tree.map(lambda x: x[burn_in:], observations)
        q, _ = networks.unroll(params, trace, online_state)  # [T, B, A]
        target_q, _ = networks.unroll(target_params, trace, target_state)
        first = burn_in
        if learn_start:  # the TD errors of the whole sequence, the burn-in's masked out below but at episode starts
            q, target_q, first = jnp.concatenate([burn_q, q]), jnp.concatenate([burn_target_q, target_q]), 0
        actions = _time_major(sequences.action[:, first:]).astype(jnp.int32)
        rewards = _time_major(sequences.reward[:, first:]).astype(jnp.float32)
        discounts = config.discount * _time_major(sequences.discount[:, first:]).astype(jnp.float32)
        acted = sequences.extras["acted"][:, first:]
        td = jax.vmap(sequence_td_errors, in_axes=(1, 1, 1, 1, 1, 0, None, None))(
            q, target_q, actions, rewards, discounts, acted, config.n_step, tx_pair
        )  # [B, T - 1], or [B, L - 1] with learn_start
        mask = acted[:, :-1]
        if learn_start:
            mask = mask & ((jnp.arange(td.shape[1]) >= burn_in)[None, :] | starts_episode[:, None])
        per_sequence = jnp.sum(0.5 * jnp.square(td) * mask, axis=1) / jnp.maximum(jnp.sum(mask, axis=1), 1.0)
        loss = jnp.mean(importance_weights(probabilities, config.importance_sampling_exponent) * per_sequence)
        priorities = mixed_priorities(jnp.abs(td), mask, config.max_priority_weight)
        return loss, (jax.lax.stop_gradient(priorities), masked_mean(jnp.max(q[:-1], axis=-1).T, mask))

    def update(state: TrainingState, batch):
        sequences, probabilities = batch
        state, step = target_network_step(
            loss_fn, optimizer, state, config.target_update_period, sequences, probabilities
        )
        loss, (priorities, mean_q) = step.value
        return state, {"loss": loss, "mean_q": mean_q, PRIORITIES: priorities}

    return update


def r2d2_variables(state: TrainingState) -> dict:
    """``"policy"``: the online parameters; also the target ones."""
    return {"policy": state.params, "target_params": state.target_params}


def batch_fn(config: R2D2Config):
    """``sample -> (sequences, sampling probabilities)``."""
    return lambda sample: (sample.data, sample.info.probability)


R2D2_LEARNER = LearnerDefinition(
    name="R2D2",
    make_update=make_update,
    make_initial_state=make_initial_state,
    variables=r2d2_variables,
    finite_metrics=("loss",),
    hint=lambda config: f"Lower learning_rate (now {config.learning_rate}) or check the rewards for NaNs.",
    make_batch_fn=batch_fn,
)
