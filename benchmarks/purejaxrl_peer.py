"""PureJaxRL's PPO (luchris429/purejaxrl, its ``purejaxrl/ppo.py`` as published) timed as a same-run peer.

PureJaxRL is the on-device PPO a user would pick instead of this library's; timing it in the same benchmark run,
on the same machine and core, turns our figures into ratios that do not depend on the host. Its source is not
part of this repository: ``--source`` names a checkout (``make install-purejaxrl`` exports commit 31756b1 into
``.peers/purejaxrl-31756b1``; elsewhere ``git clone https://github.com/luchris429/purejaxrl``). Its ``ppo.py`` is
imported unmodified; its ``wrappers.py`` imports brax and navix at the top for wrappers CartPole does not use, so
where they are not installed empty modules stand in for them (the JSON says so).

    python benchmarks/purejaxrl_peer.py --source DIR [--num-envs 4] [--num-seeds 1] [--total-timesteps 500000]
        [--seed 0] [--core 0] [--target 475]

prints one JSON line: the call's compilation and run seconds, environment steps/s summed over seeds, and for each
seed the first update whose finished training episodes averaged ``--target`` or more, with the wall-clock to it
(compilation plus that share of the run). The settings are those of ``ppo.py``'s own ``__main__`` (CartPole-v1,
4 x 128 steps, 4 epochs of 4 minibatches, learning rate 2.5e-4 annealed). This file imports nothing from the
library, so it runs in the peer's own venv (``.venv-purejaxrl``, pinned by ``constraints-purejaxrl.txt``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
import types

SETTINGS = {
    "LR": 2.5e-4,
    "NUM_STEPS": 128,
    "UPDATE_EPOCHS": 4,
    "NUM_MINIBATCHES": 4,
    "GAMMA": 0.99,
    "GAE_LAMBDA": 0.95,
    "CLIP_EPS": 0.2,
    "ENT_COEF": 0.01,
    "VF_COEF": 0.5,
    "MAX_GRAD_NORM": 0.5,
    "ACTIVATION": "tanh",
    "ENV_NAME": "CartPole-v1",
    "ANNEAL_LR": True,
    "DEBUG": False,
}


def _stand_in_for_unused_imports() -> list[str]:
    """Empty modules for the brax and navix imports ``wrappers.py`` makes at the top (none is used by CartPole)."""
    stood_in = []
    for name in ("brax", "brax.envs", "brax.envs.wrappers", "brax.envs.wrappers.training", "navix"):
        root = name.split(".")[0]
        if root in stood_in or importlib.util.find_spec(root) is None:
            module = types.ModuleType(name)
            module.__getattr__ = lambda attribute: None  # `from brax.envs... import EpisodeWrapper` gets None
            sys.modules[name] = module
            if root not in stood_in:
                stood_in.append(root)
    return stood_in


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", required=True, help="a PureJaxRL checkout (holding purejaxrl/ppo.py)")
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--num-seeds", type=int, default=1)
    parser.add_argument("--total-timesteps", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--core", type=int, default=None, help="pin to this core (single-threaded XLA is the caller's)")
    parser.add_argument("--target", type=float, default=475.0)
    args = parser.parse_args()
    if args.core is not None:
        os.sched_setaffinity(0, {args.core})
    sys.path.insert(0, os.path.join(args.source, "purejaxrl"))  # ppo.py imports `wrappers` as a top-level module
    stood_in = _stand_in_for_unused_imports()

    import jax
    import numpy as np
    import ppo  # PureJaxRL's, from --source

    config = dict(SETTINGS, NUM_ENVS=args.num_envs, TOTAL_TIMESTEPS=args.total_timesteps)
    train = jax.jit(jax.vmap(ppo.make_train(config)))
    keys = jax.random.split(jax.random.PRNGKey(args.seed), args.num_seeds)
    start = time.perf_counter()
    compiled = train.lower(keys).compile()
    compile_seconds = time.perf_counter() - start
    start = time.perf_counter()
    out = jax.block_until_ready(compiled(keys))
    run_seconds = time.perf_counter() - start

    info = jax.device_get(out["metrics"])  # leaves [seeds, updates, steps, envs]
    finished, returns = np.asarray(info["returned_episode"]), np.asarray(info["returned_episode_returns"])
    num_updates = finished.shape[1]
    steps_per_update = config["NUM_STEPS"] * config["NUM_ENVS"]
    seeds = []
    for s in range(args.num_seeds):
        ended = finished[s].reshape(num_updates, -1)
        means = [
            float(returns[s, u].reshape(-1)[ended[u]].mean()) if ended[u].any() else None for u in range(num_updates)
        ]
        first = next((u for u, m in enumerate(means) if m is not None and m >= args.target), None)
        seeds.append(
            {
                "seed": args.seed + s,
                "first_at_target": None
                if first is None
                else {
                    "step": (first + 1) * steps_per_update,
                    "wall_seconds": round(compile_seconds + run_seconds * (first + 1) / num_updates, 2),
                },
                "final_training_return": means[-1],
            }
        )
    steps = num_updates * steps_per_update * args.num_seeds
    print(
        json.dumps(
            {
                "peer": "purejaxrl",
                "source": os.path.abspath(args.source),
                "stood_in_for": stood_in,
                "jax": jax.__version__,
                "num_envs": args.num_envs,
                "num_seeds": args.num_seeds,
                "total_timesteps": num_updates * steps_per_update,
                "compile_seconds": round(compile_seconds, 2),
                "seconds": round(run_seconds, 3),
                "wall_seconds": round(compile_seconds + run_seconds, 2),
                "steps_per_second": round(steps / run_seconds),
                "seeds": seeds,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
