"""n-step transitions made on the device, the same as ``acme.adders.NStepTransitionAdder`` writes them.

Each environment keeps a window of its last ``n`` steps (observation, action,
the reward and environment discount that followed, whether the step is of the
current episode). After every step the window offers ``n`` candidate
transitions, one per start in it, each ending at the newest observation:

* the oldest start once it has ``n`` steps after it (``m = n``);
* at an episode's last timestep, every start of that episode still waiting
  (``m < n`` for the later ones), after which the window is emptied.

So an episode of ``T`` steps yields exactly ``T`` transitions, none spanning two
episodes, with the adder's reward ``sum_k gamma^k (prod_{j<=k} d) r`` and
discount ``gamma^m prod d``. The timestep after a LAST one (the next episode's
FIRST, whose action the environment ignored) adds no step.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from acme import types
from acme.environments.jax_native import LAST


class NStepWindow(NamedTuple):
    """One environment's last ``n`` steps, oldest first (leaves ``[n, ...]``)."""

    observation: Any
    action: Any
    reward: jax.Array
    discount: jax.Array
    valid: jax.Array  # the step is one of the current episode's


def init_window(n_step: int, observation: Any, action: Any) -> NStepWindow:
    """An empty window for observations and actions shaped like ``observation`` and ``action``."""

    def zeros(x):
        return jnp.zeros((n_step, *jnp.shape(x)), jnp.asarray(x).dtype)

    return NStepWindow(
        observation=jax.tree.map(zeros, observation),
        action=jax.tree.map(zeros, action),
        reward=jnp.zeros(n_step, jnp.float32),
        discount=jnp.zeros(n_step, jnp.float32),
        valid=jnp.zeros(n_step, bool),
    )


def add_step(
    window: NStepWindow, timestep: Any, action: Any, next_timestep: Any, gamma: float
) -> tuple[NStepWindow, types.Transition, jax.Array]:
    """Adds the step from ``timestep`` with ``action`` to ``next_timestep``; returns the window, the ``n``
    candidate transitions (leaves ``[n, ...]``) and which of them are complete (``[n]`` booleans)."""
    n_step = window.valid.shape[0]
    acted = timestep.step_type != LAST  # after a LAST timestep the environment started a new episode instead

    def push(old, new):
        return jnp.concatenate([old[1:], jnp.asarray(new, old.dtype)[None]], axis=0)

    window = NStepWindow(
        observation=jax.tree.map(push, window.observation, timestep.observation),
        action=jax.tree.map(push, window.action, action),
        reward=push(window.reward, next_timestep.reward),
        discount=push(window.discount, next_timestep.discount),
        valid=push(window.valid, acted),
    )

    def back(later, step):  # (n-step reward, discount) from each start to the newest step, newest first
        reward, discount = step
        total_reward, total_discount = later
        out = (reward + gamma * discount * total_reward, gamma * discount * total_discount)
        return out, out

    _, (rewards, discounts) = jax.lax.scan(
        back, (jnp.float32(0.0), jnp.float32(1.0)), (window.reward, window.discount), reverse=True
    )
    ended = acted & (next_timestep.step_type == LAST)
    complete = window.valid & (ended | (jnp.arange(n_step) == 0))
    transitions = types.Transition(
        observation=window.observation,
        action=window.action,
        reward=rewards,
        discount=discounts,
        next_observation=jax.tree.map(
            lambda x: jnp.broadcast_to(x, (n_step, *jnp.shape(x))), next_timestep.observation
        ),
        extras=(),
    )
    window = window._replace(valid=window.valid & ~ended)
    return window, transitions, complete
