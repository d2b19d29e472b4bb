"""The learner over several devices (``acme.jax.sharding``): updates/s against the device count, and the plan's
per-device bytes against XLA's compiled memory analysis. Writes ``benchmarks/results/sharding.json``.

On a machine without accelerators the devices are fake CPU devices (``jax_num_cpu_devices``) that share the
process's cores, so the updates/s here are a correctness run of the sharded code paths, not a speed-up: more
fake devices split the same cores. The process is pinned to one core with single-threaded XLA, so every layout
gets the same compute. The byte comparison holds on any machine.

    .venv/bin/python benchmarks/sharding.py [--updates 200]
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import machine, write_report  # noqa: E402
from benchmarks.peer_protocol import SINGLE_THREAD_ENV  # noqa: E402

if __name__ == "__main__":
    os.environ.update({k: v for k, v in SINGLE_THREAD_ENV.items() if k not in os.environ})
    os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})

import argparse  # noqa: E402
import time  # noqa: E402

import jax  # noqa: E402

from acme.jax.cpu_devices import request_cpu_devices  # noqa: E402

DEVICES = (1, 2, 4, 8)
AGENTS = {"dqn": "gymnasium:CartPole-v1", "sac": "gymnasium:Pendulum-v1"}


def updates_per_second(agent: str, config, sample, spec, sharding, count: int) -> float:
    from acme.utils import loggers
    from baselines import registry

    entry = registry.get_agent(agent)
    learner = entry.make_builder(config).make_learner(
        jax.random.PRNGKey(0),
        entry.make_networks(spec, config),
        iter([sample] * (count + 5)),
        lambda label, steps_key=None: loggers.NoOpLogger(),
        spec,
        sharding=sharding,
    )
    for _ in range(5):  # compiles, and warms up
        learner.step()
    jax.block_until_ready(learner.state)
    start = time.perf_counter()
    for _ in range(count):
        learner.step()
    jax.block_until_ready(learner.state)
    return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=200)
    args = parser.parse_args()
    request_cpu_devices(max(DEVICES))
    from acme.jax.sharding import LearnerSharding
    from baselines import plan, registry

    report = {"benchmark": "sharding", "machine": machine(jax_backend=jax.default_backend()), "agents": {}}
    report["devices_are"] = "fake CPU devices sharing one core" if jax.default_backend() == "cpu" else "accelerators"
    for agent, environment_id in AGENTS.items():
        # One config and one replay sample per agent (acting fills the replay once): the timed updates and the
        # plan's figures are of the same learner.
        config = registry.make_agent_config(agent, environment_id, {"num_sgd_steps_per_step": 1})
        sample, spec = plan.one_sample(agent, environment_id, config)
        layouts = [LearnerSharding("replicated", devices=1)]
        layouts += [LearnerSharding(strategy, devices=n) for strategy in ("data", "fsdp") for n in DEVICES if n > 1]
        rows = {}
        for sharding in layouts:
            count = len(sharding.device_list())
            rate = updates_per_second(agent, config, sample, spec, sharding, args.updates)
            figures = plan.plan_layout(agent, config, spec, sample, sharding)
            rows[f"{sharding.strategy}-{count}"] = {
                "updates_per_second": round(rate, 1),
                "plan_bytes_per_device": figures.predicted,
                "xla_argument_bytes": figures.xla_arguments,
                "plan_to_xla": round(figures.predicted / figures.xla_arguments, 4),
                "xla_total_bytes": figures.xla_total,
                "modelled_collective_bytes": figures.collective_bytes,
            }
            print(agent, sharding.strategy, count, rows[f"{sharding.strategy}-{count}"], flush=True)
        report["agents"][agent] = {"environment": environment_id, "layouts": rows}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "sharding.json")
    write_report(path, report)


if __name__ == "__main__":
    main()
