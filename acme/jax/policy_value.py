"""Policy-value networks for on-policy agents: a categorical or diagonal-Gaussian policy and a value, from
separate MLPs (``PolicyValueNetworks``) or from one MLP torso and an LSTM (``RecurrentPolicyValueNetworks``)."""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import distrax
import haiku as hk
import jax
import jax.numpy as jnp
import numpy as np

from acme import specs, types
from acme.jax import utils
from acme.jax.torsos import conv_torso, pixel_torso


@dataclasses.dataclass(frozen=True)
class PolicyValueNetworks:
    """``policy.apply(p, obs[B, ...])`` gives logits ``[B, A]`` (discrete) or ``(mean, log_std)`` ``[B, A]``
    (continuous); ``value.apply(v, obs[B, ...]) -> [B]``. ``distribution`` turns the policy's output into a
    distrax distribution.

    Separate networks have parameters ``{"policy": p, "value": v}``. Where a ``joint`` transform is given the
    policy and the value share a torso: the parameters are ``{"network": n}``, and ``policy``, ``value`` and
    ``joint`` (``-> (policy_output, value)``) all apply to ``n``. ``policy_and_value`` takes either layout."""

    policy: hk.Transformed
    value: hk.Transformed
    environment_spec: specs.EnvironmentSpec
    discrete: bool
    num_actions: int  # discrete: the number of actions; continuous: the action size
    joint: hk.Transformed | None = None  # a shared torso's policy and value in one pass; None: separate networks

    def init(self, key: jax.Array) -> dict:
        observation = utils.add_batch_dim(types.zeros_like_spec(self.environment_spec.observations))
        if self.joint is not None:
            return {"network": self.joint.init(key, observation)}
        policy_key, value_key = jax.random.split(key)
        return {"policy": self.policy.init(policy_key, observation), "value": self.value.init(value_key, observation)}

    def policy_and_value(self, params: dict, observation: Any) -> tuple[Any, jnp.ndarray]:
        """The policy output and the value of ``observation`` ``[B, ...]`` under ``init``'s parameters."""
        if self.joint is not None:
            return self.joint.apply(params["network"], observation)
        return self.policy.apply(params["policy"], observation), self.value.apply(params["value"], observation)

    def distribution(self, policy_output) -> distrax.Distribution:
        if self.discrete:
            return distrax.Categorical(logits=policy_output)
        mean, log_std = policy_output
        return distrax.MultivariateNormalDiag(mean, jnp.exp(log_std))


def _features(observation) -> jnp.ndarray:
    return utils.batch_concat(observation).astype(jnp.float32)


def _torso(hidden: Sequence[int], name: str, x: jnp.ndarray) -> jnp.ndarray:
    for i, width in enumerate(hidden):
        x = jnp.tanh(hk.Linear(width, w_init=hk.initializers.Orthogonal(np.sqrt(2.0)), name=f"{name}_{i}")(x))
    return x


def _body(pixels: str | None, hidden: Sequence[int], name: str, observation) -> jnp.ndarray:
    """The features of ``observation``: the convolutional torso ``pixels`` names, else the tanh MLP."""
    if pixels is not None:
        return conv_torso(pixels, name=f"{name}_{pixels}")(observation)
    return _torso(hidden, name, _features(observation))


def _policy_head(x: jnp.ndarray, discrete: bool, num_actions: int, initial_log_std: float):
    """Logits ``[B, A]``, or a mean and a state-independent log-std ``[B, A]``."""
    out = hk.Linear(num_actions, w_init=hk.initializers.Orthogonal(0.01), name="policy_out")(x)
    if discrete:
        return out
    log_std = hk.get_parameter("log_std", (num_actions,), init=hk.initializers.Constant(initial_log_std))
    return out, jnp.broadcast_to(log_std, out.shape)


def _value_head(x: jnp.ndarray) -> jnp.ndarray:
    return hk.Linear(1, w_init=hk.initializers.Orthogonal(1.0), name="value_out")(x)[..., 0]


def _action_space(environment_spec: specs.EnvironmentSpec, agent: str) -> tuple[bool, int]:
    discrete = isinstance(environment_spec.actions, specs.DiscreteArray)
    if discrete:
        return True, specs.num_discrete_actions(environment_spec)
    return False, specs.continuous_action_size(environment_spec, agent)


def make_policy_value_networks(
    environment_spec: specs.EnvironmentSpec,
    hidden_sizes: Sequence[int] = (64, 64),
    initial_log_std: float = 0.0,
    agent: str = "This agent",
    torso: str = "auto",
    shared_torso: bool = False,
) -> PolicyValueNetworks:
    """Separate tanh policy and value MLPs (orthogonal initialisation) sized for the environment, or, where
    ``torso`` picks one (``acme.jax.torsos``; pixels by default), a convolutional torso each.

    With ``shared_torso`` (convolutional torsos only), one convolutional torso feeds both heads and each head is
    a tanh MLP of ``hidden_sizes`` on its features (as pgx's MinAtar PPO example's network).

    The action space decides the policy head: logits for discrete actions, or a
    mean and a state-independent log-std (starting at ``initial_log_std``) for
    continuous ones. ``agent`` names the caller in errors.
    """
    discrete, num_actions = _action_space(environment_spec, agent)
    pixels = pixel_torso(torso, environment_spec.observations, agent)
    if shared_torso:
        if pixels is None:
            raise ValueError(
                f"{agent}'s shared_torso shares a convolutional torso between the policy and the value, and this "
                f"environment's observations get the MLP (torso {torso!r}): use image observations with a "
                "convolutional torso, or shared_torso=False."
            )
        return _shared_torso_networks(environment_spec, pixels, hidden_sizes, discrete, num_actions, initial_log_std)

    def policy(observation):
        return _policy_head(_body(pixels, hidden_sizes, "policy", observation), discrete, num_actions, initial_log_std)

    def value(observation):
        return _value_head(_body(pixels, hidden_sizes, "value", observation))

    return PolicyValueNetworks(
        policy=hk.without_apply_rng(hk.transform(policy)),
        value=hk.without_apply_rng(hk.transform(value)),
        environment_spec=environment_spec,
        discrete=discrete,
        num_actions=num_actions,
    )


