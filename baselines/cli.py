"""The baselines command line: ``python -m baselines run AGENT --env ID ...``."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from typing import Sequence

from baselines import parser as parser_module
from baselines import record as record_command_module
from baselines import registry, run_outputs


def config_command(args: argparse.Namespace) -> int:
    """Prints the effective config of ``args.agent`` on ``args.env``."""
    from baselines import hyperparameters

    config = registry.make_experiment_config(
        args.agent, args.env, config_overrides=parser_module.checked_overrides(args)
    )
    print(hyperparameters.describe(args.agent, args.env, config.builder.config), end="")
    return 0


def report_command(args: argparse.Namespace) -> int:
    """Writes the report and prints what it wrote."""
    from baselines import report, results

    if args.sweep is not None:
        from baselines import sweep_report

        others = [flag for flag in ("records", "readme", "runs", "against") if getattr(args, flag) is not None]
        if others:
            raise ValueError(f"--sweep reports on one sweep; leave out --{', --'.join(others)}.")
        for path in sweep_report.report(args.sweep, args.output, args.target):
            print(f"wrote {path}", flush=True)
        return 0
    if args.target is not None:
        raise ValueError("--target is for --sweep DIR.")
    official = args.records is None and args.runs is None
    default_output = os.path.join(args.runs, "report") if args.runs else results.RESULTS_DIR
    written = report.report(
        records_dir=args.records or results.RUNS_DIR,
        output_dir=args.output or default_output,
        readme=args.readme or (report.REPOSITORY_README if official else None),
        runs_dir=args.runs,
        against=args.against,
    )
    for path in written:
        print(f"wrote {path}", flush=True)
    return 0


def reproduce_command(args: argparse.Namespace) -> int:
    """Runs each seed of a registered baseline, prints its record and refreshes the summary."""
    from baselines import results

    if (args.agent, args.env) not in registry.BASELINES:
        known = ", ".join(f"{a} on {e}" for a, e in sorted(registry.BASELINES))
        raise ValueError(f"No registered baseline for {args.agent} on {args.env}; known baselines: {known}.")
    runs_dir = args.runs_dir or results.RUNS_DIR
    results.check_not_shortening_official_records(registry.BASELINES[(args.agent, args.env)], args.max_steps, runs_dir)
    group = registry.action_group(args.agent, args.env)
    default_output = results.RESULTS_DIR if results.is_official_records_dir(runs_dir) else runs_dir
    output = args.output or os.path.join(default_output, f"{group}_control.json")
    on_device = registry.BASELINES[(args.agent, args.env)].launcher == "anakin"
    # On the device consecutive seeds train in one vmapped call; elsewhere one seed after another.
    groups = _consecutive(args.seeds) if on_device else [[seed] for seed in args.seeds]
    for seeds in groups:
        which = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {', '.join(map(str, seeds))} in one call"
        print(f"Reproducing {args.agent} on {args.env}, {which} ...", flush=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        log_dir = os.path.join(args.log_dir, f"{results.run_name(args.agent, args.env, seeds[0])}-{stamp}")
        print(f"Logs: {log_dir}", flush=True)
        checkpoints = None
        if args.checkpoint_dir is not None:
            checkpoints = os.path.join(args.checkpoint_dir, results.run_name(args.agent, args.env, seeds[0]))
        records = results.reproduce_seeds(
            args.agent,
            args.env,
            seeds,
            max_steps=args.max_steps,
            runs_dir=runs_dir,
            log_dir=log_dir,
            checkpoint_dir=checkpoints,
        )
        for record in records:
            print(json.dumps({k: v for k, v in record.items() if k not in ("curve", "machine")}), flush=True)
    summary = results.summarize(runs_dir=runs_dir, output=output, group=group)
    print(results.summary_table(summary), flush=True)
    print(f"Summary written to {output}", flush=True)
    return 0


def _consecutive(seeds: list[int]) -> list[list[int]]:
    """``seeds`` in runs of consecutive integers, in the given order: [0, 1, 2, 7, 8] -> [[0, 1, 2], [7, 8]]."""
    groups: list[list[int]] = []
    for seed in seeds:
        if groups and seed == groups[-1][-1] + 1:
            groups[-1].append(seed)
        else:
            groups.append([seed])
    return groups


def evaluate_command(args: argparse.Namespace) -> int:
    """Prints each greedy episode's return of a policy snapshot, then their mean."""
    from baselines.policy_export import evaluate_snapshot

    returns = evaluate_snapshot(_snapshot_directory(args.snapshot), episodes=args.episodes, seed=args.seed)
    for i, value in enumerate(returns):
        print(f"episode {i + 1}: return {value:.2f}", flush=True)
    print(f"mean return over {len(returns)} episodes: {sum(returns) / len(returns):.2f}", flush=True)
    return 0


