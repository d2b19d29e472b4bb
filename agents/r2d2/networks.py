"""R2D2 networks: an MLP (or, for pixels, a convolutional) torso, an LSTM and a linear Q head, applied one step at
a time or unrolled."""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import haiku as hk
import jax
import jax.numpy as jnp

from acme import specs, types
from acme.jax import utils
from acme.jax.torsos import conv_torso, pixel_torso


class RecurrentQNetwork(hk.Module):
    """``observation[B, ...], state -> (q[B, A], state)``; ``unroll`` does the same over ``[T, B, ...]``."""

    def __init__(self, num_actions: int, torso_sizes: Sequence[int], lstm_size: int, pixels: str | None = None):
        super().__init__(name="recurrent_q")
        self._pixels = pixels
        if pixels is not None:
            self._torso = conv_torso(pixels, name="torso")
        else:
            self._torso = hk.nets.MLP(list(torso_sizes), activate_final=True, name="torso")
        self._lstm = hk.LSTM(lstm_size, name="lstm")
        self._head = hk.Linear(num_actions, name="q_head")

    def _features(self, observation) -> jnp.ndarray:
        if self._pixels is not None:
            return self._torso(observation)
        return self._torso(utils.batch_concat(observation).astype(jnp.float32))

    def __call__(self, observation, state: hk.LSTMState):
        output, state = self._lstm(self._features(observation), state)
        return self._head(output), state

    def unroll(self, observations, state: hk.LSTMState):
        features = hk.BatchApply(self._features)(observations)
        outputs, state = hk.dynamic_unroll(self._lstm, features, state)
        return hk.BatchApply(self._head)(outputs), state

    def initial_state(self, batch_size: int) -> hk.LSTMState:
        return self._lstm.initial_state(batch_size)


@dataclasses.dataclass(frozen=True)
class R2D2Networks:
    """Haiku functions sharing one set of parameters:

    ``step(params, observation[B, ...], state) -> (q[B, A], state)``,
    ``unroll(params, observations[T, B, ...], state) -> (q[T, B, A], state)``,
    ``initial_state(params, batch_size) -> LSTMState`` (zeros of ``[batch_size, lstm_size]``).
    """

    init: Any
    step: Any
    unroll: Any
    initial_state: Any
    num_actions: int
    lstm_size: int
    environment_spec: specs.EnvironmentSpec

    def init_params(self, key: jax.Array) -> hk.Params:
        return self.init(key, utils.add_batch_dim(types.zeros_like_spec(self.environment_spec.observations)))


def make_networks(
    environment_spec: specs.EnvironmentSpec,
    torso_sizes: Sequence[int] = (64,),
    lstm_size: int = 64,
    torso: str = "auto",
) -> R2D2Networks:
    """A recurrent Q-network sized for the environment's observations and discrete actions: an MLP torso of
    ``torso_sizes`` (for pixels, the convolutional torso ``torso`` picks), an LSTM and a linear head."""
    num_actions = specs.num_discrete_actions(environment_spec)
    pixels = pixel_torso(torso, environment_spec.observations, "R2D2")

    def functions():
        network = RecurrentQNetwork(num_actions, torso_sizes, lstm_size, pixels)

        def init(observation):
            return network(observation, network.initial_state(jax.tree.leaves(observation)[0].shape[0]))

        return init, (network.__call__, network.unroll, network.initial_state)

    transformed = hk.without_apply_rng(hk.multi_transform(functions))
    step, unroll, initial_state = transformed.apply
    return R2D2Networks(
        init=transformed.init,
        step=step,
        unroll=unroll,
        initial_state=initial_state,
        num_actions=num_actions,
        lstm_size=lstm_size,
        environment_spec=environment_spec,
    )
