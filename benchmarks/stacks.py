"""The default stack against the reverb stack, as a user runs DQN: the same command and seed on each, one core.

Each round runs ``python -m baselines run dqn --env gymnasium:CartPole-v1 --seed 0 --max-steps N --eval-every 0``
with each stack's interpreter (``.venv`` and ``.venv-reverb``), pinned to one core with single-threaded XLA, TensorFlow
and BLAS, alternating stacks so that drift in the host's speed falls on both. Steps/s are the run's own
``actor_steps / wall_seconds`` (``result.json``: the training loop, without interpreter start-up and imports).

    python benchmarks/stacks.py [--steps 30000] [--rounds 2]
writes benchmarks/results/stacks.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from typing import Sequence

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

from baselines import arguments  # noqa: E402
from benchmarks.common import machine, write_report  # noqa: E402
from benchmarks.peer_protocol import SINGLE_THREAD_ENV  # noqa: E402

STACKS = {"default": ".venv/bin/python", "reverb": ".venv-reverb/bin/python"}


def run_once(
    python: str,
    steps: int,
    core: int,
    root: str = ROOT,
    agent: str = "dqn",
    env: str = "gymnasium:CartPole-v1",
    flags: Sequence[str] = (),
) -> dict:
    """One pinned run of ``agent`` on ``env`` (with ``flags``) with ``python`` of the code in ``root``; its steps,
    wall seconds and steps/s, and where the run compiled first (the device loop) its steps/s after compiling."""
    run_dir = tempfile.mkdtemp(prefix="bench-stack-")
    command = [python, "-m", "baselines", "run", agent, "--env", env, "--seed", "0", *flags]
    command += ["--max-steps", str(steps), "--eval-every", "0", "--no-progress", "--run-dir", run_dir]
    subprocess.run(
        command,
        cwd=root,
        env={**os.environ, **SINGLE_THREAD_ENV, "PYTHONPATH": root},
        preexec_fn=lambda: os.sched_setaffinity(0, {core}),
        capture_output=True,
        check=True,
    )
    with open(os.path.join(run_dir, "result.json")) as f:
        result = json.load(f)
    steps_done, seconds = result["actor_steps"], result["wall_seconds"]
    measured = {"actor_steps": steps_done, "wall_seconds": seconds, "steps_per_second": round(steps_done / seconds, 1)}
    if result.get("compile_seconds"):
        training = seconds - result["compile_seconds"]
        measured.update(
            compile_seconds=result["compile_seconds"], training_steps_per_second=round(steps_done / training, 1)
        )
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=arguments.positive_integer, default=30_000)
    parser.add_argument("--rounds", type=arguments.positive_integer, default=2)
    parser.add_argument("--core", type=int, default=0)
    parser.add_argument("--output", default=os.path.join(ROOT, "benchmarks", "results", "stacks.json"))
    args = parser.parse_args()
    missing = [path for path in STACKS.values() if not os.path.exists(os.path.join(ROOT, path))]
    if missing:
        parser.exit(2, f"error: {', '.join(missing)} missing: make install install-reverb builds both stacks.\n")
    runs: dict[str, list] = {stack: [] for stack in STACKS}
    for _ in range(args.rounds):
        for stack, python in STACKS.items():
            runs[stack].append(run_once(os.path.join(ROOT, python), args.steps, args.core))
            print(stack, runs[stack][-1], flush=True)
    mean = {stack: sum(r["steps_per_second"] for r in rs) / len(rs) for stack, rs in runs.items()}
    report = {
        "benchmark": "stacks",
        "command": f"python -m baselines run dqn --env gymnasium:CartPole-v1 --seed 0 --max-steps {args.steps} "
        "--eval-every 0",
        "machine": machine(pinned_core=args.core, threads=SINGLE_THREAD_ENV),
        "runs": runs,
        "mean_steps_per_second": {stack: round(value, 1) for stack, value in mean.items()},
        "default_over_reverb": round(mean["default"] / mean["reverb"], 3),
    }
    write_report(args.output, report, summary={k: report[k] for k in ("mean_steps_per_second", "default_over_reverb")})


if __name__ == "__main__":
    main()
