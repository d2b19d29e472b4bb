"""How far DQN's distributed rate could rise with the learner on several devices: the scaling model
(``scaling_model``) fed with a measured ``DeviceKind`` and a learner layout. Writes
``benchmarks/results/learner_scaling.json``.

Measured here, each in a process of its own with single-threaded XLA:

- one CPU core as a device: DQN's update (CartPole, its default config: batch 64, 64 updates per jitted call)
  at batches of 16, 64 and 256 on one pinned core, fitted as ``fixed + per_sample * batch`` seconds;
- the reduction between two such devices: the update of a batch of 128 split over two fake CPU devices, one per
  core of a 2-core process, less the update of 64 on one device in the same process (``exchange``).

Taken from an earlier measured run: the distributed DQN run's unit costs with the learner holding the replay
(``distributed_dqn_throughput_20k.json``: CPU per actor step of an actor, the learner and its updates, the
other nodes, Ray's background, and the bytes per step).

Modelled: a cluster as ``distributed_dqn_throughput`` models one (a core per actor, 4-core hosts for the
learner's other work and for the replay, 10 Gbit/s), with the learner's updates on ``D`` CPU-core devices, 8 to
a host, each device updating on DQN's batch of 64 (the global batch is 64 D, so updates per actor step fall as
1 / D at the configured samples-per-insert ratio), the reduction across hosts at the cost measured between two
processes of this machine (``two_processes``: the update of 128 split over two processes of one CPU device each,
jax's multi-controller runtime with gloo over loopback, less the update of 64 on one device). With a GPU
machine, a ``DeviceKind`` measured there would replace the CPU core's.

    .venv/bin/python benchmarks/learner_scaling.py
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks import scaling_model  # noqa: E402
from benchmarks.common import machine, write_report  # noqa: E402
from benchmarks.peer_protocol import SINGLE_THREAD_ENV  # noqa: E402

AGENT, ENVIRONMENT = "dqn", "gymnasium:CartPole-v1"
BATCHES = (16, 64, 256)
ACTORS = (8, 16, 32, 64, 128)
DEVICE_COUNTS = (1, 2, 4, 8, 16, 32, 64, 128)
RUN_COSTS = ("distributed_dqn_throughput_20k.json", "ray_1_actors_learner_replay")


def _seconds_per_update(batch: int, sharding, calls: int) -> float:
    from baselines import plan, registry
    from benchmarks.sharding import updates_per_second

    config = registry.make_agent_config(AGENT, ENVIRONMENT, {"batch_size": batch})
    sample, spec = plan.one_sample(AGENT, ENVIRONMENT, config)
    return 1.0 / (updates_per_second(AGENT, config, sample, spec, sharding, calls) * config.num_sgd_steps_per_step)


def _processes_child(calls: int, process_id: int, port: int) -> dict:
    """Process ``process_id`` of 2, pinned to core ``process_id`` with one CPU device: DQN's update of 128 split
    over the two processes' devices (gloo over loopback), then (process 0) of 64 on its device alone."""
    from acme.jax.multiprocess import join_learner_group

    join_learner_group(f"127.0.0.1:{port}", 2, process_id, local_cpu_devices=1)
    os.sched_setaffinity(0, {process_id % os.cpu_count()})
    import jax

    from acme.jax.sharding import LearnerSharding
    from baselines import plan, registry
    from benchmarks.sharding import updates_per_second

    config = registry.make_agent_config(AGENT, ENVIRONMENT, {"batch_size": 128})
    sample, spec = plan.one_sample(AGENT, ENVIRONMENT, config)
    axis = 1 if config.num_sgd_steps_per_step > 1 else 0  # [U, B] stacks

    def rows(x):
        return x if x.ndim <= axis else x.take(range(process_id * 64, process_id * 64 + 64), axis=axis)

    local = jax.tree.map(rows, sample)
    both = 1.0 / (
        updates_per_second(AGENT, config, local, spec, LearnerSharding("data"), calls) * config.num_sgd_steps_per_step
    )
    if process_id:
        return {}
    return {
        "two_processes_128": both,
        "one_device_64": _seconds_per_update(64, LearnerSharding("replicated", 1), calls),
    }


def _child(mode: str, calls: int) -> dict:
    """``one``: the update at each batch on one pinned core; ``two``: 64 on one device and 128 split over two, in a
    process on two cores with two fake CPU devices."""
    from acme.jax.cpu_devices import request_cpu_devices
    from acme.jax.sharding import LearnerSharding

    if mode == "one":
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
        one = LearnerSharding("replicated", devices=1)
        return {"seconds_per_update": {str(b): _seconds_per_update(b, one, calls) for b in BATCHES}}
    request_cpu_devices(2)
    return {
        "cores": len(os.sched_getaffinity(0)),
        "one_device_64": _seconds_per_update(64, LearnerSharding("replicated", devices=1), calls),
        "two_devices_128": _seconds_per_update(128, LearnerSharding("data", devices=2), calls),
    }


