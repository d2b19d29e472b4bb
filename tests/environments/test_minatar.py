"""The five MinAtar games (pgx's, behind ``JaxEnvironment``) step for step against the ``minatar`` package's own.

The reference runs with sticky actions off and its random numbers recorded: on a step where the reference drew
spawns (Asterix's enemies and treasure, Freeway's car speeds, Seaquest's enemies and divers), the JAX game takes
pgx's deterministic step with the same draws (and the wrapper's repairs); on every other step, the wrapper's own
``transition``. Episodes come from a random policy and from policies that survive for hundreds of steps (a
lookahead in copies of the reference), with some random actions; every step must give the reference's board,
reward and termination.
"""

from __future__ import annotations

import copy
import importlib
import pickle
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from minatar import Environment

from acme import specs
from acme.environments import make_environment
from acme.environments.jax_native import LAST, MID, make_jax_environment
from acme.environments.jax_native import minatar as games


class _Recording:
    """The game's random numbers (a seeded ``RandomState``), each draw kept until ``take`` hands them over."""

    def __init__(self, seed: int):
        self._random = np.random.RandomState(seed)
        self.draws: list = []

    def rand(self, *shape):
        return self._keep(self._random.rand(*shape))

    def randint(self, *args, **kwargs):
        return self._keep(self._random.randint(*args, **kwargs))

    def _keep(self, value):
        self.draws.append(np.copy(value))  # a copy: Freeway multiplies its draw in place
        return value

    def take(self) -> list:
        draws, self.draws = self.draws, []
        return draws


class _Calm:
    """The random numbers of a lookahead's copy: every spawn it sees comes from the right."""

    def rand(self, *shape):
        return np.full(shape, 0.9) if shape else 0.9

    def randint(self, low, high=None, size=None):
        value = 0 if high is None else low
        return np.full(size, value) if size else value


def _successors(game, actions):
    """``(game after, reward, terminal)`` for each action, in copies of ``game`` (pickled: faster than deepcopy)."""
    random, game.random = game.random, _Calm()
    try:
        frozen = pickle.dumps(game, pickle.HIGHEST_PROTOCOL)
    finally:
        game.random = random
    successors = []
    for action in actions:
        after = pickle.loads(frozen)
        successors.append((after, *after.act(action)))
    return successors


def _lookahead(score: Callable, depth: int = 2) -> Callable:
    """The policy that takes an action after which some continuation survives ``depth`` steps, with the most reward
    on the way, then the best ``score`` of the game reached; ties at random."""

    def value(game, actions, depth):
        if depth == 0:
            return (0.0, score(game))
        best = (-np.inf, 0.0)
        for after, reward, terminal in _successors(game, actions):
            if not terminal:
                rest = value(after, actions, depth - 1)
                best = max(best, (reward + rest[0], rest[1]))
        return best

    def policy(game, actions, rng):
        values = []
        for after, reward, terminal in _successors(game, actions):
            rest = value(after, actions, depth - 1) if not terminal else (-np.inf, 0.0)
            values.append((reward + rest[0], rest[1]))
        best = [i for i, v in enumerate(values) if v == max(values)]
        return int(best[rng.integers(len(best))])

    return policy


def _track_ball(game, actions, rng):
    """Breakout: the paddle under the ball's next column (keeps the ball up for hundreds of steps), or at times
    beside it, so that the paddle's edge sends the ball back the way it came."""
    next_x = game.ball_x + (-1, 1, 1, -1)[game.ball_dir]
    if game.ball_y >= 7 and rng.random() < 0.3:
        next_x += rng.choice((-1, 1))
    return 0 if next_x == game.pos else (1 if next_x < game.pos else 2)


def _near_gold(game):
    golds = [abs(e[0] - game.player_x) + abs(e[1] - game.player_y) for e in game.entities if e is not None and e[3]]
    return -min(golds, default=0)


def _under_aliens(game):
    columns = np.flatnonzero(game.alien_map.sum(0))
    return -np.abs(columns - game.pos).min(initial=10) + 0.5 * game.f_bullet_map.sum()


def _dive_and_rescue(game):
    if game.diver_count == 6 or (game.diver_count > 0 and game.oxygen < 50):
        return -10 * game.sub_y  # up for air, or to cash in six divers
    divers = [abs(d[0] - game.sub_x) + abs(d[1] - game.sub_y) for d in game.divers]
    return -min(divers, default=abs(game.sub_y - 4)) + 0.5 * len(game.f_bullets)


def _cross(game):
    return -game.pos


class _Reference(NamedTuple):
    name: str  # minatar's
    policy: Callable  # (game, minimal actions, rng) -> index into the minimal actions
    spawns: Callable | None  # (game before the step, its draws) -> pgx's _step_det keywords


def _asterix_spawns(game, draws):
    lr, gold, *slot = draws
    empty = [i for i, e in enumerate(game.entities) if e is None]
    return dict(
        lr=jnp.bool_(lr < 1 / 2), is_gold=jnp.bool_(gold < 1 / 3), slot=jnp.int32(empty[slot[0]] if slot else 0)
    )


