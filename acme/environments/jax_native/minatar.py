"""The five MinAtar games (Young & Tian, 2019) on the device: pgx's JAX implementations (the ``pgx-minatar``
package) behind the :class:`JaxEnvironment` interface.

Each game follows ``minatar.Environment`` (the ``minatar`` package, 1.0.15): a 10x10 board of binary channels
(bool, as the package and pgx give them: Asterix 4, Breakout 4, Freeway 7, Seaquest 10, SpaceInvaders 6; the
torsos cast them to float32 0/1, and rollouts and replay hold them in a quarter of float32's bytes), sticky actions
(with probability ``sticky_action_prob``, 0.1 by default as the package's, the previous action is repeated
instead), the package's difficulty ramping, and its random spawns. ``tests/environments/test_minatar.py`` checks
every game step for step against the package.

Two choices differ from ``minatar.Environment``'s defaults, and each is a parameter:

- Actions are the game's minimal set (``minatar.Environment.minimal_action_set()``; Asterix 5, Breakout 3,
  Freeway 3, Seaquest 6, SpaceInvaders 4), as the package's ``MinAtar/<Game>-v1`` gymnasium ids, gymnax and pgx
  give them and as the published JAX baselines use them; ``use_minimal_action_set=False`` gives the package's
  full set of 6 (``Environment.num_actions()``), whose extra actions act as no-ops.
- Episodes are truncated (discount 1) after ``max_episode_steps``, 10,000 by default. The package has no limit
  (Freeway alone ends itself, after 2,500 steps), but the on-device loop evaluates with a scan of
  ``max_episode_steps`` steps, so a limit there must be.
"""

from __future__ import annotations

import importlib
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from acme import specs
from acme.environments.jax_native.base import JaxEnvironment

SIZE = 10
FULL_ACTIONS = ("noop", "left", "up", "right", "down", "fire")  # minatar's action_map, in its order

# Per game: the pgx-minatar module and class, the channels of the board and the minimal actions, both in minatar's
# order (the minimal actions as indices into FULL_ACTIONS, as ``Env.minimal_action_set()`` gives them).
GAMES: dict[str, tuple[str, str, tuple[str, ...], tuple[int, ...]]] = {
    "Asterix": ("asterix", "MinAtarAsterix", ("player", "enemy", "trail", "gold"), (0, 1, 2, 3, 4)),
    "Breakout": ("breakout", "MinAtarBreakout", ("paddle", "ball", "trail", "brick"), (0, 1, 3)),
    "Freeway": (
        "freeway",
        "MinAtarFreeway",
        ("chicken", "car", "speed1", "speed2", "speed3", "speed4", "speed5"),
        (0, 2, 4),
    ),
    "Seaquest": (
        "seaquest",
        "MinAtarSeaquest",
        (
            "sub_front",
            "sub_back",
            "friendly_bullet",
            "trail",
            "enemy_bullet",
            "enemy_fish",
            "enemy_sub",
            "oxygen_guage",
            "diver_guage",
            "diver",
        ),
        (0, 1, 2, 3, 4, 5),
    ),
    "SpaceInvaders": (
        "space_invaders",
        "MinAtarSpaceInvaders",
        ("cannon", "alien", "alien_left", "alien_right", "friendly_bullet", "enemy_bullet"),
        (0, 1, 3, 5),
    ),
}


def _load_pgx_game(module: str, name: str, **kwargs) -> Any:
    try:
        game = importlib.import_module(f"pgx_minatar.{module}")
    except ImportError as error:  # pgx-minatar depends on pgx without declaring it
        raise ImportError(
            "The MinAtar games need the pgx and pgx-minatar packages (in the core install: "
            f"pip install -e . or pip install pgx pgx-minatar): {error}"
        ) from error
    return getattr(game, name)(**kwargs)


