"""JAX-native environments step for step against their reference, their dm_env meaning, and their host view."""

from __future__ import annotations

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from acme import specs
from acme.environments import UnknownEnvironmentError, make_environment
from acme.environments.jax_native import FIRST, LAST, MID, CartPole, make_jax_environment


def _trajectories(environment, num_starts: int, num_steps: int, seed: int = 0):
    """``num_starts`` environments stepped ``num_steps`` times with uniform random actions, in one scan: the states
    before each step, the actions and the timesteps after (episodes restart automatically)."""
    num_actions = environment.spec().actions.num_values

    def run(key):
        reset_key, action_key = jax.random.split(key)
        state, _ = environment.reset(reset_key)
        actions = jax.random.randint(action_key, (num_steps,), 0, num_actions)

        def one(state, action):
            next_state, timestep = environment.step(state, action)
            return next_state, (state, timestep)

        _, (states, timesteps) = jax.lax.scan(one, state, actions)
        return states, actions, timesteps

    keys = jax.random.split(jax.random.PRNGKey(seed), num_starts)
    return jax.device_get(jax.jit(jax.vmap(run))(keys))


def test_cartpole_steps_as_gymnasiums_from_the_same_states_and_actions():
    """From each state of 64 random-action runs of 300 steps (over 2,000 episode steps from 64 starts), gymnasium's
    CartPole-v1 gives the same next state (float32 tolerance), reward and termination."""
    states, actions, timesteps = _trajectories(CartPole(), num_starts=64, num_steps=300)
    reference = gymnasium.make("CartPole-v1").unwrapped
    reference.reset(seed=0)
    compared = terminations = 0
    for run in range(actions.shape[0]):
        for t in range(actions.shape[1]):
            if states.step_type[run, t] == LAST:  # this step restarts the episode: checked below
                continue
            reference.state = np.asarray(states.physics[run, t], np.float64)
            reference.steps_beyond_terminated = None
            observation, reward, terminated, _, _ = reference.step(int(actions[run, t]))
            np.testing.assert_allclose(timesteps.observation[run, t], observation, rtol=1e-5, atol=1e-6)
            assert timesteps.reward[run, t] == reward
            assert bool(timesteps.step_type[run, t] == LAST and timesteps.discount[run, t] == 0) == terminated
            compared += 1
            terminations += terminated
    assert compared > 15_000 and terminations > 500  # many episodes, each ending in its own way


def test_episodes_restart_by_themselves_with_dm_env_step_types_and_discounts():
    states, _, timesteps = _trajectories(CartPole(), num_starts=8, num_steps=200)
    after_last = states.step_type == LAST  # the step taken from a LAST timestep
    assert after_last.any()
    assert (timesteps.step_type[after_last] == FIRST).all()
    assert (timesteps.reward[after_last] == 0).all() and (timesteps.discount[after_last] == 1).all()
    assert (np.abs(timesteps.observation[after_last]) <= 0.05).all()  # a fresh start, as gymnasium draws it
    assert (states.steps[after_last] > 0).all() and (states.steps[:, 1:][after_last[:, :-1]] == 0).all()
    others = ~after_last
    assert set(np.unique(timesteps.step_type[others])) <= {MID, LAST}
    assert (timesteps.discount[others & (timesteps.step_type == MID)] == 1).all()


def test_truncation_at_the_step_limit_keeps_the_discount():
    """An episode cut by the step limit ends with LAST and discount 1, as gymnasium's TimeLimit (500 steps) does."""
    assert CartPole().max_episode_steps == gymnasium.spec("CartPole-v1").max_episode_steps == 500
    environment = CartPole(max_episode_steps=3)
    state, first = environment.reset(jax.random.PRNGKey(1))
    kinds = [int(first.step_type)]
    for _ in range(4):
        state, timestep = environment.step(state, jnp.int32(0))
        kinds.append((int(timestep.step_type), float(timestep.discount)))
    assert kinds == [FIRST, (MID, 1.0), (MID, 1.0), (LAST, 1.0), (FIRST, 1.0)]
    with pytest.raises(ValueError, match="max_episode_steps must be an integer >= 1, got 0"):
        CartPole(max_episode_steps=0)


def test_the_host_view_is_a_dm_env_with_the_gymnasium_environments_spec():
    environment = make_environment("jax:CartPole-v1", seed=3)
    assert specs.make_environment_spec(environment) == specs.make_environment_spec(
        make_environment("gymnasium:CartPole-v1")
    )
    timestep = environment.reset()
    assert timestep.first() and timestep.reward is None and timestep.observation.dtype == np.float32
    length = 0
    while not timestep.last():
        timestep = environment.step(0)  # always left: the pole falls within a few dozen steps
        length += 1
    assert timestep.discount == 0 and timestep.reward == 1.0 and 5 < length < 100
    assert environment.step(0).first()  # dm_env: a step after LAST starts a new episode


def test_unknown_jax_environments_are_refused_with_the_ones_there_are():
    with pytest.raises(UnknownEnvironmentError, match=r"no JAX-native environment 'CartPole-v0'.*jax:CartPole-v1"):
        make_environment("jax:CartPole-v0")
    with pytest.raises(ValueError, match="JAX-native environments: jax:CartPole-v1"):
        make_jax_environment("Pong")
