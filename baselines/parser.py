"""The ``python -m baselines`` parser: its commands and flags (``make_parser``), and what a ``run``'s flags mean
as the library's objects (``run_options``, ``checked_overrides``)."""

from __future__ import annotations

import argparse
import dataclasses
import os

from acme.utils.quoting import quote
from baselines import arguments, registry
from baselines import record as record_command_module


def describe(with_records: bool = False) -> str:
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


def checked_overrides(args: argparse.Namespace) -> dict:
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
        epilog=describe(),
        formatter_class=_HelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)  # the usage line lists every command added
    run = commands.add_parser(
        "run",
        help="train an agent on an environment",
        epilog=describe(),
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
    run.add_argument(
        "--logger",
        choices=("csv", "wandb", "mlflow"),
        default="csv",
        help="where the run's rows go besides the terminal: csv (CSV and TensorBoard files in the run folder, "
        "always written); wandb or mlflow also to that tracker (the 'tracking' extra): W&B offline files under the "
        "run folder unless WANDB_MODE says otherwise, MLflow's MLFLOW_TRACKING_URI or else runs/mlflow.db",
    )
    run.add_argument(
        "--logger-group",
        default=None,
        metavar="NAME",
        help="with --logger wandb or mlflow: the group the run is shown in (W&B's group, MLflow's experiment); "
        "default: the run folder's name (a sweep gives its trials the sweep's)",
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
    planning.add_sharding_flags(run)
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
    plan.add_argument(
        "--learner-processes",
        type=arguments.positive_integer,
        default=1,
        metavar="P",
        help="plan a learner over P processes of --devices devices each (as run --learner-processes; with "
        "--sharding data or fsdp): the collectives that cross between them each update",
    )
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