class MinAtar(JaxEnvironment):
    """A MinAtar game; see the module docstring. Each game is a subclass (:class:`Asterix`, :class:`Breakout`,
    :class:`Freeway`, :class:`Seaquest`, :class:`SpaceInvaders`), whose physics is pgx's state of the game."""

    game: str = ""  # a key of GAMES, set by each game's class

    def __init__(
        self,
        sticky_action_prob: float = 0.1,
        use_minimal_action_set: bool = True,
        max_episode_steps: int = 10_000,
    ):
        if self.game not in GAMES:
            raise TypeError(f"MinAtar is the games' common base; make one of {', '.join(GAMES)} instead.")
        if isinstance(sticky_action_prob, bool) or not 0.0 <= float(sticky_action_prob) <= 1.0:
            raise ValueError(f"sticky_action_prob must be a probability in [0, 1], got {sticky_action_prob!r}.")
        super().__init__(max_episode_steps=max_episode_steps)
        module, name, self.channels, minimal = GAMES[self.game]
        self.sticky_action_prob = float(sticky_action_prob)
        self.use_minimal_action_set = bool(use_minimal_action_set)
        self.actions = tuple(FULL_ACTIONS[a] for a in minimal) if use_minimal_action_set else FULL_ACTIONS
        self._pgx = _load_pgx_game(
            module, name, use_minimal_action_set=self.use_minimal_action_set, sticky_action_prob=self.sticky_action_prob
        )

    def spec(self) -> specs.EnvironmentSpec:
        return specs.EnvironmentSpec(
            observations=specs.BoundedArray((SIZE, SIZE, len(self.channels)), bool, False, True, name="observation"),
            actions=specs.DiscreteArray(len(self.actions), dtype=np.int32, name="action"),
            rewards=specs.Array((), np.float32, name="reward"),
            discounts=specs.BoundedArray((), np.float32, 0.0, 1.0, name="discount"),
        )

    def initial(self, key):
        physics = self._pgx.init(key)
        return physics, self.observe(physics)

    def transition(self, physics, action, key):
        stepped = self.repair(physics, self._pgx.step(physics, jnp.asarray(action, jnp.int32), key))
        return stepped, self.observe(stepped), stepped.rewards[0], stepped.terminated

    def observe(self, physics: Any) -> jax.Array:
        """The ``[10, 10, channels]`` board of ``physics`` (True where an object is)."""
        return physics.observation.astype(jnp.bool_)

    def repair(self, before: Any, after: Any) -> Any:
        """``after``, pgx's step from ``before``, with the package's rules where pgx's differ (none here)."""
        del before
        return after


class Asterix(MinAtar):
    """``jax:MinAtar-Asterix``; the keyword arguments are :class:`MinAtar`'s."""

    game = "Asterix"


class Breakout(MinAtar):
    """``jax:MinAtar-Breakout``; the keyword arguments are :class:`MinAtar`'s."""

    game = "Breakout"


class Freeway(MinAtar):
    """``jax:MinAtar-Freeway``; the keyword arguments are :class:`MinAtar`'s."""

    game = "Freeway"


class Seaquest(MinAtar):
    """``jax:MinAtar-Seaquest``; the keyword arguments are :class:`MinAtar`'s.

    pgx-minatar 0.5.1's Seaquest differs from the package's in three rules, which :meth:`repair` puts right after
    each of pgx's steps (and draws the board anew from the repaired state):

    - Oxygen: the episode ends on the step that starts with no oxygen left (``minatar`` 1.0.11 on; pgx follows
      1.0.10's rule, one step later), and a negative oxygen shows an empty gauge (pgx: 9 cells, as 1.0.10 drew it).
    - Difficulty: surfacing lowers the enemies' move interval when the ramp count *before* it is odd (pgx: after
      it, so one surfacing early, and at every other surfacing from then on).
    - Enemy bullets leave the game when they leave the board (pgx keeps them: the ones moving left wrap around into
      the board's image, and their 25 slots fill up).
    """

    game = "Seaquest"

    def repair(self, before: Any, after: Any) -> Any:
        ramped = after._ramp_index != before._ramp_index
        slower = (before._move_speed > 2) & (before._ramp_index % 2 == 1)
        move_speed = jnp.where(ramped, before._move_speed - slower.astype(jnp.int32), after._move_speed)
        terminated = after.terminated | (~before.terminated & (before._oxygen <= 0))
        bullets = after._e_bullets  # rows [x, y, moving right], [-1, -1, -1] where empty, the filled ones first
        keep = (bullets[:, 1] >= 0) & (bullets[:, 0] >= 0) & (bullets[:, 0] <= SIZE - 1)
        order = jnp.argsort(~keep, stable=True)
        bullets = jnp.where(keep[order][:, None], bullets[order], -1)
        repaired = after.replace(_move_speed=move_speed, _e_bullets=bullets, _terminal=terminated)
        repaired = repaired.replace(terminated=terminated)
        shown = repaired.replace(_oxygen=jnp.maximum(repaired._oxygen, 0))  # the gauge of oxygen run out: empty
        return repaired.replace(observation=self._pgx.observe(shown))


class SpaceInvaders(MinAtar):
    """``jax:MinAtar-SpaceInvaders``; the keyword arguments are :class:`MinAtar`'s."""

    game = "SpaceInvaders"