def _freeway_cars(draws):
    speeds, signs = draws
    return dict(speeds=jnp.asarray(speeds, jnp.int32), directions=jnp.asarray(np.sign(signs - 0.5), jnp.int32))


def _seaquest_spawns(game, draws):
    draws = list(draws)
    spawns = dict(enemy_lr=False, is_sub=False, enemy_y=1, diver_lr=False, diver_y=1)  # unread where none spawns
    if game.e_spawn_timer == 0:
        lr, sub, y, *draws = draws
        spawns.update(enemy_lr=lr < 1 / 2, is_sub=sub < 1 / 3, enemy_y=y)
    if game.d_spawn_timer == 0:
        lr, y = draws
        spawns.update(diver_lr=lr < 1 / 2, diver_y=y)
    return {k: jnp.asarray(v, jnp.int32 if k.endswith("_y") else jnp.bool_) for k, v in spawns.items()}


REFERENCES = {
    "Asterix": _Reference("asterix", _lookahead(_near_gold), _asterix_spawns),
    "Breakout": _Reference("breakout", _track_ball, None),
    "Freeway": _Reference("freeway", _lookahead(_cross, depth=1), lambda game, draws: _freeway_cars(draws)),
    "Seaquest": _Reference("seaquest", _lookahead(_dive_and_rescue), _seaquest_spawns),
    "SpaceInvaders": _Reference("space_invaders", _lookahead(_under_aliens), None),
}

# Per game: (epsilon, steps) of each run, the episodes within a run cut at ``steps`` in all; epsilon 1 is the random
# policy, and the others survive for hundreds of steps.
RUNS = {
    "Asterix": ((1.0, 300), (0.05, 1200)),
    "Breakout": ((1.0, 300), (0.02, 3000)),
    "Freeway": ((1.0, 300), (0.1, 2200)),
    "Seaquest": ((1.0, 300), (0.02, 1400)),
    "SpaceInvaders": ((1.0, 300), (0.05, 1300)),
}


def _pgx_initial(environment, module, game: str, draws):
    """pgx's state of the game the reference has just reset, its random start made with the reference's draws."""
    if game == "Breakout":
        (start,) = draws
        physics = module._init_det(jnp.int32(start))
    elif game == "Freeway":
        physics = module._init_det(**_freeway_cars(draws))
    else:  # no random start
        assert not draws
        physics, _ = environment.initial(jax.random.key(0))
    physics = physics.replace(legal_action_mask=environment._pgx.legal_action_mask)
    return physics.replace(observation=environment._pgx.observe(physics))


@pytest.mark.parametrize("game", sorted(REFERENCES))
def test_steps_as_the_minatar_package_with_its_draws(game):
    """Random episodes and surviving ones (hundreds of steps; the runs reach the game's later stages: ramped
    difficulty, refilled bricks, new waves, six divers rescued) give the package's board, reward and termination at
    every step."""
    reference_spec = REFERENCES[game]
    environment = getattr(games, game)(sticky_action_prob=0.0)
    module = importlib.import_module(f"pgx_minatar.{games.GAMES[game][0]}")
    minimal = games.GAMES[game][3]

    @jax.jit
    def with_draws(physics, action, draws):
        stepped = module._step_det(physics, action, **draws)  # as pgx's step does with the draws of its key
        after = environment.repair(physics, stepped.replace(observation=environment._pgx.observe(stepped)))
        return after, environment.observe(after), after.rewards[0], after.terminated

    transition = jax.jit(environment.transition)
    reference = Environment(reference_spec.name, sticky_action_prob=0.0)
    reference.env.random = recording = _Recording(seed=1)
    rng, key = np.random.default_rng(0), jax.random.key(0)  # the key draws nothing: sticky actions are off
    seen = {"steps": 0, "spawn steps": 0, "best return": 0.0, "longest": 0, "ramp": 0}
    for epsilon, budget in RUNS[game]:
        steps = 0
        while steps < budget:
            reference.reset()
            physics = _pgx_initial(environment, module, game, recording.take())
            np.testing.assert_array_equal(environment.observe(physics), reference.state())
            terminal, episode_return, length = False, 0.0, 0
            while not terminal and steps < budget:
                if rng.random() < epsilon:
                    action = int(rng.integers(len(minimal)))
                else:
                    action = reference_spec.policy(reference.env, [minimal[a] for a in range(len(minimal))], rng)
                before = copy.deepcopy(reference.env, {id(reference.env.random): None})
                reward, terminal = reference.act(minimal[action])
                draws = recording.take()
                if draws:
                    spawns = reference_spec.spawns(before, draws)
                    physics, board, my_reward, my_terminal = with_draws(physics, jnp.int32(minimal[action]), spawns)
                    seen["spawn steps"] += 1
                else:
                    physics, board, my_reward, my_terminal = transition(physics, jnp.int32(action), key)
                where = f"{game}, step {length} of an episode, epsilon {epsilon}, action {action}"
                np.testing.assert_array_equal(board, reference.state(), err_msg=where)
                assert (float(my_reward), bool(my_terminal)) == (float(reward), bool(terminal)), where
                episode_return += reward
                steps += 1
                length += 1
            seen["best return"] = max(seen["best return"], episode_return)
            seen["longest"] = max(seen["longest"], length)
            seen["ramp"] = max(seen["ramp"], getattr(reference.env, "ramp_index", 0))
        seen["steps"] += steps
    assert seen["longest"] >= 300, seen  # a policy that survives
    if game in ("Asterix", "Freeway", "Seaquest"):
        assert seen["spawn steps"] >= 20, seen
    if game == "Breakout":
        assert seen["best return"] > 30, seen  # all 30 bricks broken and the rows refilled in one episode
    if game in ("Asterix", "Seaquest", "SpaceInvaders"):
        assert seen["ramp"] >= 2, seen  # the difficulty ramped (Seaquest: surfaced, SpaceInvaders: waves cleared)
    if game == "Seaquest":
        assert seen["best return"] > 20, seen


