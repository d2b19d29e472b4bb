"""DQN's and SAC's learner update on jax's default device (an accelerator where there is one) against one CPU core,
at batches of 256 to 65,536. Writes ``benchmarks/results/device_updates.json``.

Each figure is updates per second of the agent's own learner (``SGDLearner``, one update per jitted call, its
default networks), on a batch made by tiling one sample of its own replay (acting with its untrained actor) to the
batch size: the values do not change an update's cost. The CPU core runs in a child process pinned to one core
with single-threaded XLA and ``JAX_PLATFORMS=cpu``; the default device runs in this process. On a machine
without accelerators both are the CPU, and the report says so (its ratios are then about 1 and mean nothing).
Issue #33's target: SAC's update at batch 256 at least 10 times one CPU core on a GPU.

    .venv/bin/python benchmarks/device_updates.py [--batches 256 1024 4096 16384 65536] [--seconds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import machine, write_report  # noqa: E402
from benchmarks.peer_protocol import SINGLE_THREAD_ENV  # noqa: E402

AGENTS = {"dqn": "gymnasium:CartPole-v1", "sac": "gymnasium:Pendulum-v1"}
BATCHES = (256, 1024, 4096, 16384, 65536)


def _tiled(sample, batch: int):
    """``sample`` with every leaf tiled along its first (batch) axis to ``batch`` rows."""
    import jax
    import numpy as np

    def tile(leaf):
        leaf = np.asarray(leaf)
        if leaf.ndim == 0:
            return leaf
        reps = -(-batch // leaf.shape[0])
        return np.concatenate([leaf] * reps)[:batch]

    return jax.tree.map(tile, sample)


def updates_per_second(agent: str, batch: int, seconds: float) -> float:
    """Updates per second of ``agent``'s learner at ``batch`` on jax's default device, timed for about
    ``seconds`` after compiling."""
    import jax

    from acme.utils import loggers
    from baselines import plan, registry

    config = registry.make_agent_config(agent, AGENTS[agent], {"num_sgd_steps_per_step": 1})
    sample, spec = plan.one_sample(agent, AGENTS[agent], config)
    config = registry.make_agent_config(agent, AGENTS[agent], {"num_sgd_steps_per_step": 1, "batch_size": batch})
    tiled = jax.device_put(_tiled(sample, batch))
    entry = registry.get_agent(agent)

    def endless():
        while True:
            yield tiled

    learner = entry.make_builder(config).make_learner(
        jax.random.PRNGKey(0),
        entry.make_networks(spec, config),
        endless(),
        lambda label, steps_key=None: loggers.NoOpLogger(),
        spec,
    )
    for _ in range(3):  # compiles, and warms up
        learner.step()
    jax.block_until_ready(learner.state)
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds or count < 3:
        learner.step()
        count += 1
        if count % 10 == 0:
            jax.block_until_ready(learner.state)
    jax.block_until_ready(learner.state)
    return count / (time.perf_counter() - start)


def _measure_all(batches, seconds) -> dict:
    return {agent: {str(b): round(updates_per_second(agent, b, seconds), 2) for b in batches} for agent in AGENTS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, nargs="+", default=list(BATCHES))
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per figure")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:  # the pinned CPU core
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
        print(json.dumps(_measure_all(args.batches, args.seconds)), flush=True)
        return
    import jax

    device = jax.devices()[0]
    default = _measure_all(args.batches, args.seconds)
    command = [sys.executable, os.path.abspath(__file__), "--child", "--seconds", str(args.seconds), "--batches"]
    env = {**os.environ, **SINGLE_THREAD_ENV, "JAX_PLATFORMS": "cpu", "PYTHONPATH": ROOT}
    child = subprocess.run(command + [str(b) for b in args.batches], env=env, capture_output=True, text=True)
    if child.returncode != 0:
        raise RuntimeError(f"the CPU-core measurement failed:\n{child.stderr[-3000:]}")
    core = json.loads(child.stdout.strip().splitlines()[-1])
    report = {
        "benchmark": "device_updates",
        "machine": machine(default_device=str(device), platform=device.platform),
        "note": None
        if device.platform != "cpu"
        else "no accelerator here: the default device is the CPU, so the ratios compare the CPU with itself",
        "updates_per_second": {"default_device": default, "one_cpu_core": core},
        "default_over_one_core": {
            agent: {b: round(default[agent][b] / core[agent][b], 2) for b in default[agent]} for agent in AGENTS
        },
    }
    write_report(
        os.path.join(ROOT, "benchmarks", "results", "device_updates.json"),
        report,
        summary={k: report[k] for k in ("note", "default_over_one_core")},
    )


if __name__ == "__main__":
    main()
