"""MinAtar's Breakout (Young & Tian, 2019) written in JAX, with the rules of the ``minatar`` package (1.0.15).

A 10x10 board seen as 4 binary channels (paddle, ball, the ball's previous cell as a trail, bricks). The paddle on
the bottom row moves one cell left or right or stays; the ball moves one cell along a diagonal each step, bounces
off the walls, the ceiling and the bricks (+1 for each brick broken; three rows of bricks, refilled when the ball
reaches the bottom row with none left), is sent back up by the paddle (to the other side when it meets the
paddle's edge), and ends the episode when it reaches the bottom row anywhere else.

As in ``minatar.Environment``: sticky actions (with probability ``sticky_action_prob``, 0.1 by default, the last
action is repeated instead) and the ball starting at either top corner of the brick rows. The actions are the
game's minimal set: no-op, left, right. Episodes are truncated after ``max_episode_steps`` (10,000 by default;
the package has no limit, and a policy that keeps the ball up plays forever).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from acme import specs
from acme.environments.jax_native.base import JaxEnvironment

SIZE = 10
CHANNELS = ("paddle", "ball", "trail", "brick")
ACTIONS = ("noop", "left", "right")  # MinAtar's full-set indices 0, 1 and 3

# The ball's four diagonal directions, in MinAtar's numbering: up-left, up-right, down-right, down-left.
_DX = jnp.array([-1, 1, 1, -1], jnp.int32)
_DY = jnp.array([-1, -1, 1, 1], jnp.int32)
_FLIP_X = jnp.array([1, 0, 3, 2], jnp.int32)  # off a side wall
_FLIP_Y = jnp.array([3, 2, 1, 0], jnp.int32)  # off the ceiling, a brick or the paddle's middle
_REVERSE = jnp.array([2, 3, 0, 1], jnp.int32)  # off the paddle's edge: back the way it came


class BreakoutPhysics(NamedTuple):
    ball_x: jax.Array
    ball_y: jax.Array
    ball_dir: jax.Array
    last_x: jax.Array
    last_y: jax.Array
    paddle: jax.Array
    bricks: jax.Array  # [10, 10] bool
    strike: jax.Array  # the ball hit a brick on the previous step
    last_action: jax.Array  # for sticky actions


def _initial_bricks() -> jax.Array:
    return jnp.zeros((SIZE, SIZE), bool).at[1:4, :].set(True)


class Breakout(JaxEnvironment):
    """MinAtar Breakout; see the module docstring."""

    def __init__(self, sticky_action_prob: float = 0.1, max_episode_steps: int = 10_000):
        if isinstance(sticky_action_prob, bool) or not 0.0 <= float(sticky_action_prob) <= 1.0:
            raise ValueError(f"sticky_action_prob must be a probability in [0, 1], got {sticky_action_prob!r}.")
        super().__init__(max_episode_steps=max_episode_steps)
        self.sticky_action_prob = float(sticky_action_prob)

    def spec(self) -> specs.EnvironmentSpec:
        return specs.EnvironmentSpec(
            observations=specs.BoundedArray((SIZE, SIZE, len(CHANNELS)), np.float32, 0.0, 1.0, name="observation"),
            actions=specs.DiscreteArray(len(ACTIONS), dtype=np.int32, name="action"),
            rewards=specs.Array((), np.float32, name="reward"),
            discounts=specs.BoundedArray((), np.float32, 0.0, 1.0, name="discount"),
        )

    def observe(self, physics: BreakoutPhysics) -> jax.Array:
        """The ``[10, 10, 4]`` board of ``physics`` (1.0 where an object is)."""
        board = jnp.zeros((SIZE, SIZE, len(CHANNELS)), jnp.float32)
        board = board.at[SIZE - 1, physics.paddle, 0].set(1.0)
        board = board.at[physics.ball_y, physics.ball_x, 1].set(1.0)
        board = board.at[physics.last_y, physics.last_x, 2].set(1.0)
        return board.at[:, :, 3].set(physics.bricks.astype(jnp.float32))

    def initial(self, key):
        right = jax.random.bernoulli(key)
        ball_x = jnp.where(right, SIZE - 1, 0).astype(jnp.int32)
        ball_dir = jnp.where(right, 3, 2).astype(jnp.int32)  # down-left from the right corner, down-right from the left
        ball_y = jnp.int32(3)
        physics = BreakoutPhysics(
            ball_x=ball_x,
            ball_y=ball_y,
            ball_dir=ball_dir,
            last_x=ball_x,
            last_y=ball_y,
            paddle=jnp.int32(4),
            bricks=_initial_bricks(),
            strike=jnp.bool_(False),
            last_action=jnp.int32(0),
        )
        return physics, self.observe(physics)

    def transition(self, physics, action, key):
        action = jnp.asarray(action, jnp.int32)
        sticky = jax.random.uniform(key) < self.sticky_action_prob
        action = jnp.where(sticky, physics.last_action, action)
        paddle = jnp.clip(physics.paddle + jnp.where(action == 1, -1, jnp.where(action == 2, 1, 0)), 0, SIZE - 1)

        ball_dir = physics.ball_dir
        x = physics.ball_x + _DX[ball_dir]
        y = physics.ball_y + _DY[ball_dir]
        off_side = (x < 0) | (x > SIZE - 1)
        x = jnp.clip(x, 0, SIZE - 1)
        ball_dir = jnp.where(off_side, _FLIP_X[ball_dir], ball_dir)

        off_ceiling = y < 0
        row = jnp.clip(y, 0, SIZE - 1)  # y is -1 past the ceiling, where no brick is looked at
        into_brick = ~off_ceiling & physics.bricks[row, x]
        breaks = into_brick & ~physics.strike
        at_bottom = ~off_ceiling & ~into_brick & (y == SIZE - 1)
        middle = at_bottom & (physics.ball_x == paddle)
        edge = at_bottom & ~middle & (x == paddle)
        missed = at_bottom & ~middle & ~edge

        bricks = physics.bricks.at[row, x].set(physics.bricks[row, x] & ~breaks)
        bricks = jnp.where(at_bottom & ~bricks.any(), _initial_bricks(), bricks)
        ball_dir = jnp.where(edge, _REVERSE[ball_dir], ball_dir)
        ball_dir = jnp.where(off_ceiling | breaks | middle, _FLIP_Y[ball_dir], ball_dir)
        y = jnp.where(off_ceiling, 0, jnp.where(breaks | middle | edge, physics.ball_y, y))

        next_physics = BreakoutPhysics(
            ball_x=x,
            ball_y=y,
            ball_dir=ball_dir,
            last_x=physics.ball_x,
            last_y=physics.ball_y,
            paddle=paddle,
            bricks=bricks,
            strike=into_brick,  # a ball still in a brick's cell on the next step breaks nothing
            last_action=action,
        )
        return next_physics, self.observe(next_physics), breaks.astype(jnp.float32), missed
