"""Actor-step throughput of distributed DQN (Ray: 1 and 2 actors, and 2 actors with an inference server)
against the in-process run.

Each configuration trains DQN on CartPole (evaluation off, the same samples-per-insert ratio) twice, for
``--steps`` and for twice as many actor steps. The difference between the two runs is steady-state work, so
the steady-state rate is ``steps / (T(2 steps) - T(steps))`` and what the first run spent on start-up (Ray's
processes, jit compilation, filling replay to its minimum) is ``2 T(steps) - T(2 steps)``. Rates are also
given as ratios to the in-process run measured in the same invocation.

    python benchmarks/distributed_dqn_throughput.py --steps 10000
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


def distributed(steps: int, num_actors: int, launcher: str, inference: str = "actor") -> dict:
    run_dir = tempfile.mkdtemp(prefix=f"bench-{launcher}{num_actors}-")
    program = make_distributed_experiment(_config(steps, run_dir), num_actors=num_actors, inference=inference)
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


CONFIGURATIONS = {
    "in_process": lambda steps: in_process(steps),
    "ray_1_actors": lambda steps: distributed(steps, 1, "ray"),
    "ray_2_actors": lambda steps: distributed(steps, 2, "ray"),
    "ray_2_actors_inference_server": lambda steps: distributed(steps, 2, "ray", inference="server"),
}


def steady_state(short: dict, long: dict) -> dict:
    """The steady-state rate and the start-up seconds from a run and one of twice its steps."""
    extra_steps = long["actor_steps"] - short["actor_steps"]
    extra_seconds = long["wall_seconds"] - short["wall_seconds"]
    rate = extra_steps / extra_seconds if extra_seconds > 0 else float("nan")
    return {
        "steady_actor_steps_per_second": round(rate, 1),
        "startup_seconds": round(short["wall_seconds"] - short["actor_steps"] / rate, 1),
        "learner_steps_per_actor_step": round(long["learner_steps"] / long["actor_steps"], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=arguments.positive_integer, default=10_000)
    parser.add_argument("--configurations", nargs="+", choices=list(CONFIGURATIONS), default=list(CONFIGURATIONS))
    parser.add_argument(
        "--output", default=os.path.join(os.path.dirname(__file__), "results", "distributed_dqn_throughput.json")
    )
    args = parser.parse_args()
    results = {}
    for name in args.configurations:
        short, long = CONFIGURATIONS[name](args.steps), CONFIGURATIONS[name](2 * args.steps)
        results[name] = {"runs": [short, long], **steady_state(short, long)}
        print(name, results[name], flush=True)
    report = {
        "benchmark": "distributed_dqn_throughput",
        "environment": ENV_ID,
        "actor_steps_budgets": [args.steps, 2 * args.steps],
        "machine": machine(),
        "note": "steady_actor_steps_per_second leaves out start-up (Ray's processes, jit compilation, the replay's "
        "minimum), which startup_seconds gives; each run's wall_seconds includes it.",
        "results": results,
    }
    summary = {name: result["steady_actor_steps_per_second"] for name, result in results.items()}
    if "in_process" in results:
        reference = results["in_process"]["steady_actor_steps_per_second"]
        report["steady_ratio_to_in_process"] = {name: round(rate / reference, 3) for name, rate in summary.items()}
        summary = report["steady_ratio_to_in_process"]
    write_report(args.output, report, summary=summary)


if __name__ == "__main__":
    main()
