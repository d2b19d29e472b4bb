"""What the DQN family shares: its config fields, its Q-network, its learner around a loss, and its epsilon-greedy
policy.

Each member (DQN, C51, QR-DQN, Munchausen DQN) is then mostly its loss: its package subclasses
``QLearningConfig`` (adding its own fields), builds ``make_q_networks`` with ``outputs_per_action`` outputs per
action (1 for Q-values, the atoms of a categorical distribution, the quantiles of a quantile regression), writes
``make_losses`` for ``q_learner`` (the target network, the optimiser step, prioritized replay's importance weights
and new priorities are shared), and subclasses ``QLearningBuilder`` with that learner and, where the outputs are
not Q-values, how to read them as Q-values (``q_values``) for the policy.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import distrax
import haiku as hk
import jax
import jax.numpy as jnp
import optax

from acme import specs, types
from acme.agents import exploration
from acme.agents.config_checks import MAX_STEPS, ConfigChecker, check_transition_replay
from acme.agents.exploration import EpsilonGreedyConfig, check_epsilon_greedy
from acme.agents.transition_builder import NStepTransitionBuilder
from acme.agents.transition_config import TransitionReplayConfig
from acme.jax import utils
from acme.jax.learner import PRIORITIES, LearnerDefinition, importance_weights
from acme.jax.optimization import clipped_adam, clipped_rmsprop
from acme.jax.torsos import TORSOS, conv_torso, pixel_torso
from acme.jax.value_learning import TargetNetworkState, init_target_network_state, target_network_step

# losses(params, target_params, transitions) -> (per-transition losses [B], new priorities [B], mean Q-value)
LossesFn = Callable[[Any, Any, types.Transition], tuple[jax.Array, jax.Array, jax.Array]]


@dataclasses.dataclass(frozen=True)
class QLearningConfig(TransitionReplayConfig, EpsilonGreedyConfig):
    """The fields every member of the DQN family has; epsilon-greedy exploration as ``EpsilonGreedyConfig``
    says. A member's config subclasses it and calls ``check_q_learning`` in its ``__post_init__``."""

    # Learning.
    learning_rate: float = 1e-3  # the optimiser's step size
    optimizer: str = "adam"  # adam, or rmsprop: centred RMSProp, epsilon outside the root (MinAtar's DQN's)
    adam_eps: float = 1e-8  # Adam's epsilon
    rmsprop_decay: float = 0.95  # RMSProp's decay of its squared-gradient averages
    rmsprop_eps: float = 0.01  # RMSProp's epsilon, added to the root of the centred second moment
    discount: float = 0.99  # per-step discount of future rewards
    n_step: int = 3  # steps of reward summed into each transition before bootstrapping
    batch_size: int = 64  # transitions per update
    target_update_period: int = 200  # learner steps between target-network copies
    max_gradient_norm: float = 10.0  # gradients are clipped to this global norm
    hidden_sizes: Sequence[int] = (256, 256)  # hidden layer sizes of the MLP (observations that are not images)
    torso: str = "auto"  # auto, mlp, nature, small, pooled or resnet (acme.jax.torsos)

    # Replay.
    max_replay_size: int = 100_000  # items replay holds; the oldest go first
    samples_per_insert: float = 32.0  # sampled items per inserted item: 0.5 updates per step at batch 64
    prioritized_replay: bool = False  # sample by priority (|TD error|), else uniformly
    priority_exponent: float = 0.6  # alpha: sampling probability is proportional to priority ** alpha
    importance_sampling_exponent: float = 0.4  # beta: importance weights (1 / (N p)) ** beta correct the sampling
    num_sgd_steps_per_step: int = 64  # U: updates per jitted learner call, on a [U, batch_size] stack (by benchmark)


OPTIMIZERS = ("adam", "rmsprop")


def q_learning_optimizer(config: QLearningConfig) -> optax.GradientTransformation:
    """The optimiser ``config.optimizer`` names, after clipping the gradients' global norm (acme.jax.optimization)."""
    return clipped_rmsprop(config) if config.optimizer == "rmsprop" else clipped_adam(config)


