"""PPO's networks: the library's policy-value networks (``acme.jax.policy_value``)."""

from __future__ import annotations

from acme import specs
from acme.jax.policy_value import PolicyValueNetworks as PPONetworks
from acme.jax.policy_value import make_policy_value_networks


def make_networks(
    environment_spec: specs.EnvironmentSpec, hidden_sizes=(64, 64), initial_log_std: float = 0.0, torso: str = "auto"
):
    """Separate tanh policy and value MLPs (or, for pixels, convolutional torsos); logits for discrete actions, a
    Gaussian for continuous ones."""
    return make_policy_value_networks(environment_spec, hidden_sizes, initial_log_std, agent="PPO", torso=torso)


__all__ = ["PPONetworks", "make_networks"]
