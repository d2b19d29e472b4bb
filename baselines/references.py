"""Published figures of well-known libraries for the registered baselines, for the report's reference column.

Each is quoted from its source as published, at the budget the source states; a pair without a published
figure for the same algorithm and environment has none here.
"""

from __future__ import annotations

import dataclasses
import re


@dataclasses.dataclass(frozen=True)
class Reference:
    """A library's published evaluation return for one algorithm on one environment."""

    library: str
    figure: str  # as published, e.g. "500.00 ± 0.00"
    timesteps: int  # the training budget the figure was measured at
    url: str

    @property
    def value(self) -> float:
        """The figure's return as a number: its first number (the mean of "500.0 ± 0.0", the reading of "≈11")."""
        found = re.search(r"-?\d+(?:\.\d+)?", self.figure)
        if found is None:
            raise ValueError(f"{self.library}'s figure {self.figure!r} has no number in it.")
        return float(found.group())


# RL Baselines3 Zoo's benchmark.md: one trained agent per row, its deterministic policy evaluated for 150,000
# steps; the spread is over those evaluation episodes, not over seeds.
_RL_ZOO = "https://github.com/DLR-RM/rl-baselines3-zoo/blob/0088472b8cb622732bdbc4aa3d0d0abde86c67ed/benchmark.md"


def _rl_zoo(algorithm: str, figure: str, timesteps: int) -> Reference:
    return Reference(f"RL Zoo (SB3 {algorithm})", figure, timesteps, _RL_ZOO)


# Dopamine's published Atari curves (baselines/atari/data/pong.json): the mean return of the training episodes
# (epsilon 0.01, sticky actions) of each iteration of 1M frames, 5 runs. The figure is its JAX DQN (the settings of
# registry.ATARI_CONFIG_OVERRIDES, with an MSE loss where this DQN's is Huber) in its second iteration, the frames
# up to 2M (500,000 agent steps): the runs' -19.5, -18.4, -19.4, -17.3 and -18.1 (the spread is over the runs).
_DOPAMINE_PONG = (
    "https://github.com/google/dopamine/blob/5873f5494ee0c2d7c016d0ab2ad530354fec59d0/baselines/atari/data/pong.json"
)

# pgx's MinAtar PPO example (examples/minatar-ppo: the settings of registry.MINATAR_PPO_OVERRIDES, its own
# network, sticky actions 0.1, evaluation by sampled actions over 100 environments) publishes one learning curve
# per game, 20M steps against seconds of training, as figures only. Each figure here is read off its curve half way
# along the training seconds (10M steps at a constant rate): a reading, good to about a tenth.
_PGX_MINATAR = (
    "https://github.com/sotetsuk/pgx/blob/079b2d730e3845c25d49d99e0ccf9a374dd04cb9/examples/minatar-ppo/assets/"
)


def _pgx_minatar(game: str, asset: str, figure: str) -> tuple[tuple[str, str], Reference]:
    return ("ppo", f"jax:MinAtar-{game}"), Reference(
        "pgx (PPO, read off its curve)", figure, 10_000_000, f"{_PGX_MINATAR}{asset}.png"
    )


# MinAtar's own DQN (examples/dqn.py in kenjyoung/MinAtar: the replay ratio, batch, target period and step size of
# registry's DQN MinAtar baselines; its centred RMSProp, 1-step targets and exploration, epsilon 1 to 0.1 over 100k
# steps after 5k random ones, differ) publishes learning curves to 5M frames (agent steps: MinAtar skips no frames)
# as a figure only, the moving average of the last 100 training episodes' returns, acting epsilon-greedily at 0.1.
# Each figure here is read off its DQN curve at 1M frames, the registered budget: a reading, good to about a tenth
# of the axis. On Asterix the curve rises steeply there (about 1 at 0.8M, 12 at 1.25M).
_MINATAR_DQN = (
    "https://github.com/kenjyoung/MinAtar/blob/4241f24685622cfb52f843cab9bbcf385a53484a/img/learning_curves.gif"
)


def _minatar_dqn(game: str, figure: str) -> tuple[tuple[str, str], Reference]:
    return ("dqn", f"jax:MinAtar-{game}"), Reference(
        "MinAtar (DQN, training episodes, read off its curve)", figure, 1_000_000, _MINATAR_DQN
    )


# Crafter's scoreboard (its README): PPO (Stable-Baselines3) on Crafter, the game Craftax-Classic reimplements in
# JAX, after 1M steps from 64x64 pixels; the reward is the episode return (+1 per achievement, of 22, and +-0.1 per
# health point), its spread over seeds. Craftax's own 1M tables are for the full Craftax, not Classic.
_CRAFTER = "https://github.com/danijar/crafter/blob/8e341bb8db9ee841b037cdb2cb1fbdb4a6efe090/README.md"

REFERENCES: dict[tuple[str, str], Reference] = {
    ("dqn", "atari:Pong"): Reference("Dopamine (JAX DQN, training episodes)", "-18.55 ± 0.82", 500_000, _DOPAMINE_PONG),
    ("dqn", "gymnasium:CartPole-v1"): _rl_zoo("DQN", "500.0 ± 0.0", 50_000),
    ("ppo", "gymnasium:CartPole-v1"): _rl_zoo("PPO", "500.0 ± 0.0", 100_000),
    ("ppo", "gymnasium:Pendulum-v1"): _rl_zoo("PPO", "-172.2 ± 104.2", 100_000),
    ("sac", "gymnasium:Pendulum-v1"): _rl_zoo("SAC", "-157.0 ± 88.7", 20_000),
    ("td3", "gymnasium:Pendulum-v1"): _rl_zoo("TD3", "-151.9 ± 90.2", 20_000),
    ("ppo", "craftax:Craftax-Classic-Symbolic-v1"): Reference(
        "Crafter scoreboard (SB3 PPO on Crafter, pixels)", "4.2 ± 1.2", 1_000_000, _CRAFTER
    ),
    **dict(
        _pgx_minatar(game, asset, figure)
        for game, asset, figure in (
            ("Asterix", "asterix", "≈11"),
            ("Breakout", "breakout", "≈12"),
            ("Freeway", "freeway", "≈51"),
            ("Seaquest", "seaquest", "≈7"),
            ("SpaceInvaders", "space_invaders", "≈52"),
        )
    ),
    **dict(
        _minatar_dqn(game, figure)
        for game, figure in (
            ("Asterix", "≈4"),
            ("Breakout", "≈10"),
            ("Freeway", "≈48"),
            ("Seaquest", "≈1"),
            ("SpaceInvaders", "≈32"),
        )
    ),
}