def _snapshot_directory(path: str) -> str:
    """``path``, or its ``policy/`` snapshot when ``path`` is a run directory (one that holds ``policy/``)."""
    policy = os.path.join(path, "policy")
    if not os.path.isdir(policy):
        return path
    print(f"{path} is a run directory; evaluating its policy snapshot {policy}", flush=True)
    return policy


def _default_run_dir(agent: str, env: str, seed: int) -> str:
    from baselines.results import safe_name

    safe_env = safe_name(env)
    return os.path.join("runs", f"{agent}-{safe_env}-seed{seed}-{time.strftime('%Y%m%d-%H%M%S')}")


def run_command(args: argparse.Namespace) -> int:
    """Parses, runs (``acme.experiments.run``), writes (``baselines.run_outputs``)."""
    from acme.experiments import CheckpointingConfig
    from acme.utils import loggers
    from baselines import plan as planning
    from launch.ray_launcher import check_ray_cluster

    options = parser_module.run_options(args)  # RunOptions refuse what the launcher has no use for
    if options.ray_address is not None:
        check_ray_cluster(options.ray_address)  # before anything is built or written
    sharding = planning.sharding_from_flags(args)
    planning.ask_for_cpu_devices(
        max(planning.devices_needed(sharding=sharding) or 1, planning.devices_needed(options.actor_device) or 1)
    )
    run_dir = args.run_dir or _default_run_dir(args.agent, args.env, args.seed)
    checkpointing = None
    if args.checkpoint_dir:
        checkpointing = CheckpointingConfig(
            args.checkpoint_dir,
            every_minutes=args.checkpoint_every_minutes,
            every_learner_steps=args.checkpoint_every_steps,
            keep=args.keep_checkpoints,
        )
    print_fn = None
    if not args.no_progress:
        from tqdm import tqdm

        print_fn = tqdm.write
    overrides = parser_module.checked_overrides(args)  # reads --config once
    tracking = tracking_of(args, run_dir, overrides)
    config = registry.make_experiment_config(
        args.agent,
        args.env,
        seed=args.seed,
        max_steps=args.max_steps,
        eval_every=args.eval_every,
        num_eval_episodes=args.eval_episodes,
        logger_factory=loggers.make_logger_factory(
            run_dir, time_delta=args.log_every, print_fn=print_fn, tracking=tracking
        ),
        checkpointing=checkpointing,
        config_overrides=overrides,
    )
    if sharding is not None:
        sharding.device_list()  # refused here when the devices are not there
        config = dataclasses.replace(config, learner_sharding=sharding)
    if options.launcher == "anakin":
        from acme.anakin.runner import check_runnable

        check_runnable(config, options)  # refused here, before the run directory is made
    if options.learner_processes > 1:
        from acme.experiments.learner_group import check_learner_group

        check_learner_group(config, options)  # refused here, before the run directory is made
    if options.launcher != "anakin" and options.dataset is None:
        options = planning.with_cpu_devices(options, sharding, options.actor_device)
    say_budget_scaled(args, overrides)
    return run_outputs.run_and_write(
        run_dir, config, options, description_of(args, config, options), not args.no_progress
    )


