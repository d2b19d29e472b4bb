"""Do distributed runs learn what one process learns? The registered baselines' DQN CartPole and SAC Pendulum
runs, distributed on Ray, per seed: the evaluation curve, the first step at the target, the final return and
how many later evaluations held the target.

Each run is the command a user types (``python -m baselines run AGENT --env ENV --launcher ray ...``) with the
baseline's own budget, evaluation interval and config, 1 actor, the learner holding the replay
(``--replay learner``) and the learner pinned to core 0, the actor to the other cores (``--placement``).

    python benchmarks/distributed_returns.py [--agents dqn sac] [--seeds 0 1 2]
writes benchmarks/results/distributed_returns.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

from baselines import registry, results  # noqa: E402
from benchmarks.common import machine, pinned_placement, write_report  # noqa: E402

RUNS = {"dqn": "gymnasium:CartPole-v1", "sac": "gymnasium:Pendulum-v1"}


def curve_summary(curve: list[tuple[int, float]], target: float) -> dict:
    """First step at ``target``, the final return, and the share of evaluations after the first that held it."""
    reached = [i for i, (_, value) in enumerate(curve) if value >= target]
    summary = {"final_return": curve[-1][1] if curve else None, "first_step_at_target": None, "held_after": None}
    if reached:
        first = reached[0]
        later = [value for _, value in curve[first + 1 :]]
        summary["first_step_at_target"] = curve[first][0]
        summary["held_after"] = round(sum(v >= target for v in later) / len(later), 3) if later else None
    return summary


def run_seed(agent: str, env_id: str, seed: int, num_actors: int) -> dict:
    run_dir = tempfile.mkdtemp(prefix=f"distributed-{agent}-{seed}-")
    command = [
        sys.executable,
        "-m",
        "baselines",
        "run",
        agent,
        "--env",
        env_id,
        "--seed",
        str(seed),
        "--launcher",
        "ray",
        "--replay",
        "learner",
        "--num-actors",
        str(num_actors),
        "--placement",
        json.dumps(pinned_placement(os.cpu_count())),
        "--run-dir",
        run_dir,
        "--no-progress",
    ]
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    curve = [(int(float(r["actor_steps"])), float(r["evaluation_return"])) for r in results.evaluator_rows(run_dir)]
    baseline = registry.BASELINES[(agent, env_id)]
    return {
        "seed": seed,
        "wall_seconds": round(wall, 1),
        "curve": curve,
        **curve_summary(curve, baseline.target_return),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", nargs="+", choices=list(RUNS), default=list(RUNS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--num-actors", type=int, default=1)
    parser.add_argument("--output", default=os.path.join(ROOT, "benchmarks", "results", "distributed_returns.json"))
    args = parser.parse_args(argv)
    if args.num_actors < 1:
        parser.error(f"--num-actors must be >= 1, got {args.num_actors}")
    report = {"benchmark": "distributed_returns", "machine": machine(), "num_actors": args.num_actors, "runs": {}}
    summary = {}
    for agent in args.agents:
        env_id = RUNS[agent]
        baseline = registry.BASELINES[(agent, env_id)]
        seeds = []
        for seed in args.seeds:
            seeds.append(run_seed(agent, env_id, seed, args.num_actors))
            print(agent, {k: v for k, v in seeds[-1].items() if k != "curve"}, flush=True)
        reached = sum(s["first_step_at_target"] is not None for s in seeds)
        report["runs"][agent] = {
            "environment": env_id,
            "target_return": baseline.target_return,
            "max_steps": baseline.max_steps,
            "seeds": seeds,
            "seeds_reaching_target": reached,
        }
        summary[agent] = {"reached": f"{reached}/{len(seeds)}", "finals": [s["final_return"] for s in seeds]}
    write_report(args.output, report, summary=summary)


if __name__ == "__main__":
    main()