def check_q_learning(config: QLearningConfig) -> None:
    """Checks ``QLearningConfig``'s fields (a member's own are its to check)."""
    check = ConfigChecker(config)
    check.positive(config, "learning_rate", "adam_eps", "rmsprop_eps", "max_gradient_norm")
    check.one_of(config, "optimizer", OPTIMIZERS)
    check.in_range(config, "rmsprop_decay", 0, 1, low_open=True, high_open=True)
    check.positive_int(config, "target_update_period", maximum=MAX_STEPS)
    check.layer_sizes(config, "hidden_sizes")
    check.one_of(config, "torso", TORSOS)
    check.in_unit_interval(config, "priority_exponent", "importance_sampling_exponent")
    check_epsilon_greedy(config)
    check_transition_replay(config)


@dataclasses.dataclass(frozen=True)
class QNetworks:
    """``q_network.apply(params, observations[B, ...])``: ``[B, num_actions]`` Q-values, or with
    ``outputs_per_action`` K > 1, ``[B, num_actions, K]`` (atoms' logits, quantiles)."""

    q_network: hk.Transformed
    num_actions: int
    observation_spec: Any
    outputs_per_action: int = 1

    def init(self, key: jax.Array):
        dummy = utils.add_batch_dim(types.zeros_like_spec(self.observation_spec))
        return self.q_network.init(key, dummy)


def make_q_networks(
    environment_spec: specs.EnvironmentSpec,
    hidden_sizes: Sequence[int] = (256, 256),
    torso: str = "auto",
    outputs_per_action: int = 1,
    agent: str = "DQN",
    layer_norm: bool = False,
) -> QNetworks:
    """An MLP of ``hidden_sizes`` (or, for pixels, the convolutional torso ``torso`` picks and a linear head) with
    ``outputs_per_action`` outputs for each of the environment's actions. With ``layer_norm`` every hidden layer
    (the torso's features, for pixels) is layer-normalised before its ReLU (PQN's network)."""
    num_actions = specs.num_discrete_actions(environment_spec)
    pixels = pixel_torso(torso, environment_spec.observations, agent)
    width = num_actions * outputs_per_action

    def normalized(x):
        return hk.LayerNorm(-1, create_scale=True, create_offset=True)(x) if layer_norm else x

    def forward(observation):
        if pixels is not None:
            out = hk.Linear(width)(normalized(conv_torso(pixels)(observation)))
        elif layer_norm:
            x = utils.batch_concat(observation).astype(jnp.float32)
            for size in hidden_sizes:
                x = jax.nn.relu(normalized(hk.Linear(size)(x)))
            out = hk.Linear(width)(x)
        else:
            out = hk.nets.MLP([*hidden_sizes, width])(utils.batch_concat(observation).astype(jnp.float32))
        return out if outputs_per_action == 1 else out.reshape(out.shape[:-1] + (num_actions, outputs_per_action))

    return QNetworks(
        q_network=hk.without_apply_rng(hk.transform(forward)),
        num_actions=num_actions,
        observation_spec=environment_spec.observations,
        outputs_per_action=outputs_per_action,
    )


def check_q_networks_match(networks: QNetworks, environment_spec: specs.EnvironmentSpec) -> None:
    """Raises a clear error if the networks were built for another environment."""
    num_actions = specs.num_discrete_actions(environment_spec)
    if networks.num_actions != num_actions:
        raise ValueError(
            f"The Q-network has {networks.num_actions} outputs but the environment has {num_actions} actions; "
            "build the networks from this environment's spec (make_networks(environment_spec))."
        )
    got = [tuple(s.shape) for s in jax.tree.leaves(networks.observation_spec)]
    want = [tuple(s.shape) for s in jax.tree.leaves(environment_spec.observations)]
    if got != want:
        raise ValueError(
            f"The Q-network expects observations of shape {got} but the environment gives {want}; "
            "build the networks from this environment's spec."
        )


