"""Brax's environments and MuJoCo Playground's, which share Brax's interface: ``reset(key)`` and
``step(state, action)`` of a state holding ``obs``, ``reward`` and ``done`` (termination), actions in [-1, 1]^n and
no time limit of their own (their training wrappers add one: 1,000 steps for both)."""

from __future__ import annotations

from typing import Any, Mapping

import jax.numpy as jnp

from acme.environments.jax_libraries.adapter import LibraryEnvironment, bounded_actions

POLICY_OBSERVATION = "state"  # Playground's dict observations: the policy's entry (the others are for critics)


class BraxStyleEnvironment(LibraryEnvironment):
    """``env`` with episodes of at most ``max_episode_steps``; the library's own randomness lives in its state."""

    def __init__(self, env: Any, max_episode_steps: int):
        super().__init__(bounded_actions((int(env.action_size),), -1.0, 1.0), max_episode_steps=max_episode_steps)
        self.library_environment = env

    def initial(self, key):
        state = self.library_environment.reset(key)
        return state, policy_observation(state.obs)

    def transition(self, physics, action, key):
        del key  # the library's own key is in its state
        state = self.library_environment.step(physics, action)
        return state, policy_observation(state.obs), state.reward, jnp.asarray(state.done) > 0.5


def policy_observation(observation: Any) -> Any:
    """The observation the policy sees: Playground's ``"state"`` entry where it gives a dict with one (its
    ``"privileged_state"`` is meant for critics only), else the observation as it is."""
    if isinstance(observation, Mapping) and POLICY_OBSERVATION in observation:
        return observation[POLICY_OBSERVATION]
    return observation
