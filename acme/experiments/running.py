"""``run(config, options)``: the one call that runs any experiment, and the only place that chooses its driver.

``config`` (``ExperimentConfig``) says what to learn, ``options`` (``RunOptions``) how: the host loop
(``launcher="local"``, the default), the distributed program (``"threads"``, ``"ray"``) or the device loop
(``"anakin"``), acting or, with ``options.dataset``, learning from a recorded dataset (the budget and the
evaluation interval then count learner steps). Every driver follows one schedule (``acme.experiments.schedule``)
and returns one ``RunResult``.
"""

from __future__ import annotations

import dataclasses
import signal
import sys
import time

from acme.experiments.checkpointing import CheckpointingConfig, newest_checkpoint_counts
from acme.experiments.config import ExperimentConfig
from acme.experiments.options import COMPILES_HERE, RunOptions
from acme.experiments.result import ACTOR_STEPS, LEARNER_STEPS, RunResult, SeedRun
from acme.jax import compile_cache


def run(config: ExperimentConfig, options: RunOptions | None = None, progress: bool = True) -> RunResult:
    """Trains ``config``'s agent as ``options`` say (see the module docstring) and returns what it reached.

    ``progress`` shows a progress bar where the driver runs in this process (the host loop, the device loop,
    learning from a dataset here). Compiled programs are kept in jax's persistent cache (``options.compile_cache``;
    ``acme.jax.compile_cache``): this process's, and on Ray each node's.
    """
    options = RunOptions(launcher="local") if options is None else options
    launcher = options.launcher or "local"
    if launcher in COMPILES_HERE:
        compile_cache.enable(options.compile_cache)
    config = _with_actor_options(config, options)
    if launcher == "anakin":
        from acme.anakin.runner import run_anakin

        return run_anakin(config, options, progress=progress)
    if options.num_envs is not None:
        config = dataclasses.replace(config, num_envs_per_actor=options.num_envs)
    if launcher == "local" and options.dataset is not None:
        from acme.experiments.offline import run_offline_experiment

        return run_offline_experiment(config, options, progress=progress)
    if launcher == "local":
        from acme.experiments.in_process import run_experiment

        return run_experiment(config, progress=progress, replay=options.replay_backend)
    from acme.experiments.distributed import make_distributed_experiment, merge_recording

    steps_key = ACTOR_STEPS if options.dataset is None else LEARNER_STEPS
    result = launch_program(make_distributed_experiment(config, options), options, steps_key, config.checkpointing)
    if config.record_dataset is not None:  # the actors' shards, one dataset
        print(f"Recorded the actors' episodes to {merge_recording(config)}.", flush=True)
    return result


def _with_actor_options(config: ExperimentConfig, options: RunOptions) -> ExperimentConfig:
    """``config`` with the actors' options set (``RunOptions.record``, ``actor_device``): the options win."""
    changes = {}
    if options.record is not None:
        changes["record_dataset"] = options.record
    if options.actor_device is not None:
        from acme.jax.sharding import device_of

        device_of(options.actor_device)  # refused here when it is not there
        changes["actor_device"] = options.actor_device
    return dataclasses.replace(config, **changes) if changes else config


def _after_checkpoint(stop: BaseException, directory: str, steps_key: str) -> BaseException:
    """What a checkpointed program stopped by a signal raises: the same stop, saying where its newest checkpoint
    holds the run (KeyboardInterrupt for Ctrl-C; SIGTERM's SystemExit after printing it)."""
    counts = newest_checkpoint_counts(directory)
    if counts is None or steps_key not in counts:
        return stop
    where = f"at {steps_key[:-1].replace('_', ' ')} {int(counts[steps_key])}, after a checkpoint"
    if isinstance(stop, KeyboardInterrupt):
        return KeyboardInterrupt(f"stopped by Ctrl-C {where}")
    if stop.code == 128 + signal.SIGTERM:
        print(f"Stopped by SIGTERM {where}.", file=sys.stderr, flush=True)
    return stop


def launch_program(
    program, options: RunOptions, steps_key: str = ACTOR_STEPS, checkpointing: CheckpointingConfig | None = None
) -> RunResult:
    """Runs a distributed experiment's ``program`` to its end on ``options``' launcher; its result is the
    ``SeedRun`` its evaluator node returned (``launch.launch`` hands back what nodes return). Stopped by Ctrl-C
    or SIGTERM, a checkpointed program's learner saves as it stops, and the error says where that checkpoint
    holds the run, as the host loop's does."""
    import launch

    start = time.perf_counter()
    try:
        returned = launch.launch(program, options.launch_options())
    except (KeyboardInterrupt, SystemExit) as stop:
        if checkpointing is None:
            raise
        raise _after_checkpoint(stop, checkpointing.directory, steps_key) from None
    seed_run = returned.get("evaluator")
    if not isinstance(seed_run, SeedRun):
        raise RuntimeError(f"The program's evaluator node returned {type(seed_run).__name__}, not the run's SeedRun.")
    return RunResult([seed_run], time.perf_counter() - start, steps_key=steps_key)
