"""Scripted experts for tests of offline learning: datasets in seconds, without training an agent first."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

CARTPOLE = "gymnasium:CartPole-v1"
PENDULUM = "gymnasium:Pendulum-v1"


def cartpole_expert(observation: np.ndarray) -> np.ndarray:
    """Pushes the cart towards where the pole falls (angle plus half its angular velocity): holds CartPole-v1's
    pole up for all 500 steps."""
    _, _, angle, angular_velocity = observation
    return np.asarray(int(angle + 0.5 * angular_velocity > 0), np.int64)


def pendulum_expert(observation: np.ndarray) -> np.ndarray:
    """Pendulum-v1 in the canonical action range [-1, 1] (torque / 2): pumps energy with full torque until the
    pendulum is near the top, then holds it there with a proportional-derivative torque (about -130 per episode
    from most starts)."""
    cos, sin, velocity = observation
    if cos > 0.85:
        torque = -(10.0 * np.arctan2(sin, cos) + 2.0 * velocity) / 2.0
    else:
        energy = 0.5 * velocity**2 + 10.0 * (cos - 1.0)  # 0 at rest at the top
        torque = -np.sign(velocity) if energy > 0 else (np.sign(velocity) if abs(velocity) > 1e-3 else 1.0)
    return np.clip(np.asarray([torque], np.float32), -1.0, 1.0)


def write_cartpole_expert_dataset(directory: str, episodes: int) -> str:
    """``episodes`` episodes of ``cartpole_expert`` on CartPole-v1 (seed 0; 500 steps each) written as a Minari
    dataset in ``directory``; returns ``directory``."""
    return _write(directory, CARTPOLE, *expert_episodes(CARTPOLE, cartpole_expert, episodes))


def write_pendulum_expert_dataset(directory: str, episodes: int) -> str:
    """``episodes`` episodes of ``pendulum_expert`` on Pendulum-v1 (seed 0; 200 steps each, actions in [-1, 1])
    written as a Minari dataset in ``directory``; returns ``directory``."""
    return _write(directory, PENDULUM, *expert_episodes(PENDULUM, pendulum_expert, episodes, canonical_actions=True))


def expert_episodes(
    environment_id: str, expert: Callable[[np.ndarray], np.ndarray], episodes: int, seed: int = 0, **make_kwargs: Any
) -> tuple[list, Any]:
    """``episodes`` episodes of ``expert(observation) -> action`` on ``environment_id`` (made with ``seed`` and
    ``make_kwargs``) and the environment's spec, as ``write_dataset`` takes them."""
    from acme import specs
    from acme.datasets.minari_format import EpisodeRecorder
    from acme.environments import make_environment

    environment = make_environment(environment_id, seed=seed, **make_kwargs)
    recorder = EpisodeRecorder()
    for _ in range(episodes):
        timestep = environment.reset()
        recorder.observe_first(timestep)
        while not timestep.last():
            action = expert(timestep.observation)
            timestep = environment.step(action)
            recorder.observe(action, timestep)
    return recorder.episodes, specs.make_environment_spec(environment)


def _write(directory: str, environment_id: str, episodes: list, spec: Any) -> str:
    from acme.datasets.minari_format import write_dataset

    write_dataset(directory, episodes, spec, environment_id)
    return directory
