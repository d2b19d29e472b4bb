"""``python -m baselines run ... --launcher anakin``: the on-device run and the files a run leaves.

The same files as a host run: ``evaluator.csv`` and ``learner.csv`` (one row per
agent per chunk, with its seed and swept value), ``result.json``,
``learning_curve.png`` (one line per agent) and a policy snapshot in
``policy/`` (the first agent's; with several agents each also has its own in
``policies/<label>/``), which ``python -m baselines evaluate`` loads.
"""

from __future__ import annotations

import argparse
from typing import Any


def anakin_config(args: argparse.Namespace, config: Any):
    """The ``AnakinConfig`` of the flags; refuses (ValueError) what the on-device loop cannot run, before anything
    is written."""
    from acme.anakin.runner import AnakinConfig, check_runnable

    field, values = args.sweep if args.sweep is not None else (None, ())
    anakin = AnakinConfig(num_envs=args.num_envs, num_seeds=args.num_seeds or 1, sweep_field=field, sweep_values=values)
    check_runnable(config, anakin)
    return anakin


def train(args: argparse.Namespace, config: Any, anakin: Any, run_dir: str, description: Any) -> int:
    """Trains on the device and writes the run's folder (``description``: ``baselines.run_outputs``)."""
    from acme.anakin import run_anakin
    from baselines import run_outputs

    agents = anakin.num_seeds * max(1, len(anakin.sweep_values))
    sharding = config.learner_sharding
    where = "the device" if sharding is None else f"{len(sharding.device_list())} device(s), {sharding.strategy}"
    print(
        f"Running {args.agent} on {args.env} on {where} (anakin launcher): {agents} agent(s) from seed {args.seed} "
        f"for {config.max_num_actor_steps} steps each; logs in {run_dir}",
        flush=True,
    )
    result = run_anakin(config, anakin, progress=not args.no_progress)
    return run_outputs.write_outputs(run_dir, result, description)
