"""Epsilon-greedy exploration shared by value-based agents: the config fields, their checks, the schedule, and
Ape-X's spread of epsilons over distributed actors."""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from acme.agents.config_checks import MAX_STEPS, ConfigChecker


@dataclasses.dataclass(frozen=True)
class EpsilonGreedyConfig:
    """Epsilon decays linearly from ``epsilon_start`` to ``epsilon_end`` over ``epsilon_decay_steps`` actor steps;
    evaluation acts with ``evaluation_epsilon``. In a distributed run of N > 1 actors, actor i ends its decay at
    ``actor_epsilon_base ** (1 + actor_epsilon_spread * i / (N - 1))`` (a range of exploration rates, as in
    Ape-X); with ``actor_epsilon_base`` None every actor ends at ``epsilon_end``.

    An agent's config subclasses it (a redeclared field changes its default) and calls
    ``check_epsilon_greedy`` in its ``__post_init__``.
    """

    epsilon_start: float = 1.0  # epsilon at the first actor step
    epsilon_end: float = 0.05  # epsilon once the decay is over
    epsilon_decay_steps: int = 10_000  # actor steps of the linear decay
    evaluation_epsilon: float = 0.0  # epsilon of evaluation episodes
    actor_epsilon_base: float | None = 0.4  # actor i of N ends at base ** (1 + spread i / (N - 1)); None: epsilon_end
    actor_epsilon_spread: float = 7.0  # how far apart the distributed actors' final epsilons lie (Ape-X)


def check_epsilon_greedy(config: EpsilonGreedyConfig) -> None:
    check = ConfigChecker(config)
    check.probability(config, "epsilon_start", "epsilon_end", "evaluation_epsilon")
    check.integer(config, "epsilon_decay_steps", minimum=0, maximum=MAX_STEPS)
    if config.actor_epsilon_base is not None:
        check.in_range(config, "actor_epsilon_base", 0, 1, low_open=True, high_open=True)
    check.non_negative(config, "actor_epsilon_spread")


def linear_epsilon(config: EpsilonGreedyConfig, step: jnp.ndarray) -> jnp.ndarray:
    """Epsilon decayed linearly from ``epsilon_start`` to ``epsilon_end``."""
    if config.epsilon_decay_steps == 0:
        return jnp.asarray(config.epsilon_end, jnp.float32)
    fraction = jnp.clip(step / config.epsilon_decay_steps, 0.0, 1.0)
    return config.epsilon_start + fraction * (config.epsilon_end - config.epsilon_start)


def for_actor(config: EpsilonGreedyConfig, actor_id: int, num_actors: int) -> EpsilonGreedyConfig:
    """``config`` with actor ``actor_id`` of ``num_actors``'s own final epsilon (unchanged for one actor)."""
    if num_actors <= 1 or config.actor_epsilon_base is None:
        return config
    epsilon = config.actor_epsilon_base ** (1.0 + config.actor_epsilon_spread * actor_id / (num_actors - 1))
    return dataclasses.replace(config, epsilon_end=float(epsilon))
