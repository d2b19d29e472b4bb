"""One SBX run under the peer protocol, for ``peer_protocol.py --peer-python`` (run in an interpreter with SBX).

SBX is the JAX library a user would pick instead of this one; timing it in the
same benchmark run, on the same machine and core, turns our figures into
ratios that do not depend on which host the benchmark happened to land on.
The hyper-parameters are RL Baselines3 Zoo's for these tasks (DQN CartPole-v1:
256-256 MLP, lr 2.3e-3, batch 64, 128 updates every 256 steps, target copy
every 10 updates; SAC Pendulum-v1: lr 1e-3, SBX's defaults otherwise), the
evaluation is SB3's ``EvalCallback`` (10 deterministic episodes).

    python benchmarks/sbx_peer.py dqn SEED MAX_STEPS EVAL_EVERY CORE

prints one JSON line with the same fields as ``peer_protocol.run_one``. This
file imports nothing from the library, so it runs in the peer's own venv.
"""

from __future__ import annotations

import json
import os
import sys
import time

ENVIRONMENTS = {"dqn": "CartPole-v1", "sac": "Pendulum-v1"}
HYPER_PARAMETERS = {
    "dqn": dict(
        learning_rate=2.3e-3,
        batch_size=64,
        buffer_size=100_000,
        learning_starts=1_000,
        gamma=0.99,
        target_update_interval=10,
        train_freq=256,
        gradient_steps=128,
        exploration_fraction=0.16,
        exploration_final_eps=0.04,
        policy_kwargs=dict(net_arch=[256, 256]),
    ),
    "sac": dict(learning_rate=1e-3),
}


def run(agent: str, seed: int, max_steps: int, eval_every: int, core: int) -> dict:
    """Trains SBX's ``agent`` for ``max_steps`` steps pinned to ``core``; returns the protocol's figures."""
    os.sched_setaffinity(0, {core})
    import gymnasium as gym
    import sbx
    from stable_baselines3.common.callbacks import EvalCallback

    class TimedEval(EvalCallback):
        """SB3's evaluation callback, noting the wall-clock seconds of each evaluation."""

        def __init__(self, *args, start: float, **kwargs):
            super().__init__(*args, **kwargs)
            self.start, self.curve = start, []

        def _on_step(self) -> bool:
            keep_going = super()._on_step()
            if self.eval_freq > 0 and self.n_calls % self.eval_freq == 0:
                self.curve.append((self.num_timesteps, float(self.last_mean_reward), time.perf_counter() - self.start))
            return keep_going

    environment = ENVIRONMENTS[agent]
    start = time.perf_counter()
    model = getattr(sbx, agent.upper())(
        "MlpPolicy", gym.make(environment), seed=seed, verbose=0, **HYPER_PARAMETERS[agent]
    )
    from stable_baselines3.common.monitor import Monitor

    callback = TimedEval(
        Monitor(gym.make(environment)),
        n_eval_episodes=10,
        eval_freq=eval_every,
        deterministic=True,
        verbose=0,
        start=start,
    )
    model.learn(total_timesteps=max_steps, callback=callback)
    wall = time.perf_counter() - start
    target = {"dqn": 475.0, "sac": -200.0}[agent]
    first = next(((steps, seconds) for steps, value, seconds in callback.curve if value >= target), None)
    from importlib import metadata

    return {
        "agent": agent,
        "seed": seed,
        "library": f"SBX {metadata.version('sbx-rl')}",
        "jax": metadata.version("jax"),
        "actor_steps": max_steps,
        "wall_seconds": round(wall, 2),
        "training_steps_per_second": round(max_steps / wall, 1),
        "first_at_target": None if first is None else {"step": first[0], "wall_seconds": round(first[1], 2)},
        "final_return": round(callback.curve[-1][1], 1) if callback.curve else None,
        "curve": [[steps, round(value, 1)] for steps, value, _ in callback.curve],
    }


if __name__ == "__main__":
    agent, seed, max_steps, eval_every, core = sys.argv[1], *map(int, sys.argv[2:6])
    print(json.dumps(run(agent, seed, max_steps, eval_every, core)), flush=True)
