"""Per-step cost of a transition agent on the device loop against the host loop, same agent and task, same core.

SAC (its defaults: one update of 256 a step, a 1M-item replay) on ``jax:Pendulum-v1`` with ``--launcher anakin``
and on ``gymnasium:Pendulum-v1`` with the local launcher. Each run is a fresh process pinned to one core with
single-threaded XLA; a step's cost is the difference between a ``--long`` and a ``--short`` run divided by the
steps between them, so compilation and start-up cancel out (jax's compilation cache is off, or the second run would
load what the first compiled).

    python benchmarks/transition_device.py [--core 0] [--short 2000] [--long 4000]

writes benchmarks/results/transition_device.json; ``docs/anakin.md`` quotes it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

from benchmarks.common import machine, pin_worker, run_worker, write_report  # noqa: E402

LOOPS = {"device": ("jax:Pendulum-v1", "anakin"), "host": ("gymnasium:Pendulum-v1", "local")}


def _seconds(environment_id: str, launcher: str, steps: int) -> float:
    """Wall seconds of one run of ``steps`` steps in this process."""
    from acme.experiments import RunOptions, run
    from baselines import registry

    config = registry.make_experiment_config("sac", environment_id, max_steps=steps, eval_every=0)
    started = time.perf_counter()
    run(config, RunOptions(launcher=launcher, compile_cache="off"), progress=False)  # both runs compile alike
    return time.perf_counter() - started


def _run(loop: str, steps: int, core: int) -> float:
    return float(run_worker(__file__, [loop, steps, core], core))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--core", type=int, default=0)
    parser.add_argument("--short", type=int, default=2000)
    parser.add_argument("--long", type=int, default=4000)
    parser.add_argument("--output", default=os.path.join(ROOT, "benchmarks", "results", "transition_device.json"))
    args = parser.parse_args()
    if args.worker is not None:
        loop, steps, core = json.loads(args.worker)
        pin_worker(core)
        print(_seconds(*LOOPS[loop], steps), flush=True)
        return
    if not 0 < args.short < args.long:
        parser.error(f"--short must be positive and below --long, got {args.short} and {args.long}.")
    results = {}
    for loop in LOOPS:
        short, long = _run(loop, args.short, args.core), _run(loop, args.long, args.core)
        results[loop] = {
            "short_seconds": round(short, 2),
            "long_seconds": round(long, 2),
            "ms_per_step": round((long - short) / (args.long - args.short) * 1e3, 2),
        }
        print(loop, json.dumps(results[loop]), flush=True)
    report = {"machine": machine(pinned_core=args.core), "agent": "sac", "short": args.short, "long": args.long}
    report.update(
        results=results, device_over_host=round(results["device"]["ms_per_step"] / results["host"]["ms_per_step"], 2)
    )
    write_report(args.output, report)


if __name__ == "__main__":
    main()
