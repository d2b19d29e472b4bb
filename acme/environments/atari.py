"""Atari 2600 games through the Arcade Learning Environment, with the conventions of Machado et al. (2018) as the
DQN family is trained on them.

``AtariEnvironment`` drives an ``ale_py.ALEInterface`` directly, one emulator frame at a time:

- each agent step repeats its action for ``action_repeat`` frames (4), sums their rewards, and observes the
  pixel-wise maximum of the last two frames (some sprites are drawn on alternate frames);
- the observation is that frame in grayscale, resized to ``screen_size`` x ``screen_size`` (84, area
  averaging), stacked with the previous ``frame_stack - 1`` (4 in all, oldest first, the last axis): uint8, so
  replay stores it as bytes (``84 * 84 * 4 = 28,224`` per observation) and networks scale it on the device;
- a new game starts with up to ``noop_max`` (30) no-op frames, a random number from the environment's seed;
- sticky actions: with ``sticky_action_probability`` (0.25) each frame repeats the previous frame's action
  instead of the one chosen (drawn from the environment's seed, so a run is reproducible);
- an episode is truncated (discount 1) after ``max_frames`` emulator frames (108,000: 30 minutes at 60 Hz);
- the minimal action set (the game's own actions), or the full 18 with ``full_action_space``;
- with ``terminal_on_life_loss`` (for training only: the evaluator plays whole games), losing a life ends the
  agent's episode (discount 0) and the next ``reset`` goes on with the same game.

Rewards are the game's own; the agents that clip them do so in their adders (a config field), so evaluation
returns are unclipped.

Options are part of the id: ``atari:Pong`` takes these defaults, and
``atari:Breakout?sticky_action_probability=0&terminal_on_life_loss=true`` changes two of them.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence
from urllib.parse import parse_qsl

import dm_env
import numpy as np

from acme import specs
from acme.environments.batch import EnvironmentBatch

NOOP = 0


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


def load_game(game: str, seed: int | None = None) -> Any:
    """An ``ale_py.ALEInterface`` with ``game``'s ROM loaded (its emulator seeded with ``seed``), its own sticky
    actions off (this module draws them); a clear error for a game ale-py does not have."""
    import ale_py
    from ale_py import roms

    check_game(game)
    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)  # before the first emulator: no banner
    ale = ale_py.ALEInterface()
    ale.setFloat("repeat_action_probability", 0.0)
    ale.setInt("max_num_frames_per_episode", 0)  # the cap is counted here
    if seed is not None:
        ale.setInt("random_seed", int(seed) % (2**31))
    ale.loadROM(roms.get_rom_path(rom_id(game)))
    return ale


def _resize(frame: np.ndarray, size: int) -> np.ndarray:
    """Area-averaged resize of a grayscale frame to ``size`` x ``size``."""
    from PIL import Image

    return np.asarray(Image.fromarray(frame).resize((size, size), Image.Resampling.BOX), dtype=np.uint8)


class AtariEnvironment(specs.SpecEnvironment):
    """One Atari game as a dm_env environment (see the module docstring).

    Args:
      game: the game's name (``"Pong"``), used to load its ROM unless ``ale`` is given.
      config: how it is played and observed.
      seed: seeds the no-op starts and sticky actions (and the emulator's own randomness).
      ale: an ``ALEInterface`` (or an object with its methods, e.g. a test's scripted frames) to drive instead.
    """

    def __init__(self, game: str, config: AtariConfig | None = None, seed: int | None = None, ale: Any = None):
        self._game = game
        self._config = config = config or AtariConfig()
        self._ale = ale = ale if ale is not None else load_game(game, seed)
        self._rng = np.random.default_rng(seed)
        actions = ale.getLegalActionSet() if config.full_action_space else ale.getMinimalActionSet()
        self._actions = list(actions)
        self._spec = atari_spec(config, len(self._actions))
        height, width = ale.getScreenDims()
        self._screens = np.zeros((2, height, width), np.uint8)
        self._stack = np.zeros((config.screen_size, config.screen_size, config.frame_stack), np.uint8)
        self._last_action = NOOP
        self._frames = 0  # emulator frames in this game
        self._lives = 0
        self._continue_game = False  # the last episode ended on a lost life: the next reset goes on with the game
        self._done = True

    # ------------------------------------------------------------------ emulator frames

    def _frame(self, action: Any) -> float:
        """One emulator frame of ``action`` (or, with the sticky probability, of the previous frame's)."""
        if self._rng.random() >= self._config.sticky_action_probability:
            self._last_action = action
        self._frames += 1
        return float(self._ale.act(self._last_action))

    def _observe(self, pooled: bool) -> np.ndarray:
        """Pushes the newest frame (the maximum of the last two screens when ``pooled``) onto the stack."""
        frame = np.maximum(self._screens[0], self._screens[1]) if pooled else self._screens[1]
        self._stack = np.roll(self._stack, -1, axis=-1)
        self._stack[..., -1] = _resize(frame, self._config.screen_size)
        return self._stack.copy()

    # ------------------------------------------------------------------ dm_env

    def reset(self) -> dm_env.TimeStep:
        self._done = False
        if self._continue_game and not self._ale.game_over():
            self._continue_game = False
            return dm_env.restart(self._stack.copy())
        self._continue_game = False
        self._ale.reset_game()
        self._frames, self._last_action = 0, NOOP
        for _ in range(int(self._rng.integers(0, self._config.noop_max + 1))):
            self._frame(NOOP)
            if self._ale.game_over():
                self._ale.reset_game()
        self._lives = self._ale.lives()
        self._ale.getScreenGrayscale(self._screens[1])
        frame = _resize(self._screens[1], self._config.screen_size)
        self._stack[...] = frame[..., None]
        return dm_env.restart(self._stack.copy())

    def step(self, action) -> dm_env.TimeStep:
        if self._done:
            return self.reset()
        ale_action = self._actions[int(action)]
        reward, repeat, pooled = 0.0, self._config.action_repeat, False
        for i in range(repeat):
            reward += self._frame(ale_action)
            over = self._ale.game_over()
            if i == repeat - 1 or over:  # the newest screen; pooled with the one before when both are this step's
                self._ale.getScreenGrayscale(self._screens[1])
                pooled = i == repeat - 1 and repeat > 1
                break
            if i == repeat - 2:
                self._ale.getScreenGrayscale(self._screens[0])
        observation = self._observe(pooled)
        lives = self._ale.lives()
        lost_life = lives < self._lives
        self._lives = lives
        reward = np.float32(reward)
        if over or (self._config.terminal_on_life_loss and lost_life):
            self._done = True
            self._continue_game = not over
            return dm_env.termination(reward, observation)
        if self._frames >= self._config.max_frames:
            self._done = True
            return dm_env.truncation(reward, observation)
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
    with ``AtariConfig``'s conventions as ``AtariEnvironment`` has them (the same observation spec and actions):
    the emulator repeats each action, max-pools, resizes, stacks, starts with no-ops, draws sticky actions and
    caps episodes itself, in its own threads (``num_threads``: 0 lets it choose). A game that ends starts its next
    episode in the same step. Its draws come from its own random generator, so its games are not those of
    ``AtariEnvironment`` with the same seeds.
    """

    splittable = False

    def __init__(self, game: str, seeds: Sequence[int], config: AtariConfig | None = None, num_threads: int = 1):
        from ale_py import AtariVectorEnv

        self._config = config = config or AtariConfig()
        check_game(game)
        self._num_envs = len(seeds)
        self._seeds = np.asarray(seeds, np.int64)
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
            noop_max=config.noop_max,
            episodic_life=config.terminal_on_life_loss,
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
        observations, _ = self._env.reset(seed=self._seeds)
        return [dm_env.restart(o) for o in self._channels_last(observations)]

    def step(self, actions: Any, count: int) -> list[tuple[dm_env.TimeStep, dm_env.TimeStep | None]]:
        observations, rewards, terminated, truncated, info = self._env.step(np.asarray(actions, np.int64))
        observations = self._channels_last(observations)
        ended = terminated | truncated
        finals = self._channels_last(info["final_obs"]) if ended.any() else None
        results = []
        for i in range(self._num_envs):
            reward = np.float32(rewards[i])
            if terminated[i]:
                results.append((dm_env.termination(reward, finals[i]), dm_env.restart(observations[i])))
            elif truncated[i]:
                results.append((dm_env.truncation(reward, finals[i]), dm_env.restart(observations[i])))
            else:
                results.append((dm_env.transition(reward, observations[i]), None))
        return results

    def environment_spec(self) -> specs.EnvironmentSpec:
        return self._spec

    def close(self) -> None:
        self._env.close()
