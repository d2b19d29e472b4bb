"""Per-task normalised scores, so that returns of different tasks can be aggregated.

A return on a task is scored as ``(return - random) / (target - random)``: 0 is the uniform random policy's mean
return on the task, 1 its registered target. The random figures are measured, not quoted: the mean undiscounted
return of uniformly random actions (the action spec's bounds) over ``RANDOM_EPISODES`` episodes from seed
``RANDOM_SEED``, in the environment an evaluator plays; ``python -m baselines.normalisation ID ...`` measures them
again (and a task's figure before it is added here). A task without an entry here has no normalised score:
``scale_of`` refuses it, saying how to add one.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Sequence

import numpy as np

RANDOM_SEED = 0
RANDOM_EPISODES = 1_000

# Where a target comes from: gymnasium's own "solved" threshold for the task, or the registered baselines' target.
_GYMNASIUM_THRESHOLD = "gymnasium's reward_threshold for CartPole-v1"
_REGISTERED = "the registered baselines' target"


@dataclasses.dataclass(frozen=True)
class TaskScale:
    """What a task's returns are normalised by: its random policy's mean return (0) and its target (1)."""

    random_return: float  # mean over RANDOM_EPISODES episodes, measured by measure_random_return
    random_stderr: float  # the standard error of that mean
    target_return: float
    target_source: str

    def normalise(self, returns: Sequence[float] | np.ndarray) -> np.ndarray:
        """``returns`` as normalised scores: (return - random) / (target - random)."""
        return (np.asarray(returns, dtype=float) - self.random_return) / (self.target_return - self.random_return)


# Random figures measured with `python -m baselines.normalisation ID` (1,000 episodes, seed 0). CartPole's random
# policy is blind, so hiding its velocities (memory:, jax:MemoryCartPole-v1) leaves the same figure. MinAtar
# Breakout's is the random policy over the id's three actions (no-op, left, right): 0.39, as the minatar package
# gives over its minimal action set (over all six actions, whose three extra ones do nothing in Breakout, the
# package gives the 0.5 its README quotes).
# Pong's random figure is under the atari: ids' conventions (sticky actions 0.25, no-op starts): -20.25, where the
# literature's -20.7 (Mnih et al. 2015) was measured without sticky actions.
# Pendulum's target is -200, that of every Pendulum baseline but PPO's (-300, a looser bar registered for its
# on-policy run): PPO is scored against -200 like the others.
SCALES: dict[str, TaskScale] = {
    "gymnasium:CartPole-v1": TaskScale(22.55, 0.38, 475.0, _GYMNASIUM_THRESHOLD),
    "jax:CartPole-v1": TaskScale(22.87, 0.38, 475.0, _GYMNASIUM_THRESHOLD),
    "memory:CartPole-v1": TaskScale(22.55, 0.38, 475.0, _GYMNASIUM_THRESHOLD),
    "jax:MemoryCartPole-v1": TaskScale(22.87, 0.38, 475.0, _GYMNASIUM_THRESHOLD),
    "gymnasium:Pendulum-v1": TaskScale(-1234.97, 9.17, -200.0, _REGISTERED),
    "jax:Pendulum-v1": TaskScale(-1227.11, 9.22, -200.0, _REGISTERED),
    "dm_control:cartpole/swingup": TaskScale(27.14, 0.63, 700.0, _REGISTERED),
    # 200 episodes, not 1,000: MJX stepped one action at a time from the host takes about 0.8 s an episode.
    "playground:CartpoleSwingup": TaskScale(27.26, 1.40, 700.0, _REGISTERED),
    "jax:MinAtar-Asterix": TaskScale(0.52, 0.03, 10.0, _REGISTERED),
    "jax:MinAtar-Breakout": TaskScale(0.39, 0.02, 10.0, _REGISTERED),
    "jax:MinAtar-Freeway": TaskScale(0.40, 0.02, 40.0, _REGISTERED),
    "jax:MinAtar-Seaquest": TaskScale(0.10, 0.01, 5.0, _REGISTERED),
    "jax:MinAtar-SpaceInvaders": TaskScale(4.21, 0.10, 40.0, _REGISTERED),
    "atari:Pong": TaskScale(-20.25, 0.03, -18.0, _REGISTERED),
    "craftax:Craftax-Classic-Symbolic-v1": TaskScale(1.39, 0.04, 4.2, _REGISTERED),
}


class NoScaleError(ValueError):
    """A task without a random-policy return and target to normalise its returns by."""


def scale_of(environment_id: str) -> TaskScale:
    """The normaliser of ``environment_id``; ``NoScaleError`` for a task without one."""
    scale = SCALES.get(environment_id)
    if scale is None:
        raise NoScaleError(
            f"No normalised score for {environment_id}: it needs its random policy's return and a target in "
            f"baselines/normalisation.py (SCALES; known: {', '.join(sorted(SCALES))}). Measure the first with "
            f"`python -m baselines.normalisation {environment_id}` and add both."
        )
    return scale


def normalise(environment_id: str, returns: Sequence[float] | np.ndarray) -> np.ndarray:
    """``returns`` on ``environment_id`` as normalised scores; ``NoScaleError`` for a task without a normaliser."""
    return scale_of(environment_id).normalise(returns)


def measure_random_return(
    environment_id: str, episodes: int = RANDOM_EPISODES, seed: int = RANDOM_SEED
) -> tuple[float, float]:
    """The mean undiscounted return of uniformly random actions over ``episodes`` episodes of ``environment_id``
    (as an evaluator plays it, seeded with ``seed``), and its standard error."""
    from acme import specs
    from acme.environments import make_environment

    if episodes < 2:
        raise ValueError(f"episodes must be at least 2 (for a standard error), got {episodes}.")
    environment = make_environment(environment_id, seed=seed, evaluation=True)
    rng = np.random.default_rng(seed)
    action_spec = environment.action_spec()

    def random_action():
        if isinstance(action_spec, specs.DiscreteArray):
            return np.asarray(rng.integers(action_spec.num_values), action_spec.dtype)
        if isinstance(action_spec, specs.BoundedArray):
            low = np.broadcast_to(action_spec.minimum, action_spec.shape)
            high = np.broadcast_to(action_spec.maximum, action_spec.shape)
            return rng.uniform(low, high).astype(action_spec.dtype)
        raise ValueError(f"{environment_id}: no uniform random policy for an unbounded action spec {action_spec}.")

    returns = []
    try:
        for _ in range(episodes):
            timestep, total = environment.reset(), 0.0
            while not timestep.last():
                timestep = environment.step(random_action())
                total += float(timestep.reward)
            returns.append(total)
    finally:
        environment.close()
    return float(np.mean(returns)), float(np.std(returns, ddof=1) / np.sqrt(len(returns)))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m baselines.normalisation",
        description="Measures the uniform random policy's mean return on each task (for SCALES).",
    )
    parser.add_argument("environments", nargs="+", metavar="ID", help="environment ids, e.g. gymnasium:CartPole-v1")
    parser.add_argument("--episodes", type=int, default=RANDOM_EPISODES)
    parser.add_argument("--seed", type=int, default=RANDOM_SEED)
    args = parser.parse_args(argv)
    for environment_id in args.environments:
        mean, stderr = measure_random_return(environment_id, args.episodes, args.seed)
        print(
            f"{environment_id}: {mean:.2f} ± {stderr:.2f} (standard error; {args.episodes} episodes, seed {args.seed})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
