"""R2D2 hyper-parameters; the defaults learn gymnasium:CartPole-v1."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from acme.agents.config_checks import (
    MAX_BATCH_DIMENSION,
    MAX_STEPS,
    ConfigChecker,
    check_learning_rate_decay,
    check_transition_replay,
)
from acme.agents.exploration import EpsilonGreedyConfig, check_epsilon_greedy
from acme.agents.transition_config import TransitionReplayConfig
from acme.jax.torsos import TORSOS


@dataclasses.dataclass(frozen=True)
class R2D2Config(TransitionReplayConfig, EpsilonGreedyConfig):
    """Configuration of R2D2: a recurrent double Q-network on prioritized replay of stored sequences.

    Each replay item is a sequence of ``burn_in_length + trace_length`` steps
    (a new one every ``sequence_period`` steps, padded at an episode's end)
    with the actor's recurrent state at its first step. The learner unrolls
    the burn-in steps without gradient to warm the state up, then learns from
    n-step double-Q targets on the trace, in value-rescaled space (with
    ``learn_burn_in_at_episode_start``, on the whole of a sequence that begins an
    episode: the reset state needs no warming up). Exploration is
    epsilon-greedy (``EpsilonGreedyConfig``).
    """

    # Learning.
    learning_rate: float = 1e-3  # Adam's step size
    learning_rate_decay_steps: int = 0  # optimiser steps of a linear decay to final_learning_rate; 0: constant
    final_learning_rate: float = 1e-5  # the step size once the decay is over
    adam_eps: float = 1e-3  # Adam's epsilon
    max_gradient_norm: float = 40.0  # gradients are clipped to this global norm
    discount: float = 0.99  # per-step discount of future rewards
    n_step: int = 5  # steps of reward summed before bootstrapping
    batch_size: int = 32  # sequences per update
    target_update_period: int = 100  # learner steps between target-network copies
    value_rescaling: bool = True  # learn h(Q) with h(x) = sign(x)(sqrt(|x| + 1) - 1) + eps x (rlax's pair)
    torso_sizes: Sequence[int] = (64,)  # MLP layer sizes before the LSTM
    torso: str = "auto"  # auto, mlp, nature, small, pooled or resnet (acme.jax.torsos)
    lstm_size: int = 64  # LSTM units

    # Sequences.
    burn_in_length: int = 8  # steps that only warm up the LSTM state before each trace
    learn_burn_in_at_episode_start: bool = False  # a sequence that begins its episode learns its burn-in steps too
    trace_length: int = 24  # steps of each sequence learned from
    sequence_period: int = 12  # steps between the starts of consecutive stored sequences

    # Prioritized sequence replay: an item's priority mixes the max and mean |TD error| over its trace.
    max_priority_weight: float = 0.9  # eta: priority = eta max |TD| + (1 - eta) mean |TD| over a sequence
    priority_exponent: float = 0.9  # alpha: sampling probability is proportional to priority ** alpha
    importance_sampling_exponent: float = 0.6  # beta: importance weights (1 / (N p)) ** beta correct the sampling
    prioritized_replay: bool = True  # sample by priority (|TD error|), else uniformly
    min_replay_size: int = 100  # sequences
    max_replay_size: int = 20_000  # sequences replay holds; the oldest go first
    samples_per_insert: float = 32.0  # sampled sequences per inserted sequence (16: seed 0 peaked at 425 in 200k steps)
    replay_table_name: str = "r2d2_sequences"  # the replay table's name

    # Acting (EpsilonGreedyConfig's fields, with R2D2's final epsilon).
    epsilon_end: float = 0.01  # epsilon once the decay is over

    def __post_init__(self):
        check = ConfigChecker(self)
        check.positive(self, "learning_rate", "adam_eps", "max_gradient_norm")
        check.positive_int(self, "target_update_period", maximum=MAX_STEPS)
        check.positive_int(self, "trace_length", "sequence_period")
        check.layer_width(self, "lstm_size")
        check.integer(self, "burn_in_length", minimum=0, maximum=MAX_BATCH_DIMENSION)
        check(self.trace_length >= 2, f"trace_length must be >= 2 (a step and the one after), got {self.trace_length}.")
        check.layer_sizes(self, "torso_sizes")
        check.one_of(self, "torso", TORSOS)
        check.in_unit_interval(self, "max_priority_weight", "priority_exponent", "importance_sampling_exponent")
        check_epsilon_greedy(self)
        check_learning_rate_decay(self)
        check(self.prioritized_replay, "R2D2 replays sequences by priority: prioritized_replay must be True.")
        check_transition_replay(self)

    @property
    def sequence_length(self) -> int:
        return self.burn_in_length + self.trace_length
