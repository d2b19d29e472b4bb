"""Atari 2600 games through the Arcade Learning Environment, with the conventions of Machado et al. (2018) as the
DQN family is trained on them, in two implementations that give the same observations, rewards and step types
for the same game, options, seed and actions: ``AtariEnvironment`` (one game, ``ale_py.ALEInterface`` driven
here, one emulator frame at a time; the evaluator's) and ``AtariVectorBatch`` (K games in ale-py's C++ vector
environment, ``ale_py.AtariVectorEnv``; an actor's with more than one environment). The one-game environment
follows the vector environment's C++ (which this library cannot change) step by step:

- each agent step repeats its action for ``action_repeat`` frames (4), sums their rewards, and observes the
  pixel-wise maximum of the last two frames (some sprites are drawn on alternate frames);
- the observation is that frame in grayscale, resized to ``screen_size`` x ``screen_size`` (84) by area
  averaging (OpenCV's ``INTER_AREA``, the vector environment's, computed here in numpy to the same bytes),
  stacked with the previous ``frame_stack - 1`` (4 in all, oldest first, the last axis); a game's first
  observation is its first frame after three of zeros: uint8, so replay stores it as bytes
  (``84 * 84 * 4 = 28,224`` per observation) and networks scale it on the device;
- a new game starts with a number of no-op frames drawn uniformly from 0 to ``noop_max`` (30), as the vector
  environment draws it (a Mersenne Twister seeded with the environment's seed);
- sticky actions: with ``sticky_action_probability`` (0.25) each frame repeats the previous frame's action
  instead of the one chosen, drawn by the emulator from the environment's seed (so a run is reproducible);
- a step that ends the game or reaches the frame cap stops on that frame, and its observation repeats the
  pooled screens of the frames before it (the vector environment's convention);
- an episode is truncated (discount 1) after ``max_frames`` emulator frames after the no-ops (108,000: 30
  minutes at 60 Hz);
- the minimal action set (the game's own actions), or the full 18 with ``full_action_space``;
- with ``terminal_on_life_loss`` (for training only: the evaluator plays whole games), a step that loses a life
  ends the agent's episode (discount 0; a step that also ends the game or reaches the frame cap ends it as
  those do), and the next episode goes on with the same game from the same observation.

Rewards are the game's own; the agents that clip them do so in their adders (a config field), so evaluation
returns are unclipped.

Options are part of the id: ``atari:Pong`` takes these defaults, and
``atari:Breakout?sticky_action_probability=0&terminal_on_life_loss=true`` changes two of them.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Sequence
from urllib.parse import parse_qsl

import dm_env
import numpy as np

from acme import specs
from acme.environments.batch import EnvironmentBatch

NOOP = 0
SCREEN_WIDTH = 160  # every game's screen is 210 x 160


@dataclasses.dataclass(frozen=True)
class AtariConfig:
    """How the games are played and observed (see the module docstring); checked on construction."""

    action_repeat: int = 4
    frame_stack: int = 4
    screen_size: int = 84
    noop_max: int = 30
    sticky_action_probability: float = 0.25
    max_frames: int = 108_000
    full_action_space: bool = False
    terminal_on_life_loss: bool = False

    def __post_init__(self):
        for name in ("action_repeat", "frame_stack", "screen_size", "max_frames"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"AtariConfig.{name} must be an integer >= 1, got {value!r}.")
        if self.screen_size > SCREEN_WIDTH:
            raise ValueError(
                f"AtariConfig.screen_size must be at most {SCREEN_WIDTH} (the screen's width: an observation "
                f"averages areas of the screen), got {self.screen_size}."
            )
        if isinstance(self.noop_max, bool) or not isinstance(self.noop_max, int) or self.noop_max < 0:
            raise ValueError(f"AtariConfig.noop_max must be an integer >= 0, got {self.noop_max!r}.")
        p = self.sticky_action_probability
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not (0.0 <= p < 1.0):
            raise ValueError(f"AtariConfig.sticky_action_probability must be in [0, 1), got {p!r}.")
        for name in ("full_action_space", "terminal_on_life_loss"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"AtariConfig.{name} must be true or false, got {getattr(self, name)!r}.")

    @property
    def bytes_per_observation(self) -> int:
        return self.screen_size * self.screen_size * self.frame_stack


def parse_atari_id(name: str) -> tuple[str, AtariConfig]:
    """``"Pong"`` or ``"Pong?field=value&..."`` -> the game and its ``AtariConfig``; a clear error for an unknown
    field or a value of the wrong type."""
    game, _, query = name.partition("?")
    fields = {f.name: f for f in dataclasses.fields(AtariConfig)}
    values: dict[str, Any] = {}
    for key, text in parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)):
        if key not in fields:
            raise ValueError(f"atari:{game} has no option {key!r}; its options: {', '.join(fields)}.")
        default = getattr(AtariConfig(), key)
        if isinstance(default, bool):
            if text.lower() not in ("true", "false", "1", "0"):
                raise ValueError(f"atari option {key} takes true or false, got {text!r}.")
            values[key] = text.lower() in ("true", "1")
        else:
            try:
                values[key] = type(default)(text)
            except ValueError:
                raise ValueError(f"atari option {key} takes a {type(default).__name__}, got {text!r}.") from None
    return game, AtariConfig(**values)


def rom_id(game: str) -> str:
    """The ROM name ale-py knows a game by (``"MontezumaRevenge"`` -> ``"montezuma_revenge"``)."""
    out = []
    for i, char in enumerate(game):
        if char.isupper() and i and not game[i - 1].isupper():
            out.append("_")
        out.append(char.lower())
    return "".join(out)


def check_game(game: str) -> None:
    """Refuses, with close matches, a game ale-py does not have."""
    from ale_py import roms

    known = roms.get_all_rom_ids()
    if rom_id(game) not in known:
        import difflib

        names = sorted("".join(part.capitalize() for part in rom.split("_")) for rom in known)
        close = difflib.get_close_matches(game, names, n=4)
        hint = f" Did you mean {', '.join('atari:' + c for c in close)}?" if close else ""
        raise ValueError(f"ale-py has no Atari game {game!r}.{hint} It has {len(names)}, e.g. Pong and Breakout.")


def atari_spec(config: AtariConfig, num_actions: int) -> specs.EnvironmentSpec:
    """What a game played under ``config`` with ``num_actions`` actions gives and takes."""
    size, stack = config.screen_size, config.frame_stack
    return specs.EnvironmentSpec(
        observations=specs.BoundedArray((size, size, stack), np.uint8, 0, 255, name="pixels"),
        actions=specs.DiscreteArray(num_actions, name="action"),
        rewards=specs.Array((), np.float32, name="reward"),
        discounts=specs.BoundedArray((), np.float32, 0.0, 1.0, name="discount"),
    )


def emulator_seed(seed: int) -> int:
    """The seed an emulator and its no-op draws take for an environment seed: ``seed`` modulo ``2**31`` (the
    vector environment takes a C int, and a negative one there means no seed)."""
    return int(seed) % (2**31)


def load_game(game: str, seed: int | None = None, sticky_action_probability: float = 0.0) -> Any:
    """An ``ale_py.ALEInterface`` with ``game``'s ROM loaded, its emulator seeded with ``emulator_seed(seed)``
    and drawing sticky actions with ``sticky_action_probability``, as the vector environment loads its games; a
    clear error for a game ale-py does not have."""
    import ale_py
    from ale_py import roms

    check_game(game)
    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)  # before the first emulator: no banner
    ale = ale_py.ALEInterface()
    ale.setFloat("repeat_action_probability", float(sticky_action_probability))
    ale.setInt("max_num_frames_per_episode", 0)  # the cap is counted here
    if seed is not None:
        ale.setInt("random_seed", emulator_seed(seed))
    ale.loadROM(roms.get_rom_path(rom_id(game)))
    return ale


@functools.lru_cache(maxsize=None)
def _area_weights(source: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """OpenCV's area-resize table along one axis (``source`` pixels down to ``size``): for each output pixel,
    the source pixels it covers (``[size, k]``) and their float32 weights (the part of the pixel covered over the
    output pixel's width; padded with weight 0), in OpenCV's order and rounding."""
    scale = 1.0 / (size / source)
    rows = []
    for d in range(size):
        start, stop = d * scale, d * scale + scale
        width = min(scale, source - start)
        first, last = math.ceil(start), min(math.floor(stop), source - 1)
        first = min(first, last)
        terms = []
        if first - start > 1e-3:
            terms.append((first - 1, (first - start) / width))
        terms.extend((s, 1.0 / width) for s in range(first, last))
        if stop - last > 1e-3:
            terms.append((last, min(stop - last, 1.0, width) / width))
        rows.append(terms)
    k = max(len(terms) for terms in rows)
    index, weight = np.zeros((size, k), np.intp), np.zeros((size, k), np.float32)
    for d, terms in enumerate(rows):
        for j, (s, w) in enumerate(terms):
            index[d, j], weight[d, j] = s, np.float32(w)
    return index, weight


def area_resize(frame: np.ndarray, size: int) -> np.ndarray:
    """A grayscale uint8 frame resized to ``size`` x ``size`` (no larger than either side) by area averaging, to
    the byte what OpenCV's ``cv2.resize(frame, (size, size), interpolation=cv2.INTER_AREA)`` gives (the vector
    environment's resize): float32 sums in OpenCV's order, rounded half to even."""
    height, width = frame.shape
    if height % size == 0 and width % size == 0:  # whole blocks: OpenCV sums them as integers
        blocks = frame.reshape(size, height // size, size, width // size).sum(axis=(1, 3), dtype=np.int32)
        means = blocks.astype(np.float32) * (np.float32(1.0) / np.float32(height * width // (size * size)))
        return np.rint(means, out=means).astype(np.uint8)
    rows, row_weights = _area_weights(height, size)
    columns, column_weights = _area_weights(width, size)
    pixels = frame.astype(np.float32)
    # OpenCV adds each output pixel's terms one after another (float sums depend on their order): so here too.
    across = pixels[:, columns[:, 0]] * column_weights[:, 0]  # [height, size]
    for j in range(1, columns.shape[1]):
        across += pixels[:, columns[:, j]] * column_weights[:, j]
    total = across[rows[:, 0]] * row_weights[:, 0, None]  # [size, size]
    for j in range(1, rows.shape[1]):
        total += across[rows[:, j]] * row_weights[:, j, None]
    return np.rint(total, out=total).astype(np.uint8)  # weighted means of bytes (weights summing to 1): 0 .. 255


class NoopDraws:
    """The number of no-op frames each new game starts with, uniform over ``0 .. noop_max``, drawn as ale-py's
    vector environment draws it (``std::mt19937`` seeded with the emulator seed, and libstdc++'s
    ``uniform_int_distribution``: Lemire's multiply-and-reject), so a seed starts the same games on both paths
    (ale-py's Linux wheels are built with libstdc++; elsewhere its draws are as uniform, but not these).
    ``seed=None`` draws from fresh entropy."""

    def __init__(self, noop_max: int, seed: int | None):
        self._range = noop_max + 1
        # numpy's legacy generator is the same Mersenne Twister, seeded the same way from an integer below 2**32.
        self._twister = np.random.RandomState(None if seed is None else emulator_seed(seed))

    def _word(self) -> int:
        return int(self._twister.randint(0, 2**32, dtype=np.uint32))

    def __call__(self) -> int:
        product = self._word() * self._range
        if product % 2**32 < self._range:
            threshold = (2**32 - self._range) % self._range
            while product % 2**32 < threshold:
                product = self._word() * self._range
        return product >> 32


class AtariEnvironment(specs.SpecEnvironment):
    """One Atari game as a dm_env environment (see the module docstring): the game ``AtariVectorBatch`` plays with
    the same options and seed.

    Args:
      game: the game's name (``"Pong"``), used to load its ROM unless ``ale`` is given.
      config: how it is played and observed.
      seed: seeds the emulator (its sticky actions) and the no-op starts.
      ale: an emulator to drive instead: an ``ALEInterface`` loaded by ``load_game`` (which sets its seed and
        sticky actions), or an object with its methods (e.g. a test's scripted frames).
    """

    def __init__(self, game: str, config: AtariConfig | None = None, seed: int | None = None, ale: Any = None):
        self._game = game
        self._config = config = config or AtariConfig()
        self._ale = ale = ale if ale is not None else load_game(game, seed, config.sticky_action_probability)
        self._noops = NoopDraws(config.noop_max, seed)
        actions = ale.getLegalActionSet() if config.full_action_space else ale.getMinimalActionSet()
        self._actions = list(actions)
        self._spec = atari_spec(config, len(self._actions))
        height, width = ale.getScreenDims()
        # The last two screens of a step, the newest first; the first holds their maximum once observed.
        self._screens = np.zeros((2, height, width), np.uint8)
        self._stack = np.zeros((config.screen_size, config.screen_size, config.frame_stack), np.uint8)
        self._frames = 0  # emulator frames since the no-ops of this game
        self._lives = 0
        self._continue_game = False  # the last episode ended on a lost life: the next reset goes on with the game
        self._done = True

    def _observe(self) -> np.ndarray:
        """Pushes the newest frame onto the stack: the first screen, pooled with the second when a step's frames
        are (the first becomes their maximum, as in the vector environment)."""
        if self._config.action_repeat > 1:
            np.maximum(self._screens[0], self._screens[1], out=self._screens[0])
        self._stack[..., :-1] = self._stack[..., 1:]  # oldest first
        self._stack[..., -1] = area_resize(self._screens[0], self._config.screen_size)
        return self._stack.copy()

    # ------------------------------------------------------------------ dm_env

    def reset(self) -> dm_env.TimeStep:
        self._done = False
        if self._continue_game and not self._ale.game_over():
            self._continue_game = False
            return dm_env.restart(self._stack.copy())
        self._continue_game = False
        self._ale.reset_game()
        for _ in range(self._noops()):
            self._ale.act(NOOP)
            if self._ale.game_over():
                self._ale.reset_game()
        self._ale.getScreenGrayscale(self._screens[0])
        self._screens[1] = 0
        self._stack[...] = 0
        self._frames, self._lives = 0, self._ale.lives()
        return dm_env.restart(self._observe())

    def step(self, action) -> dm_env.TimeStep:
        if self._done:
            return self.reset()
        ale_action, config = self._actions[int(action)], self._config
        reward, over = 0.0, False
        for left in range(config.action_repeat, 0, -1):
            reward += float(self._ale.act(ale_action))
            self._frames += 1
            over = self._ale.game_over()
            if over or self._frames >= config.max_frames:
                break  # the screens stay those of the frames before (the vector environment's convention)
            if left <= 2:  # the last two frames: the second-last into the second screen, the last into the first
                self._ale.getScreenGrayscale(self._screens[left - 1])
        observation = self._observe()
        lives = self._ale.lives()
        lost_life, self._lives = lives < self._lives, lives
        reward = np.float32(reward)
        if over:
            self._done = True
            return dm_env.termination(reward, observation)
        if self._frames >= config.max_frames:
            self._done = True
            return dm_env.truncation(reward, observation)
        if config.terminal_on_life_loss and lost_life:
            self._done = self._continue_game = True
            return dm_env.termination(reward, observation)
        return dm_env.transition(reward, observation)

    @property
    def config(self) -> AtariConfig:
        return self._config

    @property
    def game(self) -> str:
        return self._game

    def close(self) -> None:
        """Nothing to release: the emulator is freed with this object."""


class AtariVectorBatch(EnvironmentBatch):
    """K games of one Atari game stepped together in ale-py's C++ vector environment (``ale_py.AtariVectorEnv``),
    each the game ``AtariEnvironment`` plays with the same options and seed (the same observations, rewards and
    step types for the same actions): the emulator repeats each action, max-pools, resizes, stacks, starts with
    no-ops, draws sticky actions and caps episodes itself, in its own threads (``num_threads``: 0 lets it
    choose). A game that ends starts its next one in the same step; an episode ended by a lost life
    (``terminal_on_life_loss``) goes on with the same game, as ``AtariEnvironment``'s does. The games are seeded
    on the first ``reset``; a later one starts new games without seeding them again.
    """

    splittable = False

    def __init__(self, game: str, seeds: Sequence[int], config: AtariConfig | None = None, num_threads: int = 1):
        from ale_py import AtariVectorEnv

        self._config = config = config or AtariConfig()
        check_game(game)
        self._num_envs = len(seeds)
        self._seeds: np.ndarray | None = np.asarray([emulator_seed(s) for s in seeds], np.int64)
        self._lives = np.zeros(self._num_envs, np.int64)
        self._env = AtariVectorEnv(
            rom_id(game),
            num_envs=self._num_envs,
            num_threads=num_threads,
            max_num_frames_per_episode=config.max_frames,
            repeat_action_probability=config.sticky_action_probability,
            full_action_space=config.full_action_space,
            autoreset_mode="SameStep",
            img_height=config.screen_size,
            img_width=config.screen_size,
            stack_num=config.frame_stack,
            frameskip=config.action_repeat,
            maxpool=config.action_repeat > 1,
            noop_max=config.noop_max + 1,  # it draws 0 .. noop_max - 1
            # A lost life is seen here, from the lives: its episodic_life would start a new game instead of going on.
            episodic_life=False,
            life_loss_info=False,
            reward_clipping=False,  # agents clip what they store (max_abs_reward)
            use_fire_reset=False,
        )
        self._spec = atari_spec(config, int(self._env.single_action_space.n))

    @property
    def num_envs(self) -> int:
        return self._num_envs

    @staticmethod
    def _channels_last(frames: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.moveaxis(frames, -3, -1))  # [K, stack, H, W] -> [K, H, W, stack]

    def reset(self) -> list[dm_env.TimeStep]:
        observations, info = self._env.reset(seed=self._seeds)
        self._seeds = None
        self._lives = np.asarray(info["lives"], np.int64)
        return [dm_env.restart(o) for o in self._channels_last(observations)]

    def step(self, actions: Any, count: int) -> list[tuple[dm_env.TimeStep, dm_env.TimeStep | None]]:
        observations, rewards, terminated, truncated, info = self._env.step(np.asarray(actions, np.int64))
        observations = self._channels_last(observations)
        ended = terminated | truncated
        finals = self._channels_last(info["final_obs"]) if ended.any() else None
        lives = np.asarray(info["lives"], np.int64)  # a game that ended: its next game's
        lost_life = (lives < self._lives) & ~ended & self._config.terminal_on_life_loss
        self._lives = lives
        results = []
        for i in range(self._num_envs):
            reward = np.float32(rewards[i])
            if terminated[i]:
                results.append((dm_env.termination(reward, finals[i]), dm_env.restart(observations[i])))
            elif truncated[i]:
                results.append((dm_env.truncation(reward, finals[i]), dm_env.restart(observations[i])))
            elif lost_life[i]:  # the game goes on: the next episode starts from this observation
                results.append((dm_env.termination(reward, observations[i]), dm_env.restart(observations[i])))
            else:
                results.append((dm_env.transition(reward, observations[i]), None))
        return results

    def environment_spec(self) -> specs.EnvironmentSpec:
        return self._spec

    def close(self) -> None:
        self._env.close()
