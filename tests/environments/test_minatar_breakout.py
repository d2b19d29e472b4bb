"""The JAX-native MinAtar Breakout step for step against the ``minatar`` package's own game."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from minatar import Environment

from acme import specs
from acme.environments import make_environment
from acme.environments.jax_native import LAST, make_jax_environment
from acme.environments.jax_native.minatar import Breakout, BreakoutPhysics


def _physics_of(reference: Environment) -> BreakoutPhysics:
    game = reference.env
    return BreakoutPhysics(
        ball_x=jnp.int32(game.ball_x),
        ball_y=jnp.int32(game.ball_y),
        ball_dir=jnp.int32(game.ball_dir),
        last_x=jnp.int32(game.last_x),
        last_y=jnp.int32(game.last_y),
        paddle=jnp.int32(game.pos),
        bricks=jnp.asarray(game.brick_map == 1),
        strike=jnp.bool_(game.strike),
        last_action=jnp.int32(0),
    )


def _tracking_action(game, rng: np.random.Generator, epsilon: float) -> int:
    """Moves the paddle under the ball's next column (a policy that keeps the ball up for hundreds of steps),
    with a uniformly random action with probability ``epsilon``."""
    if rng.random() < epsilon:
        return int(rng.integers(3))
    next_x = game.ball_x + (-1, 1, 1, -1)[game.ball_dir]
    return 0 if next_x == game.pos else (1 if next_x < game.pos else 2)


@pytest.mark.parametrize("epsilon", [1.0, 0.1, 0.02])
def test_steps_as_the_minatar_package_from_the_same_states_and_actions(epsilon):
    """Episodes of a random policy (short ones) and of a tracking policy with some random actions (long ones; the
    most precise breaks every brick and has the rows refilled) give, at every step, the package's board, reward
    and termination."""
    environment = Breakout(sticky_action_prob=0.0)
    transition = jax.jit(environment.transition)
    reference = Environment("breakout", sticky_action_prob=0.0)
    reference.seed(7)
    minimal = reference.minimal_action_set()
    rng = np.random.default_rng(0)
    steps, best, starts = 0, 0.0, set()
    for _ in range(20):
        reference.reset()
        physics = _physics_of(reference)
        starts.add((reference.env.ball_x, reference.env.ball_dir))
        np.testing.assert_array_equal(environment.observe(physics), reference.state().astype(np.float32))
        episode_return, terminal = 0.0, False
        while not terminal and steps < 20_000:
            action = _tracking_action(reference.env, rng, epsilon)
            reward, terminal = reference.act(minimal[action])
            physics, observation, my_reward, my_terminal = transition(physics, jnp.int32(action), jax.random.key(0))
            np.testing.assert_array_equal(observation, reference.state().astype(np.float32))
            assert (float(my_reward), bool(my_terminal)) == (reward, terminal), steps
            episode_return += reward
            steps += 1
        best = max(best, episode_return)
    assert starts == {(0, 2), (9, 3)}  # both corners
    if epsilon < 0.1:
        assert best > 30  # all 30 bricks broken and the rows refilled in one episode


def test_sticky_actions_repeat_the_last_action_with_their_probability():
    """Pressing a random direction each step, the paddle follows the press except, with probability 0.1, when it
    repeats the previous move instead."""
    environment = Breakout()
    state, _ = environment.reset(jax.random.key(3))
    presses = jax.random.randint(jax.random.key(4), (4000,), 1, 3)

    def one(state, press):
        next_state, timestep = environment.step(state, press)
        moved = next_state.physics.paddle - state.physics.paddle
        valid = (state.step_type != LAST) & (timestep.step_type != LAST)
        valid &= (state.physics.paddle > 0) & (state.physics.paddle < 9)
        return next_state, (moved, valid, state.physics.last_action)

    _, (moved, valid, previous) = jax.lax.scan(one, state, presses)
    followed = np.where(np.asarray(presses) == 1, -1, 1) == np.asarray(moved)
    informative = np.asarray(valid) & (np.asarray(previous) != np.asarray(presses))  # a repeat would differ
    assert informative.sum() > 1000
    assert 0.07 < 1 - followed[informative].mean() < 0.13
    never = Breakout(sticky_action_prob=1.0)  # the first action (no-op) forever
    state, _ = never.reset(jax.random.key(0))
    state, _ = never.step(state, jnp.int32(2))
    assert int(state.physics.paddle) == 4
    with pytest.raises(ValueError, match=r"sticky_action_prob must be a probability in \[0, 1\], got 1.5"):
        Breakout(sticky_action_prob=1.5)


def test_breakout_by_id_on_the_host_and_on_the_device():
    environment = make_environment("jax:MinAtar-Breakout", seed=0)
    spec = specs.make_environment_spec(environment)
    assert spec.observations.shape == (10, 10, 4) and spec.actions.num_values == 3
    assert make_jax_environment("MinAtar-Breakout").max_episode_steps == 10_000
    timestep = environment.reset()
    episode_return = 0.0
    while not timestep.last():
        timestep = environment.step(0)
        episode_return += timestep.reward
    assert timestep.discount == 0 and episode_return <= 3  # a still paddle misses the ball at once
