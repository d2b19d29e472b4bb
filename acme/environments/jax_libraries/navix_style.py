"""Navix's MiniGrid environments: ``reset(key)`` and ``step(timestep, action)`` on its ``Timestep``, whose
``step_type`` says transition (0), truncation at the environment's ``max_steps`` (1) or termination (2). Made with
its automatic reset off; the adapter starts episodes itself."""

from __future__ import annotations

from typing import Any

from acme.environments.jax_libraries.adapter import LibraryEnvironment, discrete_actions

TRUNCATION, TERMINATION = 1, 2  # navix's StepType


class NavixEnvironment(LibraryEnvironment):
    """``env`` (made with ``disable_autoreset=True``); its physics is navix's ``Timestep``."""

    def __init__(self, env: Any):
        if not env.disable_autoreset:
            raise ValueError("Make the navix environment with disable_autoreset=True: the adapter resets it.")
        super().__init__(discrete_actions(len(env.action_set)), max_episode_steps=int(env.max_steps))
        self.library_environment = env

    def initial(self, key):
        timestep = self.library_environment.reset(key)
        return timestep, timestep.observation

    def transition(self, physics, action, key):
        del key  # the library's own key is in its state
        timestep = self.library_environment.step(physics, action)
        return timestep, timestep.observation, timestep.reward, timestep.step_type == TERMINATION

    def truncated(self, physics):
        return physics.step_type == TRUNCATION