def test_sticky_actions_repeat_the_last_action_with_their_probability():
    """Breakout, pressing a random direction each step: the paddle follows the press except, with probability 0.1,
    when it repeats the previous move instead."""
    environment = games.Breakout()
    state, _ = environment.reset(jax.random.key(3))
    presses = jax.random.randint(jax.random.key(4), (4000,), 1, 3)  # left or right

    def one(state, press):
        next_state, timestep = environment.step(state, press)
        moved = next_state.physics._pos - state.physics._pos
        valid = (state.step_type != LAST) & (timestep.step_type != LAST)
        valid &= (state.physics._pos > 0) & (state.physics._pos < 9)
        return next_state, (moved, valid, state.physics._last_action)

    _, (moved, valid, previous) = jax.lax.scan(one, state, presses)
    followed = np.where(np.asarray(presses) == 1, -1, 1) == np.asarray(moved)
    previous_press = np.select([np.asarray(previous) == 1, np.asarray(previous) == 3], [1, 2], 0)  # the full set's
    informative = np.asarray(valid) & (previous_press != np.asarray(presses))  # a repeat would differ
    assert informative.sum() > 1000
    assert 0.07 < 1 - followed[informative].mean() < 0.13
    with pytest.raises(ValueError, match=r"sticky_action_prob must be a probability in \[0, 1\], got 1.5"):
        games.Breakout(sticky_action_prob=1.5)


@pytest.mark.parametrize("game", sorted(REFERENCES))
def test_always_sticky_plays_the_first_no_op_forever(game):
    """With sticky_action_prob 1, any actions play as the no-op (the action before the first one)."""
    always = getattr(games, game)(sticky_action_prob=1.0)
    rollout = jax.jit(lambda actions: jax.lax.scan(always.step, always.reset(jax.random.key(2))[0], actions)[1])
    pressed = rollout(jax.random.randint(jax.random.key(1), (200,), 0, always.spec().actions.num_values))
    idle = rollout(jnp.zeros(200, jnp.int32))  # the same keys: the same spawns
    jax.tree.map(np.testing.assert_array_equal, pressed, idle)


def test_the_full_action_set_is_minatars_six():
    """``use_minimal_action_set=False``: the package's own six actions (Breakout's up, down and fire do nothing)."""
    environment = games.Breakout(sticky_action_prob=0.0, use_minimal_action_set=False)
    assert environment.spec().actions.num_values == 6 and environment.actions[5] == "fire"
    physics, _ = environment.initial(jax.random.key(0))
    transition = jax.jit(environment.transition)
    positions = [int(transition(physics, jnp.int32(a), jax.random.key(0))[0]._pos) for a in range(6)]
    assert positions == [4, 3, 4, 5, 4, 4]
    with pytest.raises(TypeError, match="make one of Asterix, Breakout, Freeway, Seaquest, SpaceInvaders"):
        games.MinAtar()


@pytest.mark.parametrize("game", sorted(REFERENCES))
def test_each_game_by_id_on_the_host_and_on_the_device(game):
    environment = make_environment(f"jax:MinAtar-{game}", seed=0)
    spec = specs.make_environment_spec(environment)
    reference = Environment(REFERENCES[game].name)
    assert spec.observations.shape == tuple(reference.state_shape())
    assert spec.actions.num_values == len(reference.minimal_action_set())
    assert make_jax_environment(f"MinAtar-{game}").max_episode_steps == 10_000
    timestep, rng, length = environment.reset(), np.random.default_rng(0), 0
    while not timestep.last() and length < 1000:
        timestep = environment.step(rng.integers(spec.actions.num_values))
        assert timestep.observation.dtype == np.bool_
        length += 1
    if game == "Freeway":  # the chicken cannot die: the game's own clock ends it after 2,500 steps
        device = make_jax_environment("MinAtar-Freeway")
        state, _ = device.reset(jax.random.key(0))
        _, timesteps = jax.lax.scan(lambda s, _: device.step(s, jnp.int32(1)), state, length=2501)
        assert (np.asarray(timesteps.step_type[:-1]) == MID).all() and int(timesteps.step_type[-1]) == LAST
        assert float(timesteps.discount[-1]) == 0.0 and float(timesteps.reward.sum()) >= 1
    else:
        assert timestep.last() and timestep.discount == 0  # a random policy dies within 1,000 steps