def make_q_learning_update(networks: QNetworks, config: QLearningConfig, losses: LossesFn):
    """``update(state, (transitions, probabilities)) -> (state, metrics)``: one optimiser step on the mean of a
    member's ``losses`` (importance-weighted by the sampling ``probabilities`` with prioritized replay, whose new
    priorities the metrics then carry), the target network refreshed every ``target_update_period`` steps."""
    optimizer = q_learning_optimizer(config)

    def loss_fn(params, target_params, transitions: types.Transition, probabilities):
        per_transition, priorities, mean_q = losses(params, target_params, transitions)
        if config.prioritized_replay:
            per_transition = per_transition * importance_weights(probabilities, config.importance_sampling_exponent)
        return jnp.mean(per_transition), (priorities, mean_q)

    def update(state: TargetNetworkState, batch):
        transitions, probabilities = batch
        state, step = target_network_step(
            loss_fn, optimizer, state, config.target_update_period, transitions, probabilities
        )
        loss, (priorities, mean_q) = step.value
        metrics = {"loss": loss, "mean_q": mean_q, "gradient_norm": optax.tree_utils.tree_norm(step.gradients)}
        if config.prioritized_replay:
            metrics[PRIORITIES] = priorities
        return state, metrics

    return update


def q_learning_variables(state: TargetNetworkState) -> dict:
    """What actors and snapshots read: the online parameters (also as "params"), and the target ones."""
    return {"policy": state.params, "params": state.params, "target_params": state.target_params}


def q_learning_batch_fn(config: QLearningConfig):
    """``sample -> (transitions, probabilities)``: only these go to the device (probabilities for prioritized
    replay only)."""

    def batch(sample):
        return sample.data, sample.info.probability if config.prioritized_replay else None

    return batch


def q_learner(
    name: str, make_losses: Callable[[QNetworks, Any], LossesFn], hint: Callable[[Any], str] | None = None
) -> LearnerDefinition:
    """The ``LearnerDefinition`` of a member whose loss ``make_losses(networks, config)`` builds."""

    def default_hint(config) -> str:
        return f"Lower learning_rate (now {config.learning_rate}) or max_gradient_norm, or check the rewards for NaNs."

    return LearnerDefinition(
        name=name,
        make_update=lambda networks, config: make_q_learning_update(networks, config, make_losses(networks, config)),
        make_initial_state=lambda networks, config, key: init_target_network_state(
            networks.init(key), q_learning_optimizer(config), key
        ),
        variables=q_learning_variables,
        finite_metrics=("loss",),
        hint=hint or default_hint,
        make_batch_fn=q_learning_batch_fn,
    )


class QLearningBuilder(NStepTransitionBuilder):
    """A member of the DQN family: n-step transitions, its ``learner``, and an epsilon-greedy policy over the
    Q-values its network's outputs give (``q_values``)."""

    def for_actor(self, actor_id: int, num_actors: int) -> "QLearningBuilder":
        """Actor ``actor_id`` of ``num_actors`` explores with its own final epsilon (see EpsilonGreedyConfig)."""
        config = exploration.for_actor(self.config, actor_id, num_actors)
        return self if config is self.config else type(self)(config)

    def check_networks(self, networks, environment_spec: specs.EnvironmentSpec) -> None:
        check_q_networks_match(networks, environment_spec)

    def q_values(self, outputs: jnp.ndarray) -> jnp.ndarray:
        """Q-values ``[..., A]`` from the network's outputs (Q-values themselves unless a member says otherwise)."""
        return outputs

    def make_policy(self, networks: QNetworks, environment_spec: specs.EnvironmentSpec, evaluation: bool = False):
        self.check_networks(networks, environment_spec)
        config = self.config

        def policy(params, key, observation, step):
            outputs = networks.q_network.apply(params, jax.tree.map(lambda x: x[None], observation))[0]
            epsilon = config.evaluation_epsilon if evaluation else exploration.linear_epsilon(config, step)
            return distrax.EpsilonGreedy(self.q_values(outputs), epsilon).sample(seed=key)

        return policy
