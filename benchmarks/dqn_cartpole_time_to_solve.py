"""DQN on CartPole: environment steps and wall-clock to first reach a mean evaluation return of 475.

Also measures, in the same run, the raw speed of stepping CartPole with random
actions, so the training throughput is reported as a ratio to it rather than
as a bare number from a noisy shared machine.

    python benchmarks/dqn_cartpole_time_to_solve.py --seeds 0 1 2 --max-steps 100000
writes benchmarks/results/dqn_cartpole_time_to_solve.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from acme.environments import make_environment  # noqa: E402
from acme.experiments import run_experiment  # noqa: E402
from acme.utils import loggers  # noqa: E402
from baselines import arguments  # noqa: E402
from baselines.registry import make_experiment_config  # noqa: E402
from benchmarks.common import machine, write_report  # noqa: E402

ENV_ID = "gymnasium:CartPole-v1"
TARGET = 475.0


def raw_environment_steps_per_second(num_steps: int = 20_000) -> float:
    """Random-action stepping of the same wrapped environment: the reference speed."""
    env = make_environment(ENV_ID, seed=0)
    rng = np.random.default_rng(0)
    env.reset()
    start = time.perf_counter()
    for _ in range(num_steps):
        if env.step(np.int32(rng.integers(2))).last():
            env.reset()
    return num_steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=arguments.seed, nargs="+", default=[0, 1, 2])
    parser.add_argument("--max-steps", type=arguments.positive_integer, default=100_000)
    parser.add_argument("--eval-every", type=arguments.positive_integer, default=2_500)
    parser.add_argument("--stop-at-target", action="store_true", help="end each run when it first reaches 475")
    parser.add_argument(
        "--output", default=os.path.join(os.path.dirname(__file__), "results", "dqn_cartpole_time_to_solve.json")
    )
    args = parser.parse_args()

    reference = raw_environment_steps_per_second()
    runs = []
    for seed in args.seeds:
        config = make_experiment_config(
            "dqn",
            ENV_ID,
            seed=seed,
            max_steps=args.max_steps,
            eval_every=args.eval_every,
            logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
        )
        result = run_experiment(config, progress=False, stop_at_return=TARGET if args.stop_at_target else None)
        first = result.first_reaching(TARGET)
        after = [e.mean_return for e in result.evaluations if first is not None and e.actor_steps >= first.actor_steps]
        run = {
            "seed": seed,
            "reached_target": first is not None,
            "steps_to_target": first.actor_steps if first else None,
            "seconds_to_target": round(first.wall_seconds, 1) if first else None,
            "best_return": result.best.mean_return if result.best else None,
            "final_return": result.evaluations[-1].mean_return if result.evaluations else None,
            "fraction_of_later_evaluations_at_target": (
                round(float(np.mean(np.asarray(after) >= TARGET)), 3) if after else None
            ),
            "actor_steps": result.actor_steps,
            "learner_steps": result.learner_steps,
            "wall_seconds": round(result.wall_seconds, 1),
            "training_steps_per_second": round(result.actor_steps / result.wall_seconds, 1),
            "curve": [[e.actor_steps, round(e.mean_return, 1)] for e in result.evaluations],
        }
        runs.append(run)
        print(json.dumps({k: v for k, v in run.items() if k != "curve"}), flush=True)

    solved = [r for r in runs if r["reached_target"]]
    report = {
        "benchmark": "dqn_cartpole_time_to_solve",
        "environment": ENV_ID,
        "target_return": TARGET,
        "max_steps": args.max_steps,
        "eval_every": args.eval_every,
        "machine": machine(platform=platform.platform()),
        "reference_raw_env_steps_per_second": round(reference, 1),
        "seeds_reaching_target": f"{len(solved)}/{len(runs)}",
        "median_steps_to_target": float(np.median([r["steps_to_target"] for r in solved])) if solved else None,
        "median_seconds_to_target": float(np.median([r["seconds_to_target"] for r in solved])) if solved else None,
        "training_throughput_ratio_to_raw_env": round(
            float(np.mean([r["training_steps_per_second"] for r in runs])) / reference, 4
        ),
        "runs": runs,
    }
    write_report(args.output, report, summary={k: v for k, v in report.items() if k != "runs"})


if __name__ == "__main__":
    main()
