"""JAX-native environments step for step against their reference, their dm_env meaning, and their host view."""

from __future__ import annotations

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from acme import specs
from acme.environments import UnknownEnvironmentError, make_environment
from acme.environments.jax_native import ENVIRONMENTS, FIRST, LAST, MID, CartPole, make_jax_environment


def _trajectories(environment, num_starts: int, num_steps: int, seed: int = 0, start=None):
    """``num_starts`` environments stepped ``num_steps`` times with uniform random actions, in one scan: the states
    before each step, the actions and the timesteps after (episodes restart automatically). ``start(key)`` draws
    the first physics (default: the environment's own reset)."""
    action_spec = environment.spec().actions

    def random_action(key):
        if isinstance(action_spec, specs.DiscreteArray):
            return jax.random.randint(key, (), 0, action_spec.num_values)
        high = jnp.asarray(action_spec.maximum, jnp.float32)
        return jax.random.uniform(key, action_spec.shape, jnp.float32, -1.5, 1.5) * high  # clipped ones too

    def run(key):
        reset_key, start_key, action_key = jax.random.split(key, 3)
        state, _ = environment.reset(reset_key)
        if start is not None:
            state = state._replace(physics=start(start_key), step_type=jnp.int32(MID))
        actions = jax.vmap(random_action)(jax.random.split(action_key, num_steps))

        def one(state, action):
            next_state, timestep = environment.step(state, action)
            return next_state, (state, timestep)

        _, (states, timesteps) = jax.lax.scan(one, state, actions)
        return states, actions, timesteps

    keys = jax.random.split(jax.random.PRNGKey(seed), num_starts)
    return jax.device_get(jax.jit(jax.vmap(run))(keys))


def _uniform(*bounds):
    low, high = (jnp.array(b, jnp.float32) for b in zip(*bounds))
    return lambda key: jax.random.uniform(key, low.shape, jnp.float32, low, high)


def _set_state(dtype):
    return lambda env, physics: setattr(env, "state", np.asarray(physics, dtype))


# How to put a physics state into gymnasium's environment, and states to start from across the whole state space
# (so that every way of ending an episode is met).
REFERENCES = {
    "CartPole-v1": (_set_state(np.float64), _uniform((-2.4, 2.4), (-2, 2), (-0.2, 0.2), (-2, 2))),
    "Acrobot-v1": (
        _set_state(np.float64),
        _uniform((-np.pi, np.pi), (-np.pi, np.pi), (-4 * np.pi, 4 * np.pi), (-9 * np.pi, 9 * np.pi)),
    ),
    "MountainCar-v0": (_set_state(np.float64), _uniform((-1.2, 0.6), (-0.07, 0.07))),
    "MountainCarContinuous-v0": (_set_state(np.float32), _uniform((-1.2, 0.6), (-0.07, 0.07))),
    "Pendulum-v1": (_set_state(np.float64), _uniform((-np.pi, np.pi), (-8, 8))),
}


def test_every_jax_native_environment_is_checked_against_its_reference():
    # catch and MemoryCartPole-v1: the tests after the next one; the MinAtar games: tests/environments/test_minatar.py
    minatar = {f"MinAtar-{game}" for game in ("Asterix", "Breakout", "Freeway", "Seaquest", "SpaceInvaders")}
    assert set(REFERENCES) | {"catch", "MemoryCartPole-v1"} | minatar == set(ENVIRONMENTS)


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_steps_as_gymnasiums_from_the_same_states_and_actions(name):
    """From each state of 64 random-action runs of 100 steps, half from the environment's own starts and half from
    states across the whole state space, gymnasium's environment gives the same next observation (float32
    tolerance), reward and termination."""
    set_state, anywhere = REFERENCES[name]
    # float32 against gymnasium's float64: Acrobot's four RK4 stages at velocities up to 9 pi lose more digits
    tolerance = 1e-4 if name == "Acrobot-v1" else 1e-5
    environment = make_jax_environment(name)
    reference = gymnasium.make(name).unwrapped
    reference.reset(seed=0)
    compared = terminations = 0
    for start in (None, anywhere):
        states, actions, timesteps = _trajectories(environment, num_starts=32, num_steps=100, start=start)
        for run in range(actions.shape[0]):
            for t in range(actions.shape[1]):
                if states.step_type[run, t] == LAST:  # this step restarts the episode: checked below
                    continue
                set_state(reference, states.physics[run, t])
                reference.steps_beyond_terminated = None  # CartPole: each step is a first one from its state
                action = actions[run, t]
                observation, reward, terminated, _, _ = reference.step(action if action.ndim else int(action))
                np.testing.assert_allclose(timesteps.observation[run, t], observation, rtol=tolerance, atol=tolerance)
                np.testing.assert_allclose(timesteps.reward[run, t], reward, rtol=tolerance, atol=tolerance)
                ended = timesteps.step_type[run, t] == LAST and timesteps.discount[run, t] == 0
                assert bool(ended) == terminated, (run, t, states.physics[run, t], action)
                compared += 1
                terminations += terminated
    assert compared > 6_000
    if name != "Pendulum-v1":  # Pendulum never terminates
        assert terminations >= 5, terminations


