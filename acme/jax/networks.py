"""Network pieces shared by continuous-control agents (haiku modules and helpers).

- ``mlp_torso`` / ``LayerNormMLP``: plain and layer-normalised MLP bodies.
- ``TanhGaussianHead`` and the tanh-Gaussian sampling/log-probability helpers (SAC).
- ``GaussianHead``: a diagonal Gaussian with a bounded mean (MPO).
- ``DeterministicHead``: a tanh-bounded action (TD3, D4PG).
- ``Critic``: ``num_critics`` independent Q(s, a) networks in one module
  (twin critics for SAC/TD3; one categorical critic for D4PG).
- ``ActorCriticNetworks``: a policy and a critic with their initialisers.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import haiku as hk
import jax
import jax.numpy as jnp
import numpy as np

from acme import specs, types
from acme.jax import utils

_LOG_2 = float(np.log(2.0))
_LOG_SQRT_2PI = float(0.5 * np.log(2.0 * np.pi))


class LayerNormMLP(hk.Module):
    """Linear, LayerNorm and tanh, then ELU layers: a well-conditioned first layer for critics."""

    def __init__(self, hidden_sizes: Sequence[int], activate_final: bool = True, name: str | None = None):
        super().__init__(name=name)
        self._sizes = tuple(hidden_sizes)
        self._activate_final = activate_final

    def __call__(self, x: jnp.ndarray) -> jnp.ndarray:
        x = hk.Linear(self._sizes[0], w_init=hk.initializers.VarianceScaling(1.0, "fan_avg", "uniform"))(x)
        x = jnp.tanh(hk.LayerNorm(axis=-1, create_scale=True, create_offset=True)(x))
        rest = self._sizes[1:]
        if rest:
            x = hk.nets.MLP(rest, activation=jax.nn.elu, activate_final=self._activate_final)(x)
        return x


def mlp_torso(hidden_sizes: Sequence[int], layer_norm: bool = False, name: str | None = None) -> hk.Module:
    """An MLP body whose last layer is activated (ReLU, or LayerNormMLP if ``layer_norm``)."""
    if layer_norm:
        return LayerNormMLP(hidden_sizes, activate_final=True, name=name)
    return hk.nets.MLP(tuple(hidden_sizes), activate_final=True, name=name)


def observation_features(hidden_sizes: Sequence[int], observation: Any, layer_norm: bool = False) -> jnp.ndarray:
    """An MLP torso over the flattened float32 observation (inside a haiku transform)."""
    return mlp_torso(hidden_sizes, layer_norm=layer_norm)(utils.batch_concat(observation).astype(jnp.float32))


def twin_critic_networks(
    networks_class: type,
    environment_spec: specs.EnvironmentSpec,
    agent: str,
    head: Callable[[int], Callable],
    policy_hidden_sizes: Sequence[int],
    critic_hidden_sizes: Sequence[int],
    critic_layer_norm: bool = False,
) -> Any:
    """An MLP policy ending in ``head(action_size)`` and twin MLP critics (SAC's and TD3's shape), the critics'
    torsos ``LayerNormMLP`` if ``critic_layer_norm``."""

    def make_policy(action_size: int) -> Callable:
        return lambda observation: head(action_size)(observation_features(policy_hidden_sizes, observation))

    def critic(observation, action):
        return Critic(critic_hidden_sizes, num_critics=2, layer_norm=critic_layer_norm)(observation, action)

    return networks_class.transform(environment_spec, agent, make_policy, critic)


def tanh_log_det_jacobian(pre_tanh: jnp.ndarray) -> jnp.ndarray:
    """``log(1 - tanh(x)^2)`` computed stably as ``2 (log 2 - x - softplus(-2x))``."""
    return 2.0 * (_LOG_2 - pre_tanh - jax.nn.softplus(-2.0 * pre_tanh))


def gaussian_log_prob(x: jnp.ndarray, mean: jnp.ndarray, log_std: jnp.ndarray) -> jnp.ndarray:
    """Log-density of a diagonal Gaussian, summed over the last axis."""
    z = (x - mean) * jnp.exp(-log_std)
    return jnp.sum(-0.5 * jnp.square(z) - log_std - _LOG_SQRT_2PI, axis=-1)


def sample_tanh_gaussian(key: jax.Array, mean: jnp.ndarray, log_std: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    """A reparameterised sample ``tanh(mean + std * eps)`` in (-1, 1) and its log-probability."""
    pre_tanh = mean + jnp.exp(log_std) * jax.random.normal(key, mean.shape, mean.dtype)
    log_prob = gaussian_log_prob(pre_tanh, mean, log_std) - jnp.sum(tanh_log_det_jacobian(pre_tanh), axis=-1)
    return jnp.tanh(pre_tanh), log_prob


def sample_clipped_gaussian(key: jax.Array, mean: jnp.ndarray, std: jnp.ndarray | float) -> jnp.ndarray:
    """``mean + std * eps`` clipped to the canonical action range [-1, 1] (Gaussian exploration)."""
    return jnp.clip(mean + std * jax.random.normal(key, mean.shape, mean.dtype), -1.0, 1.0)


class TanhGaussianHead(hk.Module):
    """Maps features to the ``(mean, log_std)`` of a Gaussian that is squashed by tanh.

    ``log_std`` is bounded smoothly to ``[min_log_std, max_log_std]``; actions
    are ``tanh(mean + std * eps)``, and ``tanh(mean)`` when acting greedily.
    """

    def __init__(self, action_size: int, min_log_std: float = -5.0, max_log_std: float = 2.0, name=None):
        super().__init__(name=name)
        if not min_log_std < max_log_std:
            raise ValueError(f"min_log_std ({min_log_std}) must be < max_log_std ({max_log_std}).")
        self._action_size = action_size
        self._min, self._max = min_log_std, max_log_std

    def __call__(self, features: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
        out = hk.Linear(2 * self._action_size, w_init=hk.initializers.VarianceScaling(1e-4))(features)
        mean, raw_log_std = jnp.split(out, 2, axis=-1)
        log_std = self._min + 0.5 * (self._max - self._min) * (jnp.tanh(raw_log_std) + 1.0)
        return mean, log_std


class GaussianHead(hk.Module):
    """A diagonal Gaussian ``(mean, std)`` with mean in (-1, 1) (tanh) and std = softplus + min_std."""

    def __init__(self, action_size: int, init_std: float = 0.5, min_std: float = 1e-6, name=None):
        super().__init__(name=name)
        if not init_std > min_std >= 0:
            raise ValueError(f"init_std ({init_std}) must be > min_std ({min_std}) >= 0.")
        self._action_size = action_size
        self._min_std = min_std
        # softplus(bias) + min_std == init_std at initialisation.
        self._std_bias = float(np.log(np.expm1(init_std - min_std)))

    def __call__(self, features: jnp.ndarray, return_pre_tanh: bool = False):
        """``(mean, std)``, or ``(mean, std, pre_tanh)`` with ``return_pre_tanh`` (the mean before tanh)."""
        w_init = hk.initializers.VarianceScaling(1e-4)
        pre_tanh = hk.Linear(self._action_size, w_init=w_init, name="mean")(features)
        raw = hk.Linear(self._action_size, w_init=w_init, name="std")(features)
        std = jax.nn.softplus(raw + self._std_bias) + self._min_std
        return (jnp.tanh(pre_tanh), std, pre_tanh) if return_pre_tanh else (jnp.tanh(pre_tanh), std)


class DeterministicHead(hk.Module):
    """A deterministic action in (-1, 1): ``tanh`` of a near-zero-initialised linear layer.

    With ``return_pre_tanh`` it returns ``(action, pre_tanh)``, for losses that
    keep the policy out of tanh's flat tails (where the policy gradient vanishes).
    """

    def __init__(self, action_size: int, name=None):
        super().__init__(name=name)
        self._action_size = action_size

    def __call__(self, features: jnp.ndarray, return_pre_tanh: bool = False):
        pre_tanh = hk.Linear(self._action_size, w_init=hk.initializers.VarianceScaling(1e-4))(features)
        action = jnp.tanh(pre_tanh)
        return (action, pre_tanh) if return_pre_tanh else action


class Critic(hk.Module):
    """``num_critics`` independent critics of (observation, action), stacked on the first axis.

    Each critic is an MLP over the concatenated flat observation and action
    with ``num_outputs`` outputs (1 for a scalar Q, the number of atoms for a
    categorical critic). Returns ``[num_critics, batch]`` when ``num_outputs``
    is 1, else ``[num_critics, batch, num_outputs]``.
    """

    def __init__(
        self,
        hidden_sizes: Sequence[int],
        num_critics: int = 2,
        num_outputs: int = 1,
        layer_norm: bool = False,
        name: str | None = None,
    ):
        super().__init__(name=name)
        if num_critics < 1 or num_outputs < 1:
            raise ValueError(f"num_critics ({num_critics}) and num_outputs ({num_outputs}) must be >= 1.")
        self._sizes = tuple(hidden_sizes)
        self._num_critics = num_critics
        self._num_outputs = num_outputs
        self._layer_norm = layer_norm

    def __call__(self, observation: Any, action: jnp.ndarray) -> jnp.ndarray:
        inputs = jnp.concatenate(
            [utils.batch_concat(observation).astype(jnp.float32), action.astype(jnp.float32)], axis=-1
        )
        outputs = []
        for i in range(self._num_critics):
            torso = mlp_torso(self._sizes, self._layer_norm, name=f"critic_{i}_torso")
            outputs.append(hk.Linear(self._num_outputs, name=f"critic_{i}_output")(torso(inputs)))
        stacked = jnp.stack(outputs, axis=0)
        return stacked[..., 0] if self._num_outputs == 1 else stacked


@dataclasses.dataclass(frozen=True)
class ActorCriticNetworks:
    """A policy of observations and a critic of (observation, action), sized for one environment.

    ``policy.apply(params, observations[B, ...])`` and
    ``critic.apply(params, observations[B, ...], actions[B, action_size])``;
    agents subclass it to document their outputs or add fields.
    """

    policy: hk.Transformed
    critic: hk.Transformed
    environment_spec: specs.EnvironmentSpec
    action_size: int

    @classmethod
    def transform(
        cls,
        environment_spec: specs.EnvironmentSpec,
        agent: str,
        make_policy: Callable[[int], Callable],
        critic: Callable,
        **fields: Any,
    ) -> "ActorCriticNetworks":
        """``cls`` with ``make_policy(action_size)`` and ``critic`` transformed by haiku (no random key at apply),
        for ``environment_spec``'s canonical continuous actions (``agent`` names the caller in errors)."""
        action_size = specs.continuous_action_size(environment_spec, agent)
        return cls(
            policy=hk.without_apply_rng(hk.transform(make_policy(action_size))),
            critic=hk.without_apply_rng(hk.transform(critic)),
            environment_spec=environment_spec,
            action_size=action_size,
            **fields,
        )

    def dummy_inputs(self) -> tuple[Any, jnp.ndarray]:
        """A batch of one zero observation and one zero action."""
        observation = utils.add_batch_dim(types.zeros_like_spec(self.environment_spec.observations))
        return observation, jnp.zeros((1, self.action_size), jnp.float32)

    def init_policy(self, key: jax.Array) -> hk.Params:
        return self.policy.init(key, self.dummy_inputs()[0])

    def init_critic(self, key: jax.Array) -> hk.Params:
        return self.critic.init(key, *self.dummy_inputs())
