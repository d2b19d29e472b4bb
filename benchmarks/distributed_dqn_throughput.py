"""Actor-step throughput of distributed DQN (Ray, 1 and 2 actors) against the in-process run.

Each configuration trains DQN on CartPole for the same number of actor steps
(evaluation off) and reports actor steps per second; the distributed figures
are given as ratios to the in-process run measured in the same invocation.

    python benchmarks/distributed_dqn_throughput.py --steps 20000
writes benchmarks/results/distributed_dqn_throughput.json.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import launch  # noqa: E402
from acme.experiments import make_distributed_experiment, run_experiment  # noqa: E402
from acme.utils import loggers  # noqa: E402
from baselines import arguments  # noqa: E402
from baselines.registry import make_experiment_config  # noqa: E402
from benchmarks.common import machine, write_report  # noqa: E402

ENV_ID = "gymnasium:CartPole-v1"


def _config(steps: int, run_dir: str):
    return make_experiment_config(
        "dqn",
        ENV_ID,
        seed=0,
        max_steps=steps,
        eval_every=0,
        logger_factory=loggers.make_logger_factory(run_dir, time_delta=1.0, terminal=False),
    )


def _learner_steps(run_dir: str) -> int:
    with open(os.path.join(run_dir, "learner.csv")) as f:
        rows = list(csv.DictReader(f))
    return int(float(rows[-1]["learner_steps"])) if rows else 0


def in_process(steps: int) -> dict:
    run_dir = tempfile.mkdtemp(prefix="bench-local-")
    result = run_experiment(_config(steps, run_dir), progress=False)
    return {
        "actor_steps": result.actor_steps,
        "learner_steps": result.learner_steps,
        "wall_seconds": round(result.wall_seconds, 2),
        "actor_steps_per_second": round(result.actor_steps / result.wall_seconds, 1),
    }


def distributed(steps: int, num_actors: int, launcher: str) -> dict:
    run_dir = tempfile.mkdtemp(prefix=f"bench-{launcher}{num_actors}-")
    program = make_distributed_experiment(_config(steps, run_dir), num_actors=num_actors)
    start = time.perf_counter()
    launch.launch(program, launcher=launcher)
    wall = time.perf_counter() - start
    actor_steps = 0
    for actor_id in range(num_actors):
        with open(os.path.join(run_dir, f"actor_{actor_id}.csv")) as f:
            rows = list(csv.DictReader(f))
        actor_steps = max(actor_steps, int(float(rows[-1]["actor_steps"])))
    return {
        "actor_steps": actor_steps,
        "learner_steps": _learner_steps(run_dir),
        "wall_seconds": round(wall, 2),
        "actor_steps_per_second": round(actor_steps / wall, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=arguments.positive_integer, default=20_000)
    parser.add_argument(
        "--output", default=os.path.join(os.path.dirname(__file__), "results", "distributed_dqn_throughput.json")
    )
    args = parser.parse_args()
    results = {"in_process": in_process(args.steps)}
    print("in_process", results["in_process"], flush=True)
    for num_actors in (1, 2):
        key = f"ray_{num_actors}_actors"
        results[key] = distributed(args.steps, num_actors, "ray")
        print(key, results[key], flush=True)
    reference = results["in_process"]["actor_steps_per_second"]
    report = {
        "benchmark": "distributed_dqn_throughput",
        "environment": ENV_ID,
        "actor_steps_budget": args.steps,
        "machine": machine(),
        "note": "Wall time includes start-up (Ray cluster, jit compilation) for every configuration.",
        "results": results,
        "ratio_to_in_process": {k: round(v["actor_steps_per_second"] / reference, 3) for k, v in results.items()},
    }
    write_report(args.output, report, summary=report["ratio_to_in_process"])


if __name__ == "__main__":
    main()