def say_budget_scaled(args: argparse.Namespace, overrides: dict) -> None:
    """Prints each registered setting that counts steps of the baseline's budget and was scaled to ``--max-steps``."""
    baseline = registry.find_baseline(args.agent, args.env)
    for name, (registered, scaled) in registry.budget_scaled_overrides(baseline, args.max_steps, overrides).items():
        print(
            f"{name}: {scaled:,} for {args.max_steps:,} steps (the baseline registers {registered:,} for its "
            f"{baseline.max_steps:,}; --set {name}=N to choose)",
            flush=True,
        )


def tracking_of(args: argparse.Namespace, run_dir: str, overrides: dict):
    """The tracker ``--logger`` names (None for csv alone), its run named after the run folder, with the agent's
    config of ``overrides`` (``checked_overrides(args)``)."""
    from acme.utils.loggers import Tracking
    from baselines import hyperparameters

    if args.logger == "csv":
        if args.logger_group is not None:
            raise ValueError("--logger-group names the run's group in a tracker: give --logger wandb or mlflow too.")
        return None
    name = os.path.basename(os.path.normpath(run_dir))
    agent_config = registry.make_agent_config(args.agent, args.env, overrides, args.max_steps)
    fields = {"agent": args.agent, "environment": args.env, "seed": args.seed}
    fields.update(hyperparameters.as_data(agent_config))
    return Tracking(args.logger, name, args.logger_group or name, os.path.abspath(run_dir), fields)


def description_of(args: argparse.Namespace, config, options) -> run_outputs.RunDescription:
    """What ``args``' run is, for the run's folder (``baselines.run_outputs``)."""
    return run_outputs.RunDescription(
        args.agent,
        args.env,
        config.builder.config,
        launcher=options.launcher or "local",
        dataset=options.dataset,
        sweep_field=options.sweep[0] if options.sweep is not None else None,
        logger=args.logger,
        logger_group=args.logger_group,
    )


def _plan_command(args: argparse.Namespace) -> int:
    from baselines import plan as planning

    return planning.plan_command(args, parser_module.checked_overrides(args))


def _record_command(args: argparse.Namespace) -> int:
    return record_command_module.record_command(args, _snapshot_directory(args.snapshot))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["sweep"]:  # its own parser: every flag it does not know is a `run` flag for its trials
        from baselines import sweep

        return sweep.main(argv[1:])
    parser = parser_module.make_parser()
    args = parser.parse_args(argv)
    if args.command == "list":
        print(parser_module.describe(with_records=True))
        return 0
    from acme.utils.checkpoint_files import CheckpointError

    refused = (ValueError, TypeError)  # a bad value: the message, and exit status 2
    commands = {
        "evaluate": (evaluate_command, (CheckpointError, *refused)),
        "config": (config_command, refused),
        "plan": (_plan_command, refused),
        "report": (report_command, refused),
        "record": (_record_command, (CheckpointError, FileExistsError, *refused)),
        "reproduce": (reproduce_command, refused),
    }
    if args.command in commands:
        command, errors = commands[args.command]
        try:
            return command(args)
        except errors as error:
            parser.exit(2, f"error: {error}\n")
    from acme.utils.extras import MissingExtraError
    from launch import ClusterConnectionError
    from launch.network import ExposureError

    try:
        return run_command(args)
    except (ValueError, TypeError, CheckpointError, ClusterConnectionError, MissingExtraError) as error:
        parser.exit(2, f"error: {error}\n")
    except ExposureError as error:
        parser.exit(1, f"error: {error}\n")
    except KeyboardInterrupt as interrupt:
        # str(interrupt) is set when the run saved a checkpoint first; a second Ctrl-C leaves it empty.
        reason = str(interrupt) or "stopped by Ctrl-C"
        resume = (
            f" The same command resumes from the newest checkpoint in {args.checkpoint_dir}."
            if args.checkpoint_dir
            else ""
        )
        print(f"{reason[0].upper()}{reason[1:]}.{resume}", file=sys.stderr, flush=True)
        return 130
    return 1


if __name__ == "__main__":
    sys.exit(main())