def _shared_torso_networks(
    environment_spec: specs.EnvironmentSpec,
    pixels: str,
    hidden_sizes: Sequence[int],
    discrete: bool,
    num_actions: int,
    initial_log_std: float,
) -> PolicyValueNetworks:
    """One convolutional torso (``torso_<pixels>``) under tanh MLP heads; every function names its modules alike,
    so ``policy`` and ``value`` apply to ``joint``'s parameters."""

    def features(observation):
        return conv_torso(pixels, name=f"torso_{pixels}")(observation)

    def policy_head(x):
        return _policy_head(_torso(hidden_sizes, "policy", x), discrete, num_actions, initial_log_std)

    def value_head(x):
        return _value_head(_torso(hidden_sizes, "value", x))

    def joint(observation):
        x = features(observation)
        return policy_head(x), value_head(x)

    return PolicyValueNetworks(
        policy=hk.without_apply_rng(hk.transform(lambda observation: policy_head(features(observation)))),
        value=hk.without_apply_rng(hk.transform(lambda observation: value_head(features(observation)))),
        environment_spec=environment_spec,
        discrete=discrete,
        num_actions=num_actions,
        joint=hk.without_apply_rng(hk.transform(joint)),
    )


@dataclasses.dataclass(frozen=True)
class RecurrentPolicyValueNetworks:
    """A policy and a value that share an MLP torso and an LSTM; haiku functions of one set of parameters:

    ``step(params, observation[B, ...], state) -> ((policy_output[B, ...], value[B]), state)``;
    ``unroll(params, observations[T, B, ...], start_of_episode[T, B], state) -> ((policy_output[T, B, ...],
    value[T, B]), state)``, where the state is reset to the initial one before every step that starts an
    episode (so one unroll can run over episodes joined in a stream);
    ``initial_state(params, batch_size) -> hk.LSTMState`` (zeros ``[batch_size, lstm_size]``).
    The policy output is ``PolicyValueNetworks``'s; ``distribution`` likewise.
    """

    init_fn: Any
    step: Any
    unroll: Any
    initial_state: Any
    environment_spec: specs.EnvironmentSpec
    discrete: bool
    num_actions: int
    lstm_size: int

    def init(self, key: jax.Array) -> dict:
        """``{"network": params}``: the parameters of the shared network (policy and value heads included)."""
        observation = utils.add_batch_dim(types.zeros_like_spec(self.environment_spec.observations))
        return {"network": self.init_fn(key, observation)}

    distribution = PolicyValueNetworks.distribution


def make_recurrent_policy_value_networks(
    environment_spec: specs.EnvironmentSpec,
    hidden_sizes: Sequence[int] = (64,),
    lstm_size: int = 64,
    initial_log_std: float = 0.0,
    agent: str = "This agent",
    torso: str = "auto",
) -> RecurrentPolicyValueNetworks:
    """A tanh MLP torso, an LSTM of ``lstm_size`` units, and ``make_policy_value_networks``'s policy and value
    heads on the LSTM's output."""
    discrete, num_actions = _action_space(environment_spec, agent)
    pixels = pixel_torso(torso, environment_spec.observations, agent)

    def functions():
        lstm = hk.LSTM(lstm_size, name="lstm")

        def torso(observation):
            return _body(pixels, hidden_sizes, "torso", observation)

        def heads(x):
            return _policy_head(x, discrete, num_actions, initial_log_std), _value_head(x)

        def step(observation, state):
            output, state = lstm(torso(observation), state)
            return heads(output), state

        def unroll(observations, start_of_episode, state):
            features = hk.BatchApply(torso)(observations)
            outputs, state = hk.dynamic_unroll(hk.ResetCore(lstm), (features, start_of_episode), state)
            return hk.BatchApply(heads)(outputs), state

        def init(observation):
            return step(observation, lstm.initial_state(jax.tree.leaves(observation)[0].shape[0]))

        return init, (step, unroll, lstm.initial_state)

    transformed = hk.without_apply_rng(hk.multi_transform(functions))
    step, unroll, initial_state = transformed.apply
    return RecurrentPolicyValueNetworks(
        init_fn=transformed.init,
        step=step,
        unroll=unroll,
        initial_state=initial_state,
        environment_spec=environment_spec,
        discrete=discrete,
        num_actions=num_actions,
        lstm_size=lstm_size,
    )


def check_policy_value_networks(
    networks: PolicyValueNetworks | RecurrentPolicyValueNetworks, environment_spec: specs.EnvironmentSpec, agent: str
) -> None:
    """Raises a clear error when ``networks`` were built for another environment."""
    discrete = isinstance(environment_spec.actions, specs.DiscreteArray)
    if networks.discrete != discrete:
        raise ValueError(
            f"The {agent} networks were built for {'discrete' if networks.discrete else 'continuous'} actions but "
            f"the environment's are {'discrete' if discrete else 'continuous'}; build them from its spec."
        )
    specs.check_same_shapes(networks.environment_spec, environment_spec, f"The {agent} networks")