def test_memory_cartpole_is_cartpole_seen_as_the_host_memory_task_sees_it():
    """The same keys and actions give CartPole's physics, rewards, step types and discounts (CartPole is checked
    against gymnasium above), observed through the indices memory:CartPole-v1 keeps, with that task's spec."""
    from acme.environments.factory import MEMORY_TASKS

    memory = make_jax_environment("MemoryCartPole-v1")
    assert memory.observed == MEMORY_TASKS["CartPole-v1"][1]
    assert specs.make_environment_spec(make_environment("jax:MemoryCartPole-v1")) == specs.make_environment_spec(
        make_environment("memory:CartPole-v1")
    )
    states, actions, timesteps = _trajectories(memory, num_starts=8, num_steps=200)
    full_states, full_actions, full = _trajectories(CartPole(), num_starts=8, num_steps=200)
    np.testing.assert_array_equal(actions, full_actions)
    # Two compiled programs may round the same float32 arithmetic apart (XLA fuses each its own way).
    np.testing.assert_allclose(states.physics, full_states.physics, atol=1e-5)
    np.testing.assert_allclose(timesteps.observation, full.observation[..., list(memory.observed)], atol=1e-5)
    for name in ("step_type", "reward", "discount"):
        np.testing.assert_array_equal(getattr(timesteps, name), getattr(full, name))
    assert (timesteps.step_type == LAST).sum() >= 8  # episodes ended, and restarted


def test_catch_steps_as_bsuites_from_the_same_states_and_actions():
    """From every state of 64 random-action runs of 100 steps (over 600 episodes), bsuite's Catch gives the same
    board, reward and termination."""
    from bsuite.environments.catch import Catch as Reference

    environment = make_jax_environment("catch")
    assert specs.make_environment_spec(make_environment("jax:catch")) == specs.make_environment_spec(
        make_environment("bsuite:catch/0")
    )
    states, actions, timesteps = _trajectories(environment, num_starts=64, num_steps=100)
    reference = Reference(seed=0)
    outcomes = set()
    for run in range(actions.shape[0]):
        for t in range(actions.shape[1]):
            if states.step_type[run, t] == LAST:
                continue
            ball_x, ball_y, paddle_x = (int(v) for v in states.physics[run, t])
            reference._ball_x, reference._ball_y, reference._paddle_x = ball_x, ball_y, paddle_x
            reference._paddle_y, reference._reset_next_step = environment.rows - 1, False
            expected = reference.step(int(actions[run, t]))
            np.testing.assert_array_equal(timesteps.observation[run, t], expected.observation)
            assert timesteps.reward[run, t] == expected.reward and timesteps.step_type[run, t] == expected.step_type
            assert timesteps.discount[run, t] == expected.discount
            outcomes.add(float(expected.reward))
    assert outcomes == {-1.0, 0.0, 1.0}
    starts = timesteps.observation[states.step_type == LAST]  # the first boards of the restarted episodes
    assert (starts[:, 0].sum(axis=1) == 1).all() and (starts[:, -1, environment.columns // 2] == 1).all()
    assert len(set(starts[:, 0].argmax(axis=1))) == environment.columns  # the ball starts in every column


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


def test_a_batch_step_with_a_bound_on_new_episodes_is_step_while_few_restart_together():
    """step_batch(max_starts=K) computes K next-episode starts a step instead of one per environment: the same
    states and timesteps as vmap(step) while at most K environments restart in one step; beyond K, a restarting
    environment starts from a copy of an earlier one's start (checked where CartPole episodes of 3 steps all end
    together)."""
    environment = CartPole(max_episode_steps=3)
    states, _ = jax.vmap(environment.reset)(jax.random.split(jax.random.PRNGKey(0), 6))
    actions = jnp.zeros(6, jnp.int32)

    def play(max_starts):
        def one(state, _):
            state, timestep = environment.step_batch(state, actions, max_starts)
            return state, (state, timestep)

        return jax.jit(lambda s: jax.lax.scan(one, s, None, length=8))(states)[1]

    every = play(None)
    assert jax.tree.map(lambda a, b: bool((a == b).all()), play(6), every) == jax.tree.map(lambda _: True, every)
    two = play(2)
    restarted = np.asarray(every[1].step_type[:, 0]) == FIRST  # all six restart together at steps 3 and 7
    assert restarted.sum() == 2
    first_starts, bounded_starts = every[1].observation[restarted], two[1].observation[restarted]  # [2, 6, 4]
    np.testing.assert_array_equal(bounded_starts[:, :2], first_starts[:, :2])  # the first two: their own
    np.testing.assert_array_equal(bounded_starts[:, 2:], np.tile(first_starts[:, :2], (1, 2, 1)))  # the rest: copies
    assert len({tuple(row) for row in np.asarray(first_starts[0])}) == 6  # unbounded, six different starts
    with pytest.raises(ValueError, match="max_starts must be an integer >= 1 or None, got 0"):
        environment.step_batch(states, actions, 0)


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
    with pytest.raises(
        ValueError,
        match="JAX-native environments: jax:Acrobot-v1, jax:CartPole-v1, jax:MemoryCartPole-v1, jax:MinAtar-Asterix",
    ):
        make_jax_environment("Pong")
