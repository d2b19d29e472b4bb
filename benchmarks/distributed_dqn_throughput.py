"""Actor-step throughput of distributed DQN (Ray: 1 and 2 actors, and 2 actors with an inference server)
against the in-process run, where each run's CPU time goes, and what the scaling model makes of it.

Each configuration trains DQN on CartPole (the registered baseline's config, evaluation off, the same
samples-per-insert ratio) twice, for ``--steps`` and for twice as many actor steps. The difference between the
two runs is steady-state work, so the steady-state rate is ``steps / (T(2 steps) - T(steps))`` and what the
first run spent on start-up (Ray's processes, jit compilation, filling replay to its minimum) is
``2 T(steps) - T(2 steps)``. Rates are also given as ratios to the in-process run measured in the same
invocation.

During the distributed runs ``cpu_accounting`` samples every process's CPU time and the loopback traffic; a
node of the program reports the learner's, the actors' and the inference server's process ids. The same
difference of the two runs gives CPU microseconds per actor step by role, the unit costs of
``scaling_model``, which then predicts each configuration's rate (against the measured one) and that of 8, 64
and 512 actors on a cluster: a core per actor and for the inference server, 4-core hosts for the learner and
for replay, a 10 Gbit/s network.

    python benchmarks/distributed_dqn_throughput.py --steps 5000 [--overrides '{"n_step": 3}']
writes benchmarks/results/distributed_dqn_throughput.json.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import launch  # noqa: E402
from acme.experiments import make_distributed_experiment, run_experiment  # noqa: E402
from acme.utils import loggers  # noqa: E402
from baselines import arguments, registry  # noqa: E402
from baselines.registry import make_experiment_config  # noqa: E402
from benchmarks import components, cpu_accounting, scaling_model  # noqa: E402
from benchmarks.common import machine, pinned_placement, write_report  # noqa: E402

ENV_ID = "gymnasium:CartPole-v1"


CONFIG_OVERRIDES: dict = {}  # --overrides: DQN config fields on top of the registered baseline's


def _config(steps: int, run_dir: str):
    return make_experiment_config(
        "dqn",
        ENV_ID,
        seed=0,
        max_steps=steps,
        eval_every=0,
        logger_factory=loggers.make_logger_factory(run_dir, time_delta=1.0, terminal=False),
        config_overrides=CONFIG_OVERRIDES,
    )


def _learner_steps(run_dir: str) -> int:
    with open(os.path.join(run_dir, "learner.csv")) as f:
        rows = list(csv.DictReader(f))
    return int(float(rows[-1]["learner_steps"])) if rows else 0


def in_process(steps: int) -> dict:
    run_dir = tempfile.mkdtemp(prefix="bench-local-")
    cpu_start = time.process_time()
    result = run_experiment(_config(steps, run_dir), progress=False)
    return {
        "cpu_seconds": {"driver": round(time.process_time() - cpu_start, 3)},
        "actor_steps": result.actor_steps,
        "learner_steps": result.learner_steps,
        "wall_seconds": round(result.wall_seconds, 2),
        "actor_steps_per_second": round(result.actor_steps / result.wall_seconds, 1),
    }


def distributed(
    steps: int,
    num_actors: int,
    launcher: str,
    inference: str = "actor",
    replay: str = "reverb",
    pinned: bool = False,
    feed: str = "reverb",
) -> dict:
    run_dir = tempfile.mkdtemp(prefix=f"bench-{launcher}{num_actors}-")
    program = make_distributed_experiment(
        _config(steps, run_dir), num_actors=num_actors, inference=inference, replay=replay, learner_feed=feed
    )
    pids_path = os.path.join(run_dir, "node_pids.json")
    actors = [program.get(label).handle for label in program.groups["actor"]]
    server = program.get("inference").handle if inference == "server" else None
    program.add_node(
        launch.FunctionNode(cpu_accounting.report_node_pids, pids_path, program.get("learner").handle, actors, server),
        label="node_pids",
    )
    sampler = cpu_accounting.CpuSampler()
    start = time.perf_counter()
    placement = launch.placement_from_json(json.dumps(pinned_placement(os.cpu_count()))) if pinned else None
    with sampler:
        launch.launch(program, launcher=launcher, placement=placement)
    wall = time.perf_counter() - start
    with open(pids_path) as f:
        node_pids = json.load(f)
    actor_steps = 0
    for actor_id in range(num_actors):
        with open(os.path.join(run_dir, f"actor_{actor_id}.csv")) as f:
            rows = list(csv.DictReader(f))
        actor_steps = max(actor_steps, int(float(rows[-1]["actor_steps"])))
    return {
        "num_actors": num_actors,
        "pinned": pinned,
        "cpu_seconds": cpu_accounting.cpu_by_role(sampler, node_pids),
        "loopback_bytes": sampler.loopback_bytes,
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
    "ray_2_actors_learner_replay_inference_server": lambda steps: distributed(
        steps, 2, "ray", inference="server", replay="learner"
    ),
    "ray_1_actors_learner_replay": lambda steps: distributed(steps, 1, "ray", replay="learner"),
    "ray_2_actors_learner_replay": lambda steps: distributed(steps, 2, "ray", replay="learner"),
    "ray_1_actors_learner_replay_pinned": lambda steps: distributed(steps, 1, "ray", replay="learner", pinned=True),
    "ray_2_actors_learner_replay_pinned": lambda steps: distributed(steps, 2, "ray", replay="learner", pinned=True),
    # The learner's tables fed over direct connections (acme.replay.direct) instead of reverb transfer queues.
    "ray_1_actors_direct_feed": lambda steps: distributed(steps, 1, "ray", replay="learner", feed="direct"),
    "ray_2_actors_direct_feed": lambda steps: distributed(steps, 2, "ray", replay="learner", feed="direct"),
    "ray_1_actors_direct_feed_pinned": lambda steps: distributed(
        steps, 1, "ray", replay="learner", feed="direct", pinned=True
    ),
    "ray_2_actors_direct_feed_pinned": lambda steps: distributed(
        steps, 2, "ray", replay="learner", feed="direct", pinned=True
    ),
}


def steady_state(short: dict, long: dict, seconds_per_update: float = 0.0) -> dict:
    """The steady-state rate, the start-up seconds and, for distributed runs, the unit costs (CPU seconds per
    actor step by role) from a run and one of twice its steps: what the longer run spent beyond the shorter."""
    extra_steps = long["actor_steps"] - short["actor_steps"]
    extra_seconds = long["wall_seconds"] - short["wall_seconds"]
    rate = extra_steps / extra_seconds if extra_seconds > 0 else float("nan")
    result = {
        "steady_actor_steps_per_second": round(rate, 1),
        "startup_seconds": round(short["wall_seconds"] - short["actor_steps"] / rate, 1),
        "learner_steps_per_actor_step": round(long["learner_steps"] / long["actor_steps"], 3),
    }
    roles = set(short["cpu_seconds"]) | set(long["cpu_seconds"])
    extra_cpu = {r: long["cpu_seconds"].get(r, 0.0) - short["cpu_seconds"].get(r, 0.0) for r in roles}
    result["steady_cpu_microseconds_per_actor_step"] = {
        role: round(1e6 * seconds / extra_steps, 1) for role, seconds in sorted(extra_cpu.items())
    }
    result["steady_cores_busy"] = round(sum(v for r, v in extra_cpu.items() if r != "other") / extra_seconds, 2)
    if "loopback_bytes" in long:
        updates_per_step = (long["learner_steps"] - short["learner_steps"]) / extra_steps
        costs = scaling_model.costs_from_run(
            extra_cpu,
            extra_steps,
            extra_seconds,
            long["loopback_bytes"] - short["loopback_bytes"],
            update=updates_per_step * seconds_per_update,
        )
        result["unit_costs"] = {k: round(v, 9) for k, v in dataclasses.asdict(costs).items()}
    return result


def model_report(results: dict, cores: int) -> dict:
    """The scaling model against the measured steady rates, and its predictions for larger runs."""
    report: dict = {"cores": cores, "against_measured": {}, "predictions": {}}
    costs = {
        name: scaling_model.UnitCosts(**result["unit_costs"])
        for name, result in results.items()
        if "unit_costs" in result
    }
    for name, unit_costs in costs.items():
        num_actors = results[name]["runs"][-1]["num_actors"]
        # Pinned (pinned_placement): the learner has core 0, the actors share the others.
        pinning = dict(learner_cores=1, actor_cores=cores - 1) if results[name]["runs"][-1].get("pinned") else {}
        measured = results[name]["steady_actor_steps_per_second"]
        own = scaling_model.predict(unit_costs, num_actors, cores, **pinning)
        entry = {"measured": measured, "own_costs": _prediction(own, measured)}
        one_actor = name.replace("ray_2_actors", "ray_1_actors")
        if name.startswith("ray_2_actors") and one_actor in costs:  # a prediction from the 1-actor run's costs
            entry[f"{one_actor}_costs"] = _prediction(
                scaling_model.predict(costs[one_actor], 2, cores, **pinning), measured
            )
        report["against_measured"][name] = entry
    for name in (
        "ray_1_actors",
        "ray_2_actors_inference_server",
        "ray_2_actors_learner_replay_inference_server",
        "ray_1_actors_learner_replay",
        "ray_1_actors_learner_replay_pinned",
    ):
        if name not in costs:
            continue
        # A cluster: a core for each actor and for the inference server, hosts of CLUSTER_HOST_CORES cores for
        # the learner and for the replay server, the background's cores, a 10 Gbit/s network.
        c = costs[name]
        report["predictions"][name] = {
            str(n): _prediction(
                scaling_model.predict(
                    c,
                    n,
                    cores=n + 1 + 2 * CLUSTER_HOST_CORES + c.background_cores,
                    learner_cores=CLUSTER_HOST_CORES,
                    replay_cores=CLUSTER_HOST_CORES,
                    network_bytes_per_second=NETWORK_BYTES_PER_SECOND,
                )
            )
            for n in (8, 64, 512)
        }
    return report


NETWORK_BYTES_PER_SECOND = scaling_model.NETWORK_BYTES_PER_SECOND
CLUSTER_HOST_CORES = scaling_model.CLUSTER_HOST_CORES


def _prediction(prediction: scaling_model.Prediction, measured: float | None = None) -> dict:
    entry = {"steps_per_second": round(prediction.steps_per_second, 1), "bottleneck": prediction.bottleneck}
    if measured is not None:
        entry["error"] = round(prediction.steps_per_second / measured - 1, 3)
    entry["limits"] = prediction.limits
    return entry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=arguments.positive_integer, default=10_000)
    parser.add_argument("--configurations", nargs="+", choices=list(CONFIGURATIONS), default=list(CONFIGURATIONS))
    parser.add_argument(
        "--overrides",
        type=json.loads,
        default={},
        help="DQN config fields over the registered CartPole baseline's, as JSON (e.g. '{\"n_step\": 3}')",
    )
    parser.add_argument(
        "--output", default=os.path.join(os.path.dirname(__file__), "results", "distributed_dqn_throughput.json")
    )
    args = parser.parse_args()
    CONFIG_OVERRIDES.update(args.overrides)
    # The learner's updates alone (a fixed batch), with the runs' own config (the baseline's, then --overrides),
    # for the model's one-thread limit on them.
    run_overrides = {**registry.BASELINES[("dqn", ENV_ID)].config_overrides, **CONFIG_OVERRIDES}
    num_updates = registry.get_agent("dqn").make_config(**run_overrides).num_sgd_steps_per_step
    run_overrides.pop("num_sgd_steps_per_step", None)
    fixed_updates_per_second = components.learner_updates_per_second("fixed", num_updates, 2_000, **run_overrides)
    results = {}
    for name in args.configurations:
        short, long = CONFIGURATIONS[name](args.steps), CONFIGURATIONS[name](2 * args.steps)
        results[name] = {"runs": [short, long], **steady_state(short, long, 1.0 / fixed_updates_per_second)}
        print(name, results[name], flush=True)
    report = {
        "benchmark": "distributed_dqn_throughput",
        "environment": ENV_ID,
        "config_overrides": {**registry.BASELINES[("dqn", ENV_ID)].config_overrides, **args.overrides},
        "actor_steps_budgets": [args.steps, 2 * args.steps],
        "machine": machine(),
        "note": "steady_actor_steps_per_second leaves out start-up (Ray's processes, jit compilation, the replay's "
        "minimum), which startup_seconds gives; each run's wall_seconds includes it.",
        "fixed_batch_updates_per_second": round(fixed_updates_per_second, 1),
        "results": results,
    }
    summary = {name: result["steady_actor_steps_per_second"] for name, result in results.items()}
    if "in_process" in results:
        reference = results["in_process"]["steady_actor_steps_per_second"]
        report["steady_ratio_to_in_process"] = {name: round(rate / reference, 3) for name, rate in summary.items()}
        summary = dict(report["steady_ratio_to_in_process"])
    report["scaling_model"] = model_report(results, os.cpu_count())
    summary["model"] = {
        name: {k: v for k, v in entry.items() if k != "limits"}
        for name, entry in report["scaling_model"]["against_measured"].items()
    }
    write_report(args.output, report, summary=summary)


if __name__ == "__main__":
    main()
