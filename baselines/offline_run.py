"""``python -m baselines run AGENT --env ENV --dataset DIR``: learning from a recorded dataset, and the files the
run leaves (as an online run's: result.json, the learning curve, the policy snapshot)."""

from __future__ import annotations

import argparse
from typing import Any


def check_flags(args: argparse.Namespace, launcher: str) -> None:
    """Refuses the flags an offline (or recording) run cannot honour, before anything starts."""
    if args.record is not None and launcher not in ("local", "threads", "ray"):
        raise ValueError(
            f"--record records the actors of a local, threads or ray run; the {launcher} launcher has no actor "
            "process to record (record its policy snapshot with python -m baselines record)."
        )
    if args.dataset is not None and launcher not in ("local", "threads", "ray"):
        raise ValueError(f"--dataset runs with the local, threads or ray launcher, not {launcher}.")
    if args.dataset is None:
        for flag, value in (
            ("--stream-buffer", args.stream_buffer),
            ("--stream-samples-per-insert", args.stream_samples_per_insert),
        ):
            if value is not None:
                raise ValueError(f"{flag} streams a --dataset; give --dataset DIR, or leave {flag} out.")
        if args.record is not None:
            from acme.datasets.minari_format import holds_dataset

            if holds_dataset(args.record):
                raise ValueError(
                    f"--record {args.record} already holds a dataset, which is never overwritten: name a new directory."
                )
        return
    if args.stream_samples_per_insert is not None and args.stream_buffer is None:
        raise ValueError("--stream-samples-per-insert paces a streamed dataset: give --stream-buffer N too.")
    from acme.datasets.minari_format import read_metadata

    read_metadata(args.dataset)  # a DatasetError (no dataset there, or a damaged one) before the run folder is made
    if args.record is not None:
        raise ValueError("--record writes what actors do, and a --dataset run has no actors: give one of the two.")
    for flag, value in (("--num-envs", args.num_envs), ("--actor-device", args.actor_device)):
        if value is not None:
            raise ValueError(f"{flag} sets up actors, and a --dataset run has none: leave {flag} out.")


def train_distributed(args: argparse.Namespace, offline: Any, run_dir: str, options: Any, description: Any) -> int:
    """The offline experiment as a program (a learner and an evaluator node) on the threads or Ray launcher."""
    from acme.experiments.offline_distributed import make_distributed_offline_experiment
    from baselines.run_outputs import launch_and_write

    program = make_distributed_offline_experiment(offline, learner_restarts=options.learner_restarts)
    where = f"Ray cluster {options.ray_address}" if options.ray_address else f"{options.launcher} launcher"
    print(
        f"Training {args.agent} offline on {args.dataset} on the {where} for {offline.max_num_learner_steps} "
        f"learner steps, evaluated on {args.env} (seed {args.seed}); logs in {run_dir}",
        flush=True,
    )
    return launch_and_write(program, options, run_dir, args.seed, description, steps_key="learner_steps")


def train(args: argparse.Namespace, config: Any, run_dir: str, options: Any, description: Any) -> int:
    """Trains ``config``'s agent from ``args.dataset`` for ``config.max_num_actor_steps`` learner steps, in this
    process, or as a program with ``options``' threads or Ray launcher; writes the run's folder (``description``:
    ``baselines.run_outputs``)."""
    from acme.experiments.offline import OfflineExperimentConfig, run_offline_experiment
    from baselines import run_outputs

    offline = OfflineExperimentConfig(
        experiment=config,
        dataset=args.dataset,
        max_num_learner_steps=config.max_num_actor_steps,
        eval_every=config.eval_every,
        stream_buffer=args.stream_buffer or 0,
        **({"stream_samples_per_insert": args.stream_samples_per_insert} if args.stream_samples_per_insert else {}),
    )
    if options is not None and options.launcher != "local":
        return train_distributed(args, offline, run_dir, options, description)
    dataset = offline.open_dataset()
    how = f"streamed through a buffer of {offline.stream_buffer} items" if offline.stream_buffer else "in memory"
    print(
        f"Training {args.agent} offline on {args.dataset} ({dataset.metadata.get('total_episodes')} episodes, "
        f"{dataset.num_steps} steps of {dataset.environment_id}, {how}) for {offline.max_num_learner_steps} "
        "learner steps, evaluated on "
        f"{args.env} (seed {args.seed}); logs in {run_dir}",
        flush=True,
    )
    result = run_offline_experiment(offline, progress=not args.no_progress, dataset=dataset)
    return run_outputs.write_outputs(run_dir, result, description)
