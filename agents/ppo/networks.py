"""PPO's networks: the library's policy-value networks (``acme.jax.policy_value``), feed-forward or recurrent."""

from __future__ import annotations

from typing import Sequence

from acme import specs
from acme.jax.policy_value import (
    PolicyValueNetworks,
    RecurrentPolicyValueNetworks,
    make_policy_value_networks,
    make_recurrent_policy_value_networks,
)

PPONetworks = PolicyValueNetworks | RecurrentPolicyValueNetworks


def make_networks(
    environment_spec: specs.EnvironmentSpec,
    hidden_sizes: Sequence[int] = (64, 64),
    initial_log_std: float = 0.0,
    torso: str = "auto",
    lstm_size: int | None = None,
    shared_torso: bool = False,
) -> PPONetworks:
    """Separate tanh policy and value MLPs (or, for pixels, convolutional torsos), one convolutional torso under
    tanh MLP heads (``shared_torso``), or (with an ``lstm_size``) one torso and an LSTM shared by the policy and
    value heads; logits for discrete actions, a Gaussian for continuous ones."""
    if lstm_size is not None:
        return make_recurrent_policy_value_networks(
            environment_spec, hidden_sizes, lstm_size, initial_log_std, agent="PPO", torso=torso
        )
    return make_policy_value_networks(
        environment_spec, hidden_sizes, initial_log_std, agent="PPO", torso=torso, shared_torso=shared_torso
    )


__all__ = ["PPONetworks", "make_networks"]
