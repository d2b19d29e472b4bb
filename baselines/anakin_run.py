"""``python -m baselines run ... --launcher anakin``: the on-device run and the files a run leaves.

The same files as a host run: ``evaluator.csv`` and ``learner.csv`` (one row per
agent per chunk, with its seed and swept value), ``result.json``,
``learning_curve.png`` (one line per agent) and a policy snapshot in
``policy/`` (the first agent's; with several agents each also has its own in
``policies/<label>/``), which ``python -m baselines evaluate`` loads.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from typing import Any

from baselines import registry


def anakin_config(args: argparse.Namespace, config: Any):
    """The ``AnakinConfig`` of the flags; refuses (ValueError) what the on-device loop cannot run, before anything
    is written."""
    from acme.anakin.runner import AnakinConfig, check_runnable

    field, values = args.sweep if args.sweep is not None else (None, ())
    anakin = AnakinConfig(num_envs=args.num_envs, num_seeds=args.num_seeds or 1, sweep_field=field, sweep_values=values)
    check_runnable(config, anakin)
    return anakin


def _label(run: Any, field: str | None) -> str:
    return f"seed {run.seed}" + (f", {field}={run.sweep_value:g}" if field else "")


def _folder(run: Any, field: str | None) -> str:
    return f"seed{run.seed}" + (f"-{field}{run.sweep_value:g}" if field else "")


def train(args: argparse.Namespace, config: Any, anakin: Any, run_dir: str) -> int:
    from acme.anakin import run_anakin
    from baselines import cli
    from baselines.plotting import CurveGroup, plot_curve_groups

    agents = anakin.num_seeds * max(1, len(anakin.sweep_values))
    sharding = config.learner_sharding
    where = "the device" if sharding is None else f"{len(sharding.device_list())} device(s), {sharding.strategy}"
    print(
        f"Running {args.agent} on {args.env} on {where} (anakin launcher): {agents} agent(s) from seed {args.seed} "
        f"for {config.max_num_actor_steps} steps each; logs in {run_dir}",
        flush=True,
    )
    result = run_anakin(config, anakin, progress=not args.no_progress)
    field = anakin.sweep_field
    first = result.agents[0]
    summary = {
        "agent": args.agent,
        "environment": args.env,
        "launcher": "anakin",
        "seed": first.seed,
        "actor_steps": first.actor_steps,
        "learner_steps": first.learner_steps,
        "wall_seconds": round(result.wall_seconds, 2),
        "compile_seconds": round(result.compile_seconds, 2),
        "evaluations": [dataclasses.asdict(e) for e in first.evaluations],
        "agents": [
            {
                "seed": run.seed,
                **({field: run.sweep_value} if field else {}),
                "actor_steps": run.actor_steps,
                "learner_steps": run.learner_steps,
                "evaluations": [dataclasses.asdict(e) for e in run.evaluations],
            }
            for run in result.agents
        ],
    }
    from baselines.results import write_result

    write_result(run_dir, summary)
    if first.evaluations:
        baseline = registry.BASELINES.get((args.agent, args.env))
        groups = [
            CurveGroup(
                _label(run, field),
                [[e.actor_steps for e in run.evaluations]],
                [[e.wall_seconds for e in run.evaluations]],
                [[e.mean_return for e in run.evaluations]],
            )
            for run in result.agents
        ]
        targets = {baseline.target_return: f"target {baseline.target_return:g}"} if baseline else None
        plot_curve_groups(
            os.path.join(run_dir, "learning_curve.png"),
            groups,
            title=f"{args.agent} on {args.env} (anakin)",
            targets=targets,
        )
        for run in result.agents:
            best = run.best
            print(
                f"Best evaluation return {best.mean_return:.1f} at step {best.actor_steps} ({_label(run, field)}; "
                f"{run.actor_steps} actor steps)",
                flush=True,
            )
    print(
        f"Finished in {result.wall_seconds:.1f} s, {result.compile_seconds:.1f} s of it compiling (logs in {run_dir}).",
        flush=True,
    )
    status = 0
    for index, run in enumerate(result.agents):
        agent_config = config.builder.config
        if field:
            kind = type(getattr(agent_config, field))
            agent_config = dataclasses.replace(agent_config, **{field: kind(run.sweep_value)})
        folders = ["policy"] if index == 0 else []
        if len(result.agents) > 1:
            folders.append(os.path.join("policies", _folder(run, field)))
        for folder in folders:
            status = max(status, cli._export_snapshot(args, config, run_dir, run.policy_params, folder, agent_config))
    return status
