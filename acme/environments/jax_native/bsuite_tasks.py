"""bsuite's tasks written in JAX, with bsuite's rules."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from acme import specs
from acme.environments.jax_native.base import JaxEnvironment


class Catch(JaxEnvironment):
    """bsuite's Catch: a ball falls one row per step down a column drawn uniformly at the start; the paddle on the
    bottom row moves left (0), stays (1) or moves right (2), starting in the middle column; when the ball reaches
    the bottom row the episode terminates with reward 1 if the paddle is under it, else -1 (0 before). The
    observation is the ``rows x columns`` board: 1 where the ball and the paddle are, 0 elsewhere."""

    def __init__(self, rows: int = 10, columns: int = 5):
        for name, value in (("rows", rows), ("columns", columns)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 2:
                raise ValueError(f"{name} must be an integer >= 2, got {value!r}.")
        super().__init__(max_episode_steps=rows)  # the ball lands after rows - 1 steps: never truncated
        self.rows, self.columns = rows, columns

    def spec(self) -> specs.EnvironmentSpec:
        return specs.EnvironmentSpec(
            observations=specs.BoundedArray((self.rows, self.columns), np.float32, 0.0, 1.0, name="observation"),
            actions=specs.DiscreteArray(3, dtype=np.int32, name="action"),
            rewards=specs.Array((), np.float32, name="reward"),
            discounts=specs.BoundedArray((), np.float32, 0.0, 1.0, name="discount"),
        )

    def _board(self, physics: jax.Array) -> jax.Array:
        ball_x, ball_y, paddle_x = physics
        board = jnp.zeros((self.rows, self.columns), jnp.float32)
        return board.at[ball_y, ball_x].set(1.0).at[self.rows - 1, paddle_x].set(1.0)

    def initial(self, key):
        physics = jnp.stack([jax.random.randint(key, (), 0, self.columns), 0, self.columns // 2]).astype(jnp.int32)
        return physics, self._board(physics)

    def transition(self, physics, action, key):
        del key
        ball_x, ball_y, paddle_x = physics
        paddle_x = jnp.clip(paddle_x + jnp.asarray(action, jnp.int32) - 1, 0, self.columns - 1)
        physics = jnp.stack([ball_x, ball_y + 1, paddle_x]).astype(jnp.int32)
        terminated = physics[1] == self.rows - 1
        reward = jnp.where(terminated, jnp.where(paddle_x == ball_x, 1.0, -1.0), 0.0)
        return physics, self._board(physics), reward, terminated
