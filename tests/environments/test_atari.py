"""Atari's conventions (``acme.environments.atari``) against hand-built frame sequences, and the real games by id.

``ScriptedALE`` stands in for ``ale_py.ALEInterface``: frame ``n`` of a game (counted from its reset) is a screen
filled with ``n`` (so a stack of observations says which frames it holds), with a bright dot on odd frames only
(what max-pooling over the last two frames must keep); it records every action the emulator received.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from acme import specs
from acme.environments import make_environment, make_environment_batch
from acme.environments.atari import (
    AtariConfig,
    AtariEnvironment,
    AtariVectorBatch,
    area_resize,
    load_game,
    parse_atari_id,
    rom_id,
)
from acme.environments.factory import UnknownEnvironmentError

HEIGHT, WIDTH = 210, 160


class ScriptedALE:
    def __init__(self, lives_lost_at=(), game_over_at=None, reward_at=None):
        self.frame = 0
        self.actions: list[int] = []
        self.resets = 0
        self._lives_lost_at = set(lives_lost_at)
        self._game_over_at = game_over_at
        self._reward_at = reward_at or {}
        self._lives = 3

    def getMinimalActionSet(self):  # noqa: N802 (ALEInterface's names)
        return [0, 1, 3, 4]

    def getLegalActionSet(self):  # noqa: N802
        return list(range(18))

    def getScreenDims(self):  # noqa: N802
        return HEIGHT, WIDTH

    def reset_game(self):
        self.frame, self._lives, self.resets = 0, 3, self.resets + 1

    def act(self, action):
        self.frame += 1
        self.actions.append(int(action))
        if self.frame in self._lives_lost_at:
            self._lives -= 1
        return self._reward_at.get(self.frame, 0)

    def game_over(self):
        return self._game_over_at is not None and self.frame >= self._game_over_at

    def lives(self):
        return self._lives

    def getScreenGrayscale(self, out):  # noqa: N802
        out[...] = self.frame % 200
        out[:10, :10] = 250 if self.frame % 2 else 0  # the dot: odd frames only


def _env(ale=None, seed=0, **config):
    defaults = dict(noop_max=0, sticky_action_probability=0.0)
    return AtariEnvironment("Scripted", AtariConfig(**{**defaults, **config}), seed=seed, ale=ale or ScriptedALE())


def test_each_step_repeats_the_action_and_observes_the_max_of_its_last_two_frames():
    ale = ScriptedALE(reward_at={2: 1, 4: 2})
    env = _env(ale)
    first = env.reset()
    assert first.first() and first.observation.shape == (84, 84, 4) and first.observation.dtype == np.uint8
    assert (first.observation == 0).all()  # frame 0 (all zeros) after three frames of zeros
    step = env.step(2)  # the minimal set's third action: the emulator's 3
    assert ale.actions == [3, 3, 3, 3] and step.reward == np.float32(3.0)
    newest = step.observation[..., -1]
    assert newest[60, 60] == 4  # the max of frames 3 and 4 away from the dot
    assert newest[0, 0] == 250  # the dot, drawn on frame 3 only, kept by the max
    assert (step.observation[..., :3] == 0).all()


def test_the_stack_holds_the_last_four_observations_oldest_first():
    env = _env()
    env.reset()
    for _ in range(5):
        timestep = env.step(0)
    assert [int(timestep.observation[60, 60, i]) for i in range(4)] == [8, 12, 16, 20]  # frames 8 .. 20


def test_a_game_starts_with_up_to_noop_max_noops_drawn_from_the_seed():
    counts = []
    for seed in range(20):
        ale = ScriptedALE()
        _env(ale, seed=seed, noop_max=30).reset()
        assert set(ale.actions) <= {0}
        counts.append(len(ale.actions))
    assert min(counts) >= 0 and max(counts) <= 30 and len(set(counts)) > 5
    again = ScriptedALE()
    first = _env(again, seed=3, noop_max=30).reset()
    assert len(again.actions) == counts[3]  # the same seed, the same start
    start = counts[3]
    assert start > 0 and first.observation[60, 60, -1] == start  # the frame after the no-ops, after zeros
    assert (first.observation[..., :-1] == 0).all()


def test_the_frame_cap_counts_frames_after_the_noops():
    ale = ScriptedALE()
    env = _env(ale, seed=3, noop_max=30, max_frames=12)
    env.reset()
    noops = ale.frame
    timesteps = [env.step(0) for _ in range(3)]
    assert noops > 0 and [t.last() for t in timesteps] == [False, False, True] and ale.frame == noops + 12


def test_sticky_actions_are_drawn_by_the_emulator_from_the_seed():
    assert load_game("Pong", 0, 0.25).getFloat("repeat_action_probability") == pytest.approx(0.25)

    def observations(seed, sticky):
        env = AtariEnvironment("Pong", AtariConfig(noop_max=0, sticky_action_probability=sticky), seed=seed)
        env.reset()
        return np.stack([env.step(2 + i % 2).observation[..., -1] for i in range(150)])  # up, down, up, ...

    sticky = observations(7, 0.25)
    assert (sticky == observations(7, 0.25)).all()  # a fixed seed fixes which frames stick
    assert not (sticky == observations(7, 0.0)).all()  # and stuck frames change the game


def test_the_game_ends_with_discount_0_and_a_frame_cap_truncates():
    over = _env(ScriptedALE(game_over_at=10))
    over.reset()
    timesteps = [over.step(0) for _ in range(3)]
    assert [t.last() for t in timesteps] == [False, False, True]
    assert timesteps[-1].discount == 0.0
    # The game ended on the step's second frame: its observation repeats the screens before (frames 7 and 8).
    assert timesteps[-1].observation[60, 60, -1] == 8 and timesteps[-1].observation[0, 0, -1] == 250
    capped = _env(max_frames=12)
    capped.reset()
    timesteps = [capped.step(0) for _ in range(3)]
    assert timesteps[-1].last() and timesteps[-1].discount == 1.0  # truncated at frame 12, not terminated
    assert capped.reset().first() and capped.step(0).mid()


def test_a_lost_life_ends_a_training_episode_and_the_next_one_goes_on_with_the_game():
    ale = ScriptedALE(lives_lost_at={6})
    env = _env(ale, terminal_on_life_loss=True)
    env.reset()
    env.step(0)
    lost = env.step(0)
    assert lost.last() and lost.discount == 0.0
    again = env.reset()
    assert again.first() and ale.resets == 1  # the game goes on: no reset of the emulator
    assert (again.observation == lost.observation).all()
    whole = _env(ScriptedALE(lives_lost_at={6}))  # the default: a lost life is no episode end
    whole.reset()
    assert not any(whole.step(0).last() for _ in range(3))


def test_the_full_action_set_has_18_actions():
    assert _env().action_spec().num_values == 4
    assert _env(full_action_space=True).action_spec().num_values == 18


@pytest.mark.parametrize(
    "name, message",
    [
        ("Pong?sticky=0", "atari:Pong has no option 'sticky'; its options: action_repeat"),
        ("Pong?noop_max=few", "atari option noop_max takes a int, got 'few'"),
        ("Pong?full_action_space=maybe", "takes true or false"),
        ("Pong?sticky_action_probability=1", "sticky_action_probability must be in [0, 1)"),
        ("Pong?screen_size=200", "screen_size must be at most 160 (the screen's width"),
    ],
)
def test_options_in_the_id_are_checked(name, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        parse_atari_id(name)


def test_options_in_the_id_set_the_config():
    game, config = parse_atari_id("Breakout?sticky_action_probability=0&terminal_on_life_loss=true&noop_max=5")
    assert game == "Breakout" and config == AtariConfig(
        sticky_action_probability=0.0, terminal_on_life_loss=True, noop_max=5
    )
    assert rom_id("MontezumaRevenge") == "montezuma_revenge" and rom_id("Pong") == "pong"


def test_real_games_by_id_and_an_evaluator_plays_whole_games():
    env = make_environment("atari:Breakout?terminal_on_life_loss=true", seed=1)
    spec = specs.make_environment_spec(env)
    assert spec.observations.shape == (84, 84, 4) and spec.observations.dtype == np.uint8
    assert spec.actions.num_values == 4
    timestep, steps = env.reset(), 0
    while not timestep.last():
        timestep, steps = env.step(steps % 4), steps + 1
    assert timestep.discount == 0.0 and steps < 2_000  # a life lost ends a training episode
    assert not make_environment(
        "atari:Breakout?terminal_on_life_loss=true", evaluation=True
    )._config.terminal_on_life_loss
    with pytest.raises(UnknownEnvironmentError, match="ale-py has no Atari game 'Pongg'. Did you mean atari:Pong"):
        make_environment("atari:Pongg")


def test_k_games_step_together_in_ales_vector_environment_with_one_games_conventions():
    batch = make_environment_batch("atari:Pong?max_frames=40", seeds=[0, 1, 2])
    assert isinstance(batch, AtariVectorBatch) and batch.num_envs == 3 and not batch.splittable
    single = specs.make_environment_spec(make_environment("atari:Pong"))
    assert batch.environment_spec() == single
    firsts = batch.reset()
    assert all(t.first() and t.observation.shape == (84, 84, 4) and t.observation.dtype == np.uint8 for t in firsts)
    previous = [t.observation for t in firsts]
    for step in range(10):
        results = batch.step(np.array([1, 2, 3]), 3)
        for i, (timestep, restart) in enumerate(results):
            # the stack moves on by one frame, oldest first, on the last axis
            assert (timestep.observation[..., :3] == previous[i][..., 1:]).all()
            previous[i] = timestep.observation if restart is None else restart.observation
    # 40 frames: the tenth step truncates every game (discount 1) and starts its next one in the same call
    assert all(t.last() and t.discount == 1.0 and r is not None and r.first() for t, r in results)
    batch.close()
    assert make_environment_batch("gymnasium:CartPole-v1", [0, 1]) is None
    with pytest.raises(UnknownEnvironmentError, match="ale-py has no Atari game 'Pongg'"):
        make_environment_batch("atari:Pongg", [0, 1])


def test_area_resize_averages_the_pixels_each_output_pixel_covers():
    assert (area_resize(np.full((HEIGHT, WIDTH), 77, np.uint8), 84) == 77).all()
    halves = np.zeros((HEIGHT, WIDTH), np.uint8)
    halves[:, 80:] = 200
    resized = area_resize(halves, 84)
    # 160 columns into 84: output column 41 covers source columns 78.1 .. 80.0, column 42 80.0 .. 81.9
    assert (resized[:, :42] == 0).all() and (resized[:, 42:] == 200).all()
    blocks = np.kron(np.arange(100, dtype=np.uint8).reshape(10, 10), np.ones((21, 16), np.uint8))
    assert (area_resize(blocks, 10) == np.arange(100).reshape(10, 10)).all()  # whole 21 x 16 blocks


@pytest.mark.skipif(sys.platform != "linux", reason="the no-op draws follow libstdc++, which ale-py's Linux wheels use")
@pytest.mark.parametrize(
    "environment_id, boundary",
    [
        ("atari:Breakout?terminal_on_life_loss=true", "lost life"),  # the game goes on after the episode's end
        ("atari:Pong?max_frames=600", "truncation"),  # a new game, with its own no-ops, in the same step
    ],
)
def test_one_game_and_the_vector_environment_give_the_same_timesteps(environment_id, boundary):
    """Training steps K > 1 games in ale-py's vector environment, evaluation one AtariEnvironment: for the same
    id, seeds and actions (sticky actions and no-op starts on) they must see the same observations, rewards and
    step types, through episode ends."""
    seeds = [3, 104_726]
    singles = [make_environment(environment_id, seed=seed) for seed in seeds]
    batch = make_environment_batch(environment_id, seeds)
    batch.reset(), [env.reset() for env in singles]  # a second reset starts new games, not the seeded ones again
    pairs = list(zip([env.reset() for env in singles], batch.reset()))
    actions = np.random.default_rng(0).integers(0, batch.environment_spec().actions.num_values, (300, len(seeds)))
    for step_actions in actions:
        for env, action, (timestep, restart) in zip(singles, step_actions, batch.step(step_actions, len(seeds))):
            pairs.append((env.step(action), timestep))
            if pairs[-1][0].last():
                pairs.append((env.reset(), restart))
            else:
                assert restart is None
    for one, vector in pairs:
        assert one.step_type == vector.step_type and one.reward == vector.reward and one.discount == vector.discount
        np.testing.assert_array_equal(one.observation, vector.observation)
    ends = [one for one, _ in pairs if one.last()]
    if boundary == "lost life":
        assert any(end.discount == 0.0 for end in ends)
    else:
        assert any(end.discount == 1.0 for end in ends)
    batch.close()
