"""Jumanji's environments: ``reset(key)`` and ``step(state, action)`` give dm_env-like timesteps (termination has
discount 0, the library's own time limit ends an episode with discount 1), and structured observations (a
namedtuple of arrays, here a dict of them, the action mask included)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from acme.environments.jax_libraries.adapter import LibraryEnvironment, as_dict, bounded_actions, discrete_actions

# Some of jumanji 1.1.2's ids whose action is one DiscreteArray (Sokoban-v0 is one too, but downloads its levels).
SINGLE_DISCRETE_ACTION = ("Game2048-v1", "Maze-v0", "PacMan-v1", "Snake-v1")
DEFAULT_TIME_LIMIT = 10_000  # for an environment without its own time_limit (the on-device evaluation's scan length)


def action_spec_of(spec: Any):
    """One discrete action (jumanji's ``DiscreteArray``) or a float ``BoundedArray``; multi-discrete actions are
    refused, with the reason."""
    name = type(spec).__name__
    if name == "DiscreteArray":
        return discrete_actions(spec.num_values)
    if name == "BoundedArray" and jnp.issubdtype(jnp.dtype(spec.dtype), jnp.floating):
        return bounded_actions(tuple(spec.shape), spec.minimum, spec.maximum)
    raise ValueError(
        f"Its action space is a {name} of shape {tuple(spec.shape)}: the agents take one discrete action "
        f"(DiscreteArray) or a float vector (BoundedArray); jumanji ids with one discrete action include "
        f"{', '.join(SINGLE_DISCRETE_ACTION)}."
    )


class JumanjiEnvironment(LibraryEnvironment):
    """``env``; its physics is ``(state, cut_short)``, the second saying whether its last step ended the episode
    at the library's time limit."""

    def __init__(self, env: Any):
        limit = int(getattr(env, "time_limit", DEFAULT_TIME_LIMIT))
        super().__init__(action_spec_of(env.action_spec), max_episode_steps=limit)
        self.library_environment = env

    def initial(self, key):
        state, timestep = self.library_environment.reset(key)
        return (state, jnp.bool_(False)), as_dict(timestep.observation)

    def transition(self, physics, action, key):
        del key  # the library's own key is in its state
        state, timestep = self.library_environment.step(physics[0], action)
        last = timestep.last()
        terminated = last & (timestep.discount == 0)
        return (state, last & ~terminated), as_dict(timestep.observation), timestep.reward, terminated

    def truncated(self, physics):
        return physics[1]
