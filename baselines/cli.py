"""The baselines command line: ``python -m baselines run AGENT --env ID ...``."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import shutil
import sys
import time
from typing import Iterator, Sequence

from acme.utils.quoting import quote
from baselines import arguments, registry, run_outputs
from baselines import record as record_command_module


def _describe(with_records: bool = False) -> str:
    """Agents, environment families and tuned baselines; ``with_records`` adds each baseline's recorded seeds
    (``baselines/results/runs``) and how many reached the target."""
    lines = ["agents:"]
    for name in registry.agent_names():
        entry = registry.get_agent(name)
        lines.append(f"  {name:8s} {entry.description}")
    lines += _environment_families()
    lines.append("tuned baselines (agent, environment -> budget, target return):")
    for (agent, env), baseline in sorted(registry.BASELINES.items()):
        line = f"  {agent} {env}: {baseline.max_steps} steps, target {baseline.target_return:g}"
        if baseline.launcher == "anakin":
            line += " (anakin launcher: on the device)"
        elif baseline.launcher != "local":
            line += f" ({baseline.launcher} launcher, {baseline.num_actors} actors)"
        if with_records:
            from baselines import results

            line += f"; {results.describe_records(agent, env)}"
        lines.append(line)
    return "\n".join(lines)


def _environment_families() -> list[str]:
    """The help's lines on environment ids: one per family the environment factory knows (its ``FAMILIES``)."""
    from acme.environments.factory import FAMILIES

    forms = [f"{family.prefix}:{family.name_form}" for family in FAMILIES]
    width = max(map(len, forms))
    lines = ["environments (any id of these families; <prefix>:<name>):"]
    for form, family in zip(forms, FAMILIES):
        note = f" ({family.note})" if family.note else ""
        lines.append(f"  {form:<{width}}  e.g. {', '.join(family.examples)}{note}")
    return lines


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose refusal of a choice (an agent, a command) shows at most
    ``acme.utils.quoting.ECHO_LIMIT`` characters of what was given."""

    def _check_value(self, action: argparse.Action, value: object) -> None:
        if action.choices is not None and value not in action.choices:
            choices = ", ".join(map(repr, action.choices))
            raise argparse.ArgumentError(action, f"invalid choice: {quote(value)} (choose from {choices})")


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the description and epilog as written, and ends each option's help with its default.

    An option whose help already speaks of its default, or whose default is None
    or False (no value), is left as written: its help says what happens instead.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if (
            not action.option_strings
            or "default" in text
            or action.default is None
            or action.default is False
            or action.default is argparse.SUPPRESS
        ):
            return text
        return text + " (default: %(default)s)"


def _add_hyperparameter_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        dest="assignments",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="set a field of the agent's config, e.g. --set learning_rate=3e-4 --set hidden_sizes=64,64 "
        "(repeatable; over --config and the registered baseline's values; `config AGENT` lists the fields)",
    )
    parser.add_argument(
        "--config",
        dest="config_file",
        default=None,
        metavar="FILE",
        help="the agent's config fields from a YAML or JSON file, or a run directory's config.yaml (every run "
        "writes its effective config there)",
    )


def agent_config_overrides(args: argparse.Namespace) -> dict:
    """The config fields ``--config`` and then ``--set`` give (parsed and checked against the agent's fields)."""
    from baselines import hyperparameters

    config_class = registry.get_agent(args.agent).make_config
    overrides = {}
    if args.config_file is not None:
        overrides.update(hyperparameters.read_config_file(config_class, args.config_file, args.agent))
    overrides.update(hyperparameters.parse_assignments(config_class, args.assignments))
    return overrides


def config_command(args: argparse.Namespace) -> int:
    """Prints the effective config of ``args.agent`` on ``args.env``."""
    from baselines import hyperparameters

    config = registry.make_experiment_config(args.agent, args.env, config_overrides=_checked_overrides(args))
    print(hyperparameters.describe(args.agent, args.env, config.builder.config), end="")
    return 0


def _checked_overrides(args: argparse.Namespace) -> dict:
    """``agent_config_overrides``, tried on the agent's config so that a refused value names its flag."""
    overrides = agent_config_overrides(args)
    if overrides:
        try:
            registry.make_agent_config(args.agent, args.env, overrides)
        except (ValueError, TypeError) as error:
            raise ValueError(f"--set/--config: {error}") from None
    return overrides


def _add_run_option_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per ``RunOptions`` field, with its description: ``--launcher``, ``--replay``, ``--num-actors``, ..."""
    from acme.experiments import options

    for field in dataclasses.fields(options.RunOptions):
        meta = field.metadata
        applies = meta["launchers"]
        where = "" if applies == options.RUN_LAUNCHERS else f"with --launcher {' or '.join(applies)}: "
        flag = options.flag_spelling(field.name)
        if field.type == "bool":
            parser.add_argument(flag, action="store_true", help=where + meta["help"])
            continue
        parser.add_argument(
            flag,
            default="local" if field.name == "launcher" else field.default,
            help=where + meta["help"],
            **{key: meta[key] for key in ("choices", "type", "metavar") if key in meta},
        )


def run_options(args: argparse.Namespace):
    """The run's ``RunOptions`` from its flags; a bad value or combination is refused naming the flags."""
    from acme.experiments import options

    return options.from_flags(
        **{field.name: getattr(args, field.name) for field in dataclasses.fields(options.RunOptions)}
    )


def _add_agent_and_environment(parser: argparse.ArgumentParser, agent_help: str) -> None:
    """The agent (positional) and ``--env``, as ``run``, ``config`` and ``plan`` take them."""
    parser.add_argument("agent", choices=registry.agent_names(), help=agent_help)
    parser.add_argument("--env", default="gymnasium:CartPole-v1", help="environment id, '<prefix>:<name>'")


def make_parser() -> argparse.ArgumentParser:
    from baselines import plan as planning

    parser = _Parser(
        prog="python -m baselines",
        description="Run reference experiments of the library's agents.",
        epilog=_describe(),
        formatter_class=_HelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)  # the usage line lists every command added
    run = commands.add_parser(
        "run",
        help="train an agent on an environment",
        epilog=_describe(),
        formatter_class=_HelpFormatter,
    )
    _add_agent_and_environment(run, "the agent to train")
    run.add_argument("--seed", type=arguments.seed, default=0, help="random seed")
    run.add_argument(
        "--max-steps",
        type=arguments.step_budget,
        default=None,
        help="training budget in environment steps (default: the tuned baseline's budget, "
        f"else {registry.DEFAULT_MAX_STEPS})",
    )
    run.add_argument(
        "--eval-every",
        type=arguments.step_interval,
        default=None,
        help="actor steps between evaluations, 0 for none (default: the tuned baseline's, "
        f"else {registry.DEFAULT_EVAL_EVERY})",
    )
    run.add_argument(
        "--eval-episodes",
        type=arguments.batch_count,
        default=None,
        help=f"episodes per evaluation (default: the tuned baseline's, else {registry.DEFAULT_EVAL_EPISODES})",
    )
    run.add_argument("--run-dir", default=None, help="where logs go (default: runs/<agent>-<env>-seed<seed>-<time>)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument(
        "--log-every",
        type=arguments.number(0, strict=False, note="0: every row"),
        default=5.0,
        help="seconds between terminal log lines, 0 for every row",
    )
    _add_run_option_flags(run)
    run.add_argument(
        "--checkpoint-dir",
        default=None,
        help="checkpoint the run here (learner, counts, replay); a directory with checkpoints is "
        "resumed from (default: no checkpoints)",
    )
    run.add_argument(
        "--checkpoint-every-minutes",
        type=arguments.number(0, strict=True),
        default=10.0,
        help="minutes between checkpoints",
    )
    run.add_argument(
        "--checkpoint-every-steps",
        type=arguments.step_budget,
        default=None,
        help="learner steps between checkpoints (default: by time only)",
    )
    run.add_argument("--keep-checkpoints", type=arguments.batch_count, default=3, help="checkpoints to keep")
    run.add_argument(
        "--record",
        default=None,
        metavar="DIR",
        help="also write every transition the actors make to a new dataset in DIR (Minari's format) when the run "
        "ends (local, threads or ray launcher; on a Ray cluster DIR must be on a file system every node sees)",
    )
    planning.add_sharding_flags(run)
    run.add_argument(
        "--actor-device",
        type=arguments.integer(0),
        default=None,
        metavar="ID",
        help="the device the actors' policy runs on (Sebulba: the learner on others, --sharding --devices); "
        "default: the CPU",
    )
    _add_hyperparameter_flags(run)
    config = commands.add_parser(
        "config",
        help="print an agent's effective config (the baseline's, --config, --set) as the YAML a run writes",
        formatter_class=_HelpFormatter,
    )
    _add_agent_and_environment(config, "the agent")
    _add_hyperparameter_flags(config)
    plan = commands.add_parser(
        "plan",
        help="what a learner layout costs each device (bytes, collectives, XLA's compiled figures), before launch",
        formatter_class=_HelpFormatter,
    )
    _add_agent_and_environment(plan, "the agent")
    plan.add_argument(
        "--memory-per-device",
        type=arguments.positive_integer,
        default=None,
        metavar="BYTES",
        help="refuse a layout whose compiled update needs more than this per device",
    )
    planning.add_sharding_flags(plan, with_auto=True)
    _add_hyperparameter_flags(plan)
    commands.add_parser("list", help="list agents, environments and baselines")
    evaluate = commands.add_parser(
        "evaluate", help="run greedy episodes of an exported policy snapshot", formatter_class=_HelpFormatter
    )
    evaluate.add_argument(
        "--snapshot",
        required=True,
        help="a directory written by baselines.policy_export.export_policy, or a run directory "
        "(its policy/ snapshot is used)",
    )
    evaluate.add_argument("--episodes", type=arguments.batch_count, default=10, help="episodes to run")
    evaluate.add_argument("--seed", type=arguments.seed, default=0, help="seed of the environment and policy")
    record_command_module.add_parser(commands)
    reproduce = commands.add_parser(
        "reproduce",
        help="run a registered baseline over seeds and record the results",
        description="Runs the registered baseline for each seed, writes one record per run under "
        "baselines/results/runs/ and the summary over seeds to --output.",
        formatter_class=_HelpFormatter,
    )
    reproduce.add_argument("agent", choices=registry.agent_names())
    reproduce.add_argument("--env", required=True, help="an environment with a registered baseline for this agent")
    reproduce.add_argument(
        "--seeds", type=arguments.seed, nargs="+", default=[0, 1, 2], help="seeds to run (default: 0 1 2)"
    )
    reproduce.add_argument(
        "--max-steps",
        type=arguments.step_budget,
        default=None,
        help="override the baseline's step budget (default: the baseline's)",
    )
    reproduce.add_argument(
        "--runs-dir",
        default=None,
        help="where the per-seed records go (default: the published records, baselines/results/runs/, which a "
        "--max-steps below the registered budget may not overwrite)",
    )
    reproduce.add_argument(
        "--log-dir",
        default=os.path.join("runs", "reproduce"),
        help="where each seed's evaluator.csv and learner.csv go, a new folder per seed and start time",
    )
    reproduce.add_argument(
        "--checkpoint-dir",
        default=None,
        help="checkpoint the reproduction here (every 10 minutes; the newest kept) so that the same command, "
        "stopped, resumes where it was (one folder per group of seeds)",
    )
    reproduce.add_argument(
        "--output",
        default=None,
        help="summary file (default: baselines/results/continuous_control.json for continuous "
        "agents, baselines/results/discrete_control.json otherwise)",
    )
    commands.add_parser(
        "sweep",
        help="a grid or Optuna search over config fields and seeds on Ray Tune (python -m baselines sweep --help)",
        add_help=False,
    )
    report = commands.add_parser(
        "report",
        help="regenerate the results tables and learning-curve plots from the records",
        description="Reads the per-seed records and writes a results README with the table over seeds, the "
        "per-seed table, one learning-curve PNG per environment (against actor steps and wall-clock) and the "
        "machines and versions behind the records; by default also rewrites the repository README's results "
        "section between its report markers. With --runs, your runs are drawn beside the baselines instead.",
        formatter_class=_HelpFormatter,
    )
    report.add_argument(
        "--records",
        default=None,
        help="the per-seed records to read (default: the published ones, baselines/results/runs/)",
    )
    report.add_argument(
        "--output",
        default=None,
        help="folder for README.md and plots/ (default: baselines/results/, or with --runs DIR: DIR/report/)",
    )
    report.add_argument(
        "--readme",
        default=None,
        help="a markdown file whose section between the report markers is rewritten (default: the "
        "repository's README.md, none with --runs or --records)",
    )
    report.add_argument(
        "--runs",
        default=None,
        metavar="DIR",
        help="your runs: `python -m baselines run` folders (their result.json) or per-seed records, at any depth",
    )
    report.add_argument(
        "--sweep",
        default=None,
        metavar="DIR",
        help="report on the sweep in DIR (python -m baselines sweep --run-dir DIR): its table, plots and best "
        "setting, written to DIR/report/ (or --output)",
    )
    report.add_argument(
        "--target",
        type=float,
        default=None,
        help="with --sweep: the return whose first crossing is counted (default: the registered baseline's)",
    )
    report.add_argument(
        "--against",
        default=None,
        metavar="AGENT:ENVIRONMENT",
        help="with --runs: draw the runs on that environment against this registered baseline, e.g. "
        "sac:gymnasium:Pendulum-v1",
    )
    return parser


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


def _topmost_missing(path: str) -> str | None:
    """The outermost directory of ``path`` that does not exist yet (None if ``path`` exists)."""
    missing = None
    path = os.path.abspath(path)
    while not os.path.exists(path):
        missing, path = path, os.path.dirname(path)
    return missing


def _holds_files(directory: str) -> bool:
    """Whether a run wrote anything under ``directory`` beyond the effective config it starts with."""
    from baselines.hyperparameters import CONFIG_FILE

    return any(set(files) - {CONFIG_FILE} for _, _, files in os.walk(directory))


@contextlib.contextmanager
def _new_run_directory(path: str) -> Iterator[None]:
    """Creates ``path`` for the block; if the block fails before any file but the effective config was written
    under the directories it created, removes them again, so that a refused run leaves no run folder behind."""
    created = _topmost_missing(path)
    os.makedirs(path, exist_ok=True)
    try:
        yield
    except BaseException:
        if created is not None and not _holds_files(created):
            shutil.rmtree(created, ignore_errors=True)
        raise


def _default_run_dir(agent: str, env: str, seed: int) -> str:
    from baselines.results import safe_name

    safe_env = safe_name(env)
    return os.path.join("runs", f"{agent}-{safe_env}-seed{seed}-{time.strftime('%Y%m%d-%H%M%S')}")


def check_launcher_flags(args: argparse.Namespace):
    """The run's ``RunOptions`` (which refuse options their launcher has no use for, and bad combinations), after
    refusing an unreachable ``--ray-address``."""
    from launch.ray_launcher import check_ray_cluster

    options = run_options(args)
    if options.ray_address is not None:
        check_ray_cluster(options.ray_address)  # before anything is built or written
    return options


def run_command(args: argparse.Namespace) -> int:
    """Parses, runs (``acme.experiments.run``), writes (``baselines.run_outputs``)."""
    from acme.experiments import CheckpointingConfig, run
    from acme.utils import loggers
    from baselines import offline_run
    from baselines import plan as planning

    options = check_launcher_flags(args)
    sharding = planning.sharding_from_flags(args)
    if args.actor_device is not None and options.launcher == "anakin":
        raise ValueError(
            "--actor-device places the actors of the local, threads and ray launchers apart from the learner; the "
            "anakin launcher acts where it learns (--sharding splits its environments over the learner's devices). "
            "Leave --actor-device out."
        )
    planning.ask_for_cpu_devices(
        max(planning.devices_needed(sharding=sharding) or 1, planning.devices_needed(args.actor_device) or 1)
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
    config = registry.make_experiment_config(
        args.agent,
        args.env,
        seed=args.seed,
        max_steps=args.max_steps,
        eval_every=args.eval_every,
        num_eval_episodes=args.eval_episodes,
        logger_factory=loggers.make_logger_factory(run_dir, time_delta=args.log_every, print_fn=print_fn),
        checkpointing=checkpointing,
        config_overrides=_checked_overrides(args),
    )
    if sharding is not None:
        sharding.device_list()  # refused here when the devices are not there
        config = dataclasses.replace(config, learner_sharding=sharding)
    offline_run.check_flags(args, options)
    if args.record is not None:
        config = dataclasses.replace(config, record_dataset=args.record)
    if options.launcher == "anakin":
        from acme.anakin.runner import check_runnable

        check_runnable(config, options.anakin_config())  # refused here, before the run directory is made
    if args.actor_device is not None:
        from acme.jax.sharding import device_of

        device_of(args.actor_device)  # refused here when it is not there
        config = dataclasses.replace(config, actor_device=args.actor_device)
    if options.launcher != "anakin" and options.dataset is None:
        options = planning.with_cpu_devices(options, sharding, args.actor_device)
    description = description_of(args, config, options)
    with _new_run_directory(run_dir):  # only once the arguments made a valid experiment
        run_outputs.write_config(run_dir, description)
        print(run_outputs.starting_line(description, config, options, args.seed, run_dir), flush=True)
        result = run(config, options, progress=not args.no_progress)
        return run_outputs.write_outputs(run_dir, result, description)


def description_of(args: argparse.Namespace, config, options) -> run_outputs.RunDescription:
    """What ``args``' run is, for the run's folder (``baselines.run_outputs``)."""
    return run_outputs.RunDescription(
        args.agent,
        args.env,
        config.builder.config,
        launcher=options.launcher or "local",
        dataset=options.dataset,
        sweep_field=options.sweep[0] if options.sweep is not None else None,
    )


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["sweep"]:  # its own parser: every flag it does not know is a `run` flag for its trials
        from baselines import sweep

        return sweep.main(argv[1:])
    parser = make_parser()
    args = parser.parse_args(argv)
    if args.command == "list":
        print(_describe(with_records=True))
        return 0
    if args.command == "evaluate":
        from acme.utils.checkpoint_files import CheckpointError

        try:
            return evaluate_command(args)
        except (CheckpointError, ValueError, TypeError) as error:
            parser.exit(2, f"error: {error}\n")
    if args.command == "config":
        try:
            return config_command(args)
        except (ValueError, TypeError) as error:
            parser.exit(2, f"error: {error}\n")
    if args.command == "plan":
        from baselines import plan as planning

        try:
            return planning.plan_command(args, _checked_overrides(args))
        except (ValueError, TypeError) as error:
            parser.exit(2, f"error: {error}\n")
    if args.command == "report":
        try:
            return report_command(args)
        except (ValueError, TypeError) as error:
            parser.exit(2, f"error: {error}\n")
    if args.command == "record":
        from acme.utils.checkpoint_files import CheckpointError

        try:
            return record_command_module.record_command(args, _snapshot_directory(args.snapshot))
        except (CheckpointError, ValueError, TypeError, FileExistsError) as error:
            parser.exit(2, f"error: {error}\n")
    if args.command == "reproduce":
        try:
            return reproduce_command(args)
        except (ValueError, TypeError) as error:
            parser.exit(2, f"error: {error}\n")
    from acme.utils.checkpoint_files import CheckpointError
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
