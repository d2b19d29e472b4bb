"""The Munchausen DQN loss (Vieillard, Pietquin and Geist, 2020), written out (rlax has none), on the DQN
family's shared learner.

With ``pi = softmax(q_target / tau)``, the target of ``q(s, a)`` is::

    r + alpha * clip(tau * log pi(a | s), l0, 0)
      + discount * sum_a' pi(a' | s') * (q_target(s', a') - tau * log pi(a' | s'))

where ``r`` and ``discount`` are the adder's n-step reward and bootstrap discount (gamma^n and any termination).
The loss is the Huber loss of the TD error; its absolute value is the new priority.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import rlax

from acme import types
from acme.agents.q_learning import QNetworks, q_learner
from agents.mdqn.config import MunchausenDQNConfig


def make_losses(networks: QNetworks, config: MunchausenDQNConfig):
    q_apply = networks.q_network.apply
    tau, alpha = config.entropy_temperature, config.munchausen_coefficient

    def losses(params, target_params, transitions: types.Transition):
        q_target_tm1, q_target_t = jax.lax.stop_gradient(
            (q_apply(target_params, transitions.observation), q_apply(target_params, transitions.next_observation))
        )
        q_tm1 = q_apply(params, transitions.observation)
        action = transitions.action.astype(jnp.int32)
        log_pi_tm1 = jax.nn.log_softmax(q_target_tm1 / tau, axis=-1)
        bonus = alpha * jnp.clip(
            tau * jnp.take_along_axis(log_pi_tm1, action[:, None], -1)[:, 0], config.clip_value_min, 0.0
        )
        log_pi_t = jax.nn.log_softmax(q_target_t / tau, axis=-1)
        soft_value_t = jnp.sum(jnp.exp(log_pi_t) * (q_target_t - tau * log_pi_t), axis=-1)
        target = (
            transitions.reward.astype(jnp.float32) + bonus + transitions.discount.astype(jnp.float32) * soft_value_t
        )
        td_error = jax.lax.stop_gradient(target) - jnp.take_along_axis(q_tm1, action[:, None], -1)[:, 0]
        return rlax.huber_loss(td_error, config.huber_loss_delta), jnp.abs(td_error), jnp.mean(q_tm1)

    return losses


MDQN_LEARNER = q_learner("Munchausen DQN", make_losses)
