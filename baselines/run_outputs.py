"""The one writer of a run's folder, the same for every launcher, online or from a dataset.

Before the run: ``config.yaml`` (``write_config``). After it (``write_outputs``): ``result.json`` (the first
agent's evaluations and counts at the top, every agent's under ``agents`` when the run trained several),
``learning_curve.png``, the closing lines on the terminal, and the policy snapshot in ``policy/`` (with several
agents, each also in ``policies/<seed>[-<field><value>]/``) that ``python -m baselines evaluate`` loads.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import sys
from typing import Any, Iterator

from acme.experiments.result import RunResult, SeedRun
from baselines import registry


@dataclasses.dataclass(frozen=True)
class RunDescription:
    """What a run was: its agent, environment and launcher, the agent's config, and where it learned from.

    Attributes:
      agent: the agent's name (``dqn``).
      environment: the environment id it acted in or was evaluated in.
      agent_config: the agent's config it trained with (a swept field takes each agent's own value).
      launcher: local, threads, ray or anakin.
      dataset: the dataset a run from a dataset learned from (None online).
      sweep_field: the config field an on-device sweep gave each agent its own value of.
      logger: where the run's rows went besides the terminal (csv, wandb or mlflow).
      logger_group: the tracker group it was shown in (None: its folder's name).
    """

    agent: str
    environment: str
    agent_config: Any
    launcher: str = "local"
    dataset: str | None = None
    sweep_field: str | None = None
    logger: str = "csv"
    logger_group: str | None = None


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
def new_run_directory(path: str) -> Iterator[None]:
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


def run_and_write(run_dir: str, config: Any, options: Any, description: RunDescription, progress: bool = False) -> int:
    """Runs ``config`` with ``options`` (``acme.experiments.run``) in the new run folder ``run_dir``: its
    ``config.yaml`` first, the starting line, the run, then what it leaves (``write_outputs``, whose exit status
    it returns). A run that fails before writing anything but its config leaves no folder behind."""
    from acme.experiments import run

    with new_run_directory(run_dir):
        write_config(run_dir, description)
        print(starting_line(description, config, options, config.seed, run_dir), flush=True)
        cache = cache_line(options)
        if cache:
            print(cache, flush=True)
        result = run(config, options, progress=progress)
        return write_outputs(run_dir, result, description, config.get_logger_factory())


def write_config(run_dir: str, description: RunDescription) -> None:
    """``config.yaml``: the agent's full config, written before the run starts."""
    from baselines import hyperparameters

    logging = {"logger": description.logger}
    if description.logger_group is not None:
        logging["logger_group"] = description.logger_group
    hyperparameters.write_config(run_dir, description.agent, description.environment, description.agent_config, logging)


def label(run: SeedRun, field: str | None) -> str:
    return f"seed {run.seed}" + (f", {field}={run.sweep_value:g}" if field else "")


def _folder(run: SeedRun, field: str | None) -> str:
    return f"seed{run.seed}" + (f"-{field}{run.sweep_value:g}" if field else "")


def _evaluations(run: SeedRun) -> list[dict]:
    return [dataclasses.asdict(e) for e in run.evaluations]


def result_json(result: RunResult, description: RunDescription) -> dict:
    """``result.json``'s content: the first agent's at the top; every agent's under ``agents`` for a run of several
    (or an on-device run, which may train several)."""
    first, field = result.runs[0], description.sweep_field
    summary = {
        "agent": description.agent,
        "environment": description.environment,
        "launcher": description.launcher,
        **({"dataset": os.path.abspath(description.dataset)} if description.dataset else {}),
        "seed": first.seed,
        "steps_key": result.steps_key,
        "actor_steps": first.actor_steps,
        "learner_steps": first.learner_steps,
        "wall_seconds": round(result.wall_seconds, 2),
        **({"compile_seconds": round(result.compile_seconds, 2)} if result.compile_seconds is not None else {}),
        "evaluations": _evaluations(first),
    }
    if description.launcher == "anakin" or len(result.runs) > 1:
        summary["agents"] = [
            {
                "seed": run.seed,
                **({field: run.sweep_value} if field else {}),
                "actor_steps": run.actor_steps,
                "learner_steps": run.learner_steps,
                "evaluations": _evaluations(run),
            }
            for run in result.runs
        ]
    return summary


def _title(result: RunResult, description: RunDescription) -> str:
    title = f"{description.agent} on {description.environment}"
    if description.dataset:
        title += f" from {os.path.basename(os.path.normpath(description.dataset))}"
    if len(result.runs) == 1:
        title += f", seed {result.runs[0].seed}"
    if description.launcher != "local":
        title += f" ({description.launcher})"
    return title


def _plot(path: str, result: RunResult, description: RunDescription) -> None:
    from baselines.plotting import CurveGroup, plot_curve_groups, plot_learning_curve

    baseline = registry.BASELINES.get((description.agent, description.environment))
    target = baseline.target_return if baseline and not description.dataset else None
    steps_label = result.steps_key.replace("_", " ")
    if len(result.runs) == 1:
        evaluations = result.runs[0].evaluations
        plot_learning_curve(
            path,
            [result.position(e) for e in evaluations],
            [e.mean_return for e in evaluations],
            [e.std_return for e in evaluations],
            title=_title(result, description),
            target=target,
            steps_label=steps_label,
        )
        return
    groups = [
        CurveGroup(
            label(run, description.sweep_field),
            [[result.position(e) for e in run.evaluations]],
            [[e.wall_seconds for e in run.evaluations]],
            [[e.mean_return for e in run.evaluations]],
        )
        for run in result.runs
    ]
    targets = {target: f"target {target:g}"} if target is not None else None
    plot_curve_groups(path, groups, title=_title(result, description), targets=targets)


def closing_lines(result: RunResult, description: RunDescription, run_dir: str) -> list[str]:
    """What the terminal shows at the end: each agent's best evaluation, then the counts, time and logs."""
    noun = result.steps_key[:-1].replace("_", " ")  # "actor step" or "learner step"
    several = len(result.runs) > 1
    lines = []
    for run in result.runs:
        best = run.best
        if best is not None:
            whose = f" ({label(run, description.sweep_field)})" if several else ""
            lines.append(f"Best evaluation return {best.mean_return:.1f} at {noun} {result.position(best)}{whose}")
    count = max(getattr(run, result.steps_key) for run in result.runs)
    compiling = f", {result.compile_seconds:.1f} s of it compiling" if result.compile_seconds is not None else ""
    evaluated = "" if any(run.evaluations for run in result.runs) else " with no evaluation"
    each = " each" if several else ""
    lines.append(
        f"Finished {count} {noun}s{each} in {result.wall_seconds:.0f} s{compiling}{evaluated} (logs in {run_dir})."
    )
    return lines


def export_snapshot(run_dir: str, description: RunDescription, agent_config: Any, policy_params: Any, folder: str):
    """Writes one policy snapshot; a snapshot that cannot be written is said, with what was kept (returns 1)."""
    from acme.utils.checkpoint_files import CheckpointError
    from baselines.policy_export import export_policy

    try:
        snapshot = export_policy(
            os.path.join(run_dir, folder), description.agent, description.environment, agent_config, policy_params
        )
    except (CheckpointError, TypeError, ValueError, OSError) as error:
        print(
            f"error: the policy snapshot was not saved ({type(error).__name__}: {error}); the run's logs, "
            f"result.json and learning curve are in {run_dir}.",
            file=sys.stderr,
            flush=True,
        )
        return 1
    print(
        f"Policy snapshot in {snapshot}; evaluate it with: python -m baselines evaluate --snapshot {snapshot} "
        "--episodes 10",
        flush=True,
    )
    return 0


def starting_line(description: RunDescription, config: Any, options: Any, seed: int, run_dir: str) -> str:
    """The line a run starts with: what runs where, for how long, and where its logs go."""
    agent, environment, steps = description.agent, description.environment, config.max_num_actor_steps
    launcher = options.launcher or "local"
    where = f"Ray cluster {options.ray_address}" if options.ray_address else f"{launcher} launcher"
    if options.dataset is not None:
        from acme.datasets.minari_format import read_metadata

        dataset = read_metadata(options.dataset)
        how = f"streamed through a buffer of {options.stream_buffer} items" if options.stream_buffer else "in memory"
        return (
            f"Training {agent} offline on {options.dataset} ({dataset.metadata.get('total_episodes')} episodes, "
            f"{dataset.num_steps} steps of {dataset.environment_id}, {how}) on the {where} for {steps} learner "
            f"steps, evaluated on {environment} (seed {seed}); logs in {run_dir}"
        )
    if launcher == "anakin":
        sharding = config.learner_sharding
        device = "the device" if sharding is None else f"{len(sharding.device_list())} device(s), {sharding.strategy}"
        agents = options.num_seeds * max(1, len(options.sweep[1]) if options.sweep else 1)
        return (
            f"Running {agent} on {environment} on {device} (anakin launcher): {agents} agent(s) from seed {seed} "
            f"for {steps} steps each; logs in {run_dir}"
        )
    replay = options.replay_backend
    if launcher == "local":
        envs = options.num_envs or config.num_envs_per_actor
        many = f", {envs} environments" if envs > 1 else ""
        return (
            f"Running {agent} on {environment} (seed {seed}) for {steps} steps ({replay} replay{many}); logs in "
            f"{run_dir}"
        )
    feed = f", fed by {options.feed}" if replay == "learner" else ""
    return (
        f"Running {agent} on {environment} (seed {seed}) with {options.actors} actors on the {where} for {steps} "
        f"steps ({replay} replay{feed}); logs in {run_dir}"
    )


def cache_line(options: Any) -> str | None:
    """Where compiled programs are kept between runs, and how big that folder is (None when nothing is kept)."""
    from acme.jax import compile_cache

    directory = compile_cache.enable(options.compile_cache)
    if directory is None:
        return None
    megabytes = compile_cache.size_bytes(directory) / 2**20
    return (
        f"Compiled programs are kept in {directory} ({megabytes:.1f} MB): a second run skips most compilation "
        "(--compile-cache off: not kept; delete the folder to clear it)."
    )


def write_summary(logger_factory: Any, result: RunResult, description: RunDescription) -> None:
    """One row per agent in the ``summary`` logger: its final and best evaluation return, steps and wall-clock."""
    logger = logger_factory("summary", result.steps_key)
    for run in result.runs:
        returns = [e.mean_return for e in run.evaluations]
        row = {"seed": run.seed, "actor_steps": run.actor_steps, "learner_steps": run.learner_steps}
        if description.sweep_field:
            row[description.sweep_field] = run.sweep_value
        if returns:
            row.update(final_return=returns[-1], best_return=max(returns))
        logger.write({**row, "wall_seconds": result.wall_seconds})
    logger.close()


def write_outputs(
    run_dir: str, result: RunResult, description: RunDescription, logger_factory: Any | None = None
) -> int:
    """Writes what a finished run leaves (see the module docstring); returns the exit status (1 when a policy
    snapshot could not be written, 0 otherwise). The curve and the closing lines come before the snapshots: a
    snapshot that fails to save loses neither. With ``logger_factory`` each agent's summary (final and best
    return, steps, wall-clock) is also a row of the ``summary`` logger (``summary.csv``, and the tracker's run)."""
    from baselines.results import write_result

    write_result(run_dir, result_json(result, description))
    if logger_factory is not None:
        write_summary(logger_factory, result, description)
    if any(run.evaluations for run in result.runs):
        _plot(os.path.join(run_dir, "learning_curve.png"), result, description)
    for line in closing_lines(result, description, run_dir):
        print(line, flush=True)
    status = 0
    field = description.sweep_field
    for index, run in enumerate(result.runs):
        if run.policy_params is None:
            continue
        agent_config = description.agent_config
        if field:
            kind = type(getattr(agent_config, field))
            agent_config = dataclasses.replace(agent_config, **{field: kind(run.sweep_value)})
        folders = ["policy"] if index == 0 else []
        if len(result.runs) > 1:
            folders.append(os.path.join("policies", _folder(run, field)))
        for folder in folders:
            status = max(status, export_snapshot(run_dir, description, agent_config, run.policy_params, folder))
    return status
