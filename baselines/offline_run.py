"""``python -m baselines run AGENT --env ENV --dataset DIR``: learning from a recorded dataset, and the files the
run leaves (as an online run's: result.json, the learning curve, the policy snapshot)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from typing import Any


def check_flags(args: argparse.Namespace, launcher: str) -> None:
    """Refuses the flags an offline (or recording) run cannot honour, before anything starts."""
    for flag, value in (("--dataset", args.dataset), ("--record", args.record)):
        if value is not None and launcher != "local":
            raise ValueError(f"{flag} runs with the local launcher (one process); leave --launcher {launcher} out.")
    if args.dataset is None:
        return
    if args.record is not None:
        raise ValueError("--record writes what actors do, and a --dataset run has no actors: give one of the two.")
    for flag, value in (("--num-envs", args.num_envs), ("--actor-device", args.actor_device)):
        if value is not None:
            raise ValueError(f"{flag} sets up actors, and a --dataset run has none: leave {flag} out.")


def train(args: argparse.Namespace, config: Any, run_dir: str) -> int:
    """Trains ``config``'s agent from ``args.dataset`` for ``config.max_num_actor_steps`` learner steps."""
    from acme.datasets.minari_format import read_dataset
    from acme.experiments.offline import OfflineExperimentConfig, run_offline_experiment
    from baselines.cli import _export_snapshot
    from baselines.plotting import plot_learning_curve

    dataset = read_dataset(args.dataset)
    offline = OfflineExperimentConfig(
        experiment=config,
        dataset=args.dataset,
        max_num_learner_steps=config.max_num_actor_steps,
        eval_every=config.eval_every,
    )
    print(
        f"Training {args.agent} offline on {args.dataset} ({len(dataset.episodes)} episodes, {dataset.num_steps} "
        f"steps of {dataset.environment_id}) for {offline.max_num_learner_steps} learner steps, evaluated on "
        f"{args.env} (seed {args.seed}); logs in {run_dir}",
        flush=True,
    )
    result = run_offline_experiment(offline, progress=not args.no_progress, dataset=dataset)
    summary = {
        "agent": args.agent,
        "environment": args.env,
        "dataset": os.path.abspath(args.dataset),
        "seed": args.seed,
        "learner_steps": result.learner_steps,
        "wall_seconds": round(result.wall_seconds, 2),
        "evaluations": [{**dataclasses.asdict(e), "learner_steps": e.actor_steps} for e in result.evaluations],
    }
    with open(os.path.join(run_dir, "result.json"), "w") as f:
        json.dump(summary, f, indent=2)
    if result.evaluations:
        plot_learning_curve(
            os.path.join(run_dir, "learning_curve.png"),
            [e.actor_steps for e in result.evaluations],
            [e.mean_return for e in result.evaluations],
            [e.std_return for e in result.evaluations],
            title=f"{args.agent} on {args.env} from {os.path.basename(os.path.normpath(args.dataset))}, "
            f"seed {args.seed}",
            steps_label="learner steps",
        )
        best = result.best
        print(
            f"Best evaluation return {best.mean_return:.1f} at learner step {best.actor_steps} "
            f"({result.learner_steps} learner steps, {result.wall_seconds:.0f} s; logs in {run_dir})",
            flush=True,
        )
    return _export_snapshot(args, config, run_dir, result.policy_params)