def _measure(mode: str, calls: int) -> dict:
    command = [sys.executable, os.path.abspath(__file__), "--child", mode, "--calls", str(calls)]
    env = {**os.environ, **SINGLE_THREAD_ENV, "PYTHONPATH": ROOT}
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"the {mode!r} measurement failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def _measure_processes(calls: int) -> dict:
    """The ``processes`` children, both at once; process 0's figures."""
    from acme.jax.multiprocess import free_address

    port = free_address().rsplit(":", 1)[1]
    env = {**os.environ, **SINGLE_THREAD_ENV, "PYTHONPATH": ROOT}
    children = [
        subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--child", "processes", "--calls", str(calls)]
            + ["--process-id", str(i), "--port", port],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    outputs = [child.communicate() for child in children]
    for child, (_, errors) in zip(children, outputs):
        if child.returncode != 0:
            raise RuntimeError(f"the two-process measurement failed:\n{errors[-3000:]}")
    return json.loads(outputs[0][0].strip().splitlines()[-1])


def _fit(points: dict) -> tuple[float, float]:
    """Least squares ``seconds = fixed + per_sample * batch`` (each at least 0)."""
    import numpy as np

    slope, intercept = np.polyfit([float(b) for b in points], list(points.values()), 1)
    return max(float(intercept), 0.0), max(float(slope), 0.0)


def _cluster(costs: scaling_model.UnitCosts, actors: int, layout=None) -> scaling_model.Prediction:
    """A core per actor and one more (as distributed_dqn_throughput counts a cluster), the learner's hosts and the
    replay's, and Ray's background."""
    learner_hosts = layout.hosts if layout is not None else 1
    return scaling_model.predict(
        costs,
        actors,
        cores=actors + 1 + (learner_hosts + 1) * scaling_model.CLUSTER_HOST_CORES + costs.background_cores,
        learner_cores=scaling_model.CLUSTER_HOST_CORES,
        replay_cores=scaling_model.CLUSTER_HOST_CORES,
        network_bytes_per_second=scaling_model.NETWORK_BYTES_PER_SECOND,
        learner_layout=layout,
    )


def _row(prediction: scaling_model.Prediction, devices: int | None = None) -> dict:
    row = {"steps_per_second": round(prediction.steps_per_second, 1), "bottleneck": prediction.bottleneck}
    return {**({"devices": devices} if devices is not None else {}), **row, "limits": prediction.limits}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=30, help="jitted learner calls timed per figure")
    parser.add_argument("--child", choices=("one", "two", "processes"), help=argparse.SUPPRESS)
    parser.add_argument("--process-id", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "processes":
        print(json.dumps(_processes_child(args.calls, args.process_id, args.port)), flush=True)
        return
    if args.child:
        print(json.dumps(_child(args.child, args.calls)), flush=True)
        return
    from baselines import registry

    one, two = _measure("one", args.calls), _measure("two", args.calls)
    fixed, per_sample = _fit(one["seconds_per_update"])
    exchange = max(two["two_devices_128"] - two["one_device_64"], 0.0)
    processes = _measure_processes(args.calls)
    across = max(processes["two_processes_128"] - processes["one_device_64"], 0.0)
    core = scaling_model.DeviceKind(
        "cpu core", fixed=fixed, per_sample=per_sample, exchange=exchange, exchange_across_hosts=across
    )
    config = registry.make_agent_config(AGENT, ENVIRONMENT, {})
    with open(os.path.join(ROOT, "benchmarks", "results", RUN_COSTS[0])) as f:
        costs = scaling_model.UnitCosts(**json.load(f)["results"][RUN_COSTS[1]]["unit_costs"])

    def layout(devices: int) -> scaling_model.LearnerLayout:
        return scaling_model.LearnerLayout(core, devices, config.batch_size, config.samples_per_insert)

    predictions = {}
    for actors in ACTORS:
        by_devices = {d: _cluster(costs, actors, layout(d)) for d in DEVICE_COUNTS}
        # Enough devices: the fewest after which more would not raise the rate by 1%.
        best = max(p.steps_per_second for p in by_devices.values())
        enough = min(d for d, p in by_devices.items() if p.steps_per_second >= 0.99 * best)
        predictions[str(actors)] = {
            "today": _row(_cluster(costs, actors)),
            "one_cpu_core_device": _row(by_devices[1], 1),
            "enough_cpu_core_devices": _row(by_devices[enough], enough),
        }
        print(actors, {k: (v["steps_per_second"], v["bottleneck"]) for k, v in predictions[str(actors)].items()})
    print(f"exchange within a process: {exchange * 1e3:.3f} ms a step; across two processes: {across * 1e3:.3f} ms")
    host_cores, network = scaling_model.CLUSTER_HOST_CORES, scaling_model.NETWORK_BYTES_PER_SECOND
    report = {
        "benchmark": "learner_scaling",
        "machine": machine(threads=SINGLE_THREAD_ENV),
        "measured": {
            "update_on_one_core": one,
            "two_devices": two,
            "two_processes": processes,
            "device_kind": {
                "name": core.name,
                "fixed": fixed,
                "per_sample": per_sample,
                "exchange": exchange,
                "exchange_across_hosts": across,
            },
        },
        "run_unit_costs": {"file": RUN_COSTS[0], "run": RUN_COSTS[1], **vars(costs)},
        "modelled": (
            f"a cluster: a core per actor, {host_cores}-core hosts for the learner's other work (one per 8 devices) "
            f"and for the replay, {network * 8 / 1e9:g} Gbit/s; today: the run's own update cost "
            f"on one device; layouts: the measured device kind, batch {config.batch_size} per device, "
            f"samples_per_insert {config.samples_per_insert:g}"
        ),
        "predictions": predictions,
    }
    write_report(os.path.join(ROOT, "benchmarks", "results", "learner_scaling.json"), report)


if __name__ == "__main__":
    main()
