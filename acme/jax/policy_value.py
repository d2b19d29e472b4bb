"""Policy-value networks for on-policy agents: a categorical or diagonal-Gaussian policy and a value MLP."""

from __future__ import annotations

import dataclasses
from typing import Sequence

import distrax
import haiku as hk
import jax
import jax.numpy as jnp
import numpy as np

from acme import specs, types
from acme.jax import utils


@dataclasses.dataclass(frozen=True)
class PolicyValueNetworks:
    """``policy.apply(p, obs[B, ...])`` gives logits ``[B, A]`` (discrete) or ``(mean, log_std)`` ``[B, A]``
    (continuous); ``value.apply(v, obs[B, ...]) -> [B]``. ``distribution`` turns the policy's output into a
    distrax distribution."""

    policy: hk.Transformed
    value: hk.Transformed
    environment_spec: specs.EnvironmentSpec
    discrete: bool
    num_actions: int  # discrete: the number of actions; continuous: the action size

    def init(self, key: jax.Array) -> dict:
        observation = utils.add_batch_dim(types.zeros_like_spec(self.environment_spec.observations))
        policy_key, value_key = jax.random.split(key)
        return {"policy": self.policy.init(policy_key, observation), "value": self.value.init(value_key, observation)}

    def distribution(self, policy_output) -> distrax.Distribution:
        if self.discrete:
            return distrax.Categorical(logits=policy_output)
        mean, log_std = policy_output
        return distrax.MultivariateNormalDiag(mean, jnp.exp(log_std))


def make_policy_value_networks(
    environment_spec: specs.EnvironmentSpec,
    hidden_sizes: Sequence[int] = (64, 64),
    initial_log_std: float = 0.0,
    agent: str = "This agent",
) -> PolicyValueNetworks:
    """Separate tanh policy and value MLPs (orthogonal initialisation) sized for the environment.

    The action space decides the policy head: logits for discrete actions, or a
    mean and a state-independent log-std (starting at ``initial_log_std``) for
    continuous ones. ``agent`` names the caller in errors.
    """
    discrete = isinstance(environment_spec.actions, specs.DiscreteArray)
    if discrete:
        num_actions = specs.num_discrete_actions(environment_spec)
    else:
        num_actions = specs.continuous_action_size(environment_spec, agent)

    def features(observation):
        return utils.batch_concat(observation).astype(jnp.float32)

    def torso(hidden: Sequence[int], name: str, x):
        for i, width in enumerate(hidden):
            x = jnp.tanh(hk.Linear(width, w_init=hk.initializers.Orthogonal(np.sqrt(2.0)), name=f"{name}_{i}")(x))
        return x

    def policy(observation):
        x = torso(hidden_sizes, "policy", features(observation))
        out = hk.Linear(num_actions, w_init=hk.initializers.Orthogonal(0.01), name="policy_out")(x)
        if discrete:
            return out
        log_std = hk.get_parameter("log_std", (num_actions,), init=hk.initializers.Constant(initial_log_std))
        return out, jnp.broadcast_to(log_std, out.shape)

    def value(observation):
        x = torso(hidden_sizes, "value", features(observation))
        return hk.Linear(1, w_init=hk.initializers.Orthogonal(1.0), name="value_out")(x)[..., 0]

    return PolicyValueNetworks(
        policy=hk.without_apply_rng(hk.transform(policy)),
        value=hk.without_apply_rng(hk.transform(value)),
        environment_spec=environment_spec,
        discrete=bool(discrete),
        num_actions=num_actions,
    )


def check_policy_value_networks(
    networks: PolicyValueNetworks, environment_spec: specs.EnvironmentSpec, agent: str
) -> None:
    """Raises a clear error when ``networks`` were built for another environment."""
    discrete = isinstance(environment_spec.actions, specs.DiscreteArray)
    if networks.discrete != discrete:
        raise ValueError(
            f"The {agent} networks were built for {'discrete' if networks.discrete else 'continuous'} actions but "
            f"the environment's are {'discrete' if discrete else 'continuous'}; build them from its spec."
        )
    specs.check_same_shapes(networks.environment_spec, environment_spec, f"The {agent} networks")
