"""The QR-DQN loss: quantile regression Q-learning (``rlax.quantile_q_learning``) on n-step transitions, on the DQN
family's shared learner. The target quantiles are the target network's at the action the online network's mean
picks, shifted by the n-step reward and scaled by the bootstrap discount; the loss, the quantile Huber loss between
every pair of online and target quantiles, is also the new priority."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import rlax

from acme import types
from acme.agents.q_learning import QNetworks, q_learner
from agents.qrdqn.config import QRDQNConfig
from agents.qrdqn.networks import quantile_levels


def make_losses(networks: QNetworks, config: QRDQNConfig):
    q_apply = networks.q_network.apply
    levels = quantile_levels(config.num_quantiles)

    def loss(quantiles_tm1, action, reward, discount, selector_t, quantiles_t):
        # rlax takes the distributions as [quantiles, actions]; the network gives [actions, quantiles].
        return rlax.quantile_q_learning(
            quantiles_tm1.T, levels, action, reward, discount, selector_t.T, quantiles_t.T, config.huber_param
        )

    def losses(params, target_params, transitions: types.Transition):
        quantiles_t, selector_t = jax.lax.stop_gradient(
            (q_apply(target_params, transitions.next_observation), q_apply(params, transitions.next_observation))
        )
        quantiles_tm1 = q_apply(params, transitions.observation)
        per_transition = jax.vmap(loss)(
            quantiles_tm1,
            transitions.action.astype(jnp.int32),
            transitions.reward.astype(jnp.float32),
            transitions.discount.astype(jnp.float32),
            selector_t,
            quantiles_t,
        )
        return per_transition, per_transition, jnp.mean(quantiles_tm1)

    return losses


QRDQN_LEARNER = q_learner("QR-DQN", make_losses)
