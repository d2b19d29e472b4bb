"""Reproducing baselines over seeds and recording what they reached.

Each finished run is written to ``baselines/results/runs/<agent>__<env>__seed<N>.json``
(so a long sweep keeps what it finished), and ``summarize`` folds those into
one results file per group of environments, with the mean and spread over seeds.

    python -m baselines reproduce sac --env gymnasium:Pendulum-v1 --seeds 0 1 2
"""

from __future__ import annotations

import datetime
import glob
import json
import os
import platform
from typing import Iterable

import numpy as np

from baselines import registry

RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
RUNS_DIR = os.path.join(RESULTS_DIR, "runs")


def safe_name(environment_id: str) -> str:
    """``environment_id`` as a file name: ``gymnasium:CartPole-v1`` -> ``gymnasium_CartPole-v1``."""
    return environment_id.replace(":", "_").replace("/", "_")


def run_name(agent: str, environment_id: str, seed: int) -> str:
    """``agent__environment__seedN``, safe as a file name."""
    return f"{agent}__{safe_name(environment_id)}__seed{seed}"


def run_file(agent: str, environment_id: str, seed: int, runs_dir: str = RUNS_DIR) -> str:
    return os.path.join(runs_dir, run_name(agent, environment_id, seed) + ".json")


def reproduce(
    agent: str,
    environment_id: str,
    seed: int,
    max_steps: int | None = None,
    runs_dir: str = RUNS_DIR,
    progress: bool = False,
    log_dir: str | None = None,
) -> dict:
    """Runs the registered baseline for one seed and writes its record; returns the record.

    With ``log_dir`` the evaluations and the learner's metrics (a row every 10 s) are also written there
    as ``evaluator.csv`` and ``learner.csv``, for looking into a run after it ends.
    """
    return reproduce_seeds(agent, environment_id, [seed], max_steps, runs_dir, progress, log_dir)[0]


def reproduce_seeds(
    agent: str,
    environment_id: str,
    seeds: list[int],
    max_steps: int | None = None,
    runs_dir: str = RUNS_DIR,
    progress: bool = False,
    log_dir: str | None = None,
    checkpoint_dir: str | None = None,
) -> list[dict]:
    """Runs the registered baseline for consecutive ``seeds`` and writes a record for each; returns them.

    An on-device (anakin) baseline trains all the seeds in one vmapped call (each record's wall seconds are
    the call's, compilation included); the others run one seed after another. ``log_dir`` as ``reproduce``'s.
    With ``checkpoint_dir`` the run is checkpointed there (every 10 minutes, at the device loop's chunk
    boundaries; one folder per seed on the host) and the same call resumes it from the newest checkpoint: a
    reproduction longer than one sitting goes on where it stopped, its wall-clock counting on from there.
    """
    from acme.experiments import RunOptions, run
    from acme.utils import loggers

    baseline = registry.BASELINES.get((agent, environment_id))
    if baseline is None:
        known = ", ".join(f"{a} on {e}" for a, e in sorted(registry.BASELINES))
        raise ValueError(f"No registered baseline for {agent} on {environment_id}; known baselines: {known}.")
    if not seeds or list(seeds) != list(range(seeds[0], seeds[0] + len(seeds))):
        raise ValueError(f"seeds must be consecutive integers (one call trains seed, seed + 1, ...), got {seeds}.")
    check_not_shortening_official_records(baseline, max_steps, runs_dir)
    title = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}-{seeds[-1]}"

    def reproduction_loggers(label: str, steps_key: str | None = None) -> loggers.Logger:
        # A reproduction takes minutes to an hour: the terminal shows each evaluation as it comes, nothing
        # else; with log_dir the evaluations and the learner's metrics also go to CSV files.
        if label == "evaluator":
            terminal = loggers.TerminalLogger(f"{agent} {title}")
            return loggers.Dispatcher([terminal, loggers.CSVLogger(log_dir, label)]) if log_dir else terminal
        if label == "learner" and log_dir:
            return loggers.TimeFilter(loggers.CSVLogger(log_dir, label), 10.0)
        return loggers.NoOpLogger()

    def experiment(seed: int):
        checkpointing = None
        if checkpoint_dir is not None:
            from acme.experiments import CheckpointingConfig

            where = checkpoint_dir if baseline.launcher == "anakin" else os.path.join(checkpoint_dir, f"seed{seed}")
            checkpointing = CheckpointingConfig(where, every_minutes=10.0, keep=1)
        return registry.make_experiment_config(
            agent,
            environment_id,
            seed=seed,
            max_steps=max_steps,
            logger_factory=reproduction_loggers,
            checkpointing=checkpointing,
        )

    if baseline.launcher == "anakin":
        config = experiment(seeds[0])
        run_result = run(
            config,
            RunOptions(launcher="anakin", num_seeds=len(seeds), resets_per_step=baseline.resets_per_step),
            progress=progress,
        )
        runs = [
            (
                one.seed,
                [(e.actor_steps, e.mean_return, e.wall_seconds) for e in one.evaluations],
                (one.actor_steps, one.learner_steps, run_result.wall_seconds),
            )
            for one in run_result.runs
        ]
    elif checkpoint_dir is not None and baseline.launcher != "local":
        raise ValueError(
            f"{agent} on {environment_id} is a distributed baseline ({baseline.launcher} launcher); checkpoint_dir "
            "resumes in-process and on-device reproductions only."
        )
    elif len(seeds) > 1:
        # One seed after another, each logging to a folder of its own (a distributed run's evaluations are read
        # back from its log folder).
        return [
            record
            for seed in seeds
            for record in reproduce_seeds(
                agent,
                environment_id,
                [seed],
                max_steps,
                runs_dir,
                progress,
                os.path.join(log_dir, f"seed{seed}") if log_dir else None,
                checkpoint_dir,
            )
        ]
    else:
        config = experiment(seeds[0])
        if baseline.launcher == "local":
            result = run(config, RunOptions(launcher="local"), progress=progress)
            evaluations = [(e.actor_steps, e.mean_return, e.wall_seconds) for e in result.evaluations]
            counts = (result.actor_steps, result.learner_steps, result.wall_seconds)
        else:
            evaluations, *counts = _run_distributed(config, baseline)
        runs = [(seeds[0], evaluations, tuple(counts))]
    records = []
    for seed, evaluations, counts in runs:
        record = make_record(agent, environment_id, seed, config.max_num_actor_steps, evaluations, *counts)
        write_record(record, runs_dir)
        records.append(record)
    return records


def _run_distributed(config, baseline: registry.Baseline) -> tuple[list, int, int, float]:
    """Runs ``config`` as a distributed program on the baseline's launcher; returns its evaluations (what its
    evaluator node handed back), actor steps, learner steps and wall seconds."""
    from acme.experiments import RunOptions, run

    options = RunOptions(launcher=baseline.launcher, num_actors=baseline.num_actors)
    result = run(config, options, progress=False)
    if not result.evaluations:
        raise RuntimeError(f"The distributed run of {baseline.agent} on {baseline.environment_id} made no evaluation.")
    evaluations = [(e.actor_steps, e.mean_return, e.wall_seconds) for e in result.evaluations]
    return evaluations, result.actor_steps, result.learner_steps, result.wall_seconds


def evaluator_rows(log_dir: str) -> list[dict]:
    """The rows of the evaluator's ``evaluator.csv`` in ``log_dir`` (none if it wrote no file)."""
    import csv

    path = os.path.join(log_dir, "evaluator.csv")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def evaluations_from_rows(rows: list[dict]) -> list[dict]:
    """The evaluations of ``evaluator.csv`` rows (those that hold one) as a run's ``result.json`` lists them:
    ``actor_steps``, ``mean_return``, ``std_return``, ``wall_seconds``, ``learner_steps`` (None where the row has
    no learner count)."""
    return [
        {
            "actor_steps": int(float(row.get("actor_steps") or 0)),
            "mean_return": float(row["evaluation_return"]),
            "std_return": float(row.get("evaluation_return_std") or 0.0),
            "wall_seconds": float(row.get("wall_seconds") or 0.0),
            "learner_steps": int(float(row["learner_steps"])) if row.get("learner_steps") else None,
        }
        for row in rows
        if row.get("evaluation_return")
    ]


def is_official_records_dir(runs_dir: str) -> bool:
    """Whether ``runs_dir`` is the published records' folder (``baselines/results/runs``)."""
    return os.path.realpath(runs_dir) == os.path.realpath(RUNS_DIR)


def check_not_shortening_official_records(baseline: registry.Baseline, max_steps: int | None, runs_dir: str) -> None:
    """Raises ``ValueError`` when a run of ``max_steps`` (below the registered budget) would write its record
    over a published one in ``runs_dir``."""
    if max_steps is not None and max_steps < baseline.max_steps and is_official_records_dir(runs_dir):
        raise ValueError(
            f"--max-steps {max_steps} is below the registered budget of {baseline.agent} on "
            f"{baseline.environment_id} ({baseline.max_steps}): its records would replace the published ones in "
            f"{RUNS_DIR}. Give --runs-dir DIR to write a shortened run elsewhere, or run the full budget."
        )


def make_record(
    agent: str,
    environment_id: str,
    seed: int,
    max_steps: int,
    evaluations: list,
    actor_steps: int,
    learner_steps: int,
    wall_seconds: float,
    source: str = "baselines reproduce",
) -> dict:
    """One run's record from its evaluations ``[(actor_steps, mean_return, wall_seconds), ...]``."""
    baseline = registry.BASELINES[(agent, environment_id)]
    first = next((e for e in evaluations if e[1] >= baseline.target_return), None)
    best = max(evaluations, key=lambda e: e[1]) if evaluations else None
    return {
        "agent": agent,
        "environment": environment_id,
        "seed": seed,
        "target_return": baseline.target_return,
        "max_steps": max_steps,
        "config_overrides": registry.registered_overrides(baseline, max_steps),  # as the run had them
        "action_space": registry.action_group(agent, environment_id),
        "reached_target": first is not None,
        "steps_to_target": first[0] if first else None,
        "seconds_to_target": round(first[2], 1) if first else None,
        "best_return": round(best[1], 2) if best else None,
        "final_return": round(evaluations[-1][1], 2) if evaluations else None,
        "actor_steps": actor_steps,
        "learner_steps": learner_steps,
        "wall_seconds": round(wall_seconds, 1),
        "curve": [[steps, round(value, 2)] for steps, value, _ in evaluations],
        "curve_seconds": [round(seconds, 1) for _, _, seconds in evaluations],
        "source": source,
        "machine": machine_description(),
        "versions": package_versions(),
        "date": datetime.date.today().isoformat(),
    }


# The packages whose versions a record notes: those that shape what a run computes and how fast.
_RECORDED_PACKAGES = ("acme-jax", "jax", "jaxlib", "numpy", "optax", "dm-haiku", "gymnasium", "dm-control", "dm-reverb")


def package_versions() -> dict[str, str]:
    """The installed versions of the packages a run's result depends on (those installed)."""
    from importlib import metadata

    versions = {"python": platform.python_version()}
    for name in _RECORDED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def machine_description() -> dict:
    """The CPU count, Python version, operating system and processor model of this machine, and the accelerator
    (``device``: jax's default device kind, e.g. "NVIDIA H200") when jax's default backend is not the CPU."""
    description = {"cpus": os.cpu_count(), "python": platform.python_version(), "system": platform.platform()}
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None)
    except OSError:
        model = None
    description["processor"] = model or platform.processor() or "unknown"
    import jax

    if jax.default_backend() != "cpu":
        description["device"] = jax.devices()[0].device_kind
    return description


def record_from_run_dir(run_dir: str, runs_dir: str = RUNS_DIR) -> dict:
    """Records a finished ``python -m baselines run`` of a registered baseline from its ``result.json``."""
    with open(os.path.join(run_dir, "result.json")) as f:
        result = json.load(f)
    evaluations = [(e["actor_steps"], e["mean_return"], e["wall_seconds"]) for e in result["evaluations"]]
    record = make_record(
        result["agent"],
        result["environment"],
        result["seed"],
        result["actor_steps"],
        evaluations,
        result["actor_steps"],
        result["learner_steps"],
        result["wall_seconds"],
        source="baselines run",
    )
    write_record(record, runs_dir)
    return record


RECORD_KEYS = frozenset({"agent", "environment", "seed"})  # what every per-seed record has (make_record)


def load_records(runs_dir: str = RUNS_DIR) -> list[dict]:
    """Every per-seed record in ``runs_dir`` (its ``*.json`` files that hold one), in file-name order. Other JSON
    files are not records: the summary ``reproduce`` writes beside the records of a ``--runs-dir`` of its own, say."""
    records = []
    for path in sorted(glob.glob(os.path.join(runs_dir, "*.json"))):
        with open(path) as f:
            record = json.load(f)
        if isinstance(record, dict) and RECORD_KEYS <= record.keys():
            records.append(record)
    return records


def records_of(agent: str, environment_id: str, runs_dir: str = RUNS_DIR) -> list[dict]:
    """The per-seed records of (agent, environment) in ``runs_dir``, by seed."""
    found = [r for r in load_records(runs_dir) if (r.get("agent"), r.get("environment")) == (agent, environment_id)]
    return sorted(found, key=lambda r: r["seed"])


def describe_records(agent: str, environment_id: str, runs_dir: str = RUNS_DIR) -> str:
    """``"seeds 0, 1, 2 recorded, 3/3 at target"``, or ``"no records"``."""
    records = records_of(agent, environment_id, runs_dir)
    if not records:
        return "no records"
    seeds = ", ".join(str(r["seed"]) for r in records)
    reached = sum(bool(r["reached_target"]) for r in records)
    return f"seeds {seeds} recorded, {reached}/{len(records)} at target"


def write_result(run_dir: str, result: dict) -> str:
    """Writes a run's ``result.json`` atomically (a reader, such as a sweep's report, never sees half of it)."""
    path = os.path.join(run_dir, "result.json")
    with open(path + ".tmp", "w") as f:
        json.dump(result, f, indent=2)
    os.replace(path + ".tmp", path)
    return path


def write_record(record: dict, runs_dir: str = RUNS_DIR) -> str:
    """Writes a run record atomically; returns its path."""
    os.makedirs(runs_dir, exist_ok=True)
    path = run_file(record["agent"], record["environment"], record["seed"], runs_dir)
    with open(path + ".tmp", "w") as f:
        json.dump(record, f, indent=2)
    os.replace(path + ".tmp", path)
    return path


def _mean_std(values: Iterable[float]) -> dict | None:
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"mean": round(float(np.mean(values)), 2), "std": round(float(np.std(values)), 2)}


def summarize(
    runs_dir: str = RUNS_DIR,
    output: str | None = None,
    agents: Iterable[str] | None = None,
    group: str | None = None,
) -> dict:
    """Groups run records by (agent, environment) with mean and spread over seeds; writes ``output``.

    ``agents`` keeps only those agents' runs, ``group`` (``"discrete"`` or ``"continuous"``) only the runs whose
    baseline acts in that action space: an agent of both (PPO) has runs in each (default: every run found).
    """
    if group not in (None, "discrete", "continuous"):
        raise ValueError(f"group must be 'discrete', 'continuous' or None, got {group!r}.")
    wanted = set(agents) if agents is not None else None
    groups: dict[tuple[str, str], list[dict]] = {}
    for record in load_records(runs_dir):
        if wanted is not None and record["agent"] not in wanted:
            continue
        pair = (record["agent"], record["environment"])
        # The record's own action space (so that a summary needs no environment library); older records: the pair's.
        if group is not None and (record.get("action_space") or registry.action_group(*pair)) != group:
            continue
        groups.setdefault(pair, []).append(record)
    summary = {"results": []}
    for (agent, environment_id), records in sorted(groups.items()):
        records.sort(key=lambda r: r["seed"])
        summary["results"].append(
            {
                "agent": agent,
                "environment": environment_id,
                "target_return": records[0]["target_return"],
                "max_steps": records[0]["max_steps"],
                "seeds": [r["seed"] for r in records],
                "seeds_reaching_target": f"{sum(r['reached_target'] for r in records)}/{len(records)}",
                "final_return": _mean_std(r["final_return"] for r in records),
                "best_return": _mean_std(r["best_return"] for r in records),
                "steps_to_target": [r["steps_to_target"] for r in records],
                "wall_seconds": [r["wall_seconds"] for r in records],
                "per_seed": {
                    str(r["seed"]): {
                        "final": r["final_return"],
                        "best": r["best_return"],
                        "wall_seconds": r["wall_seconds"],
                    }
                    for r in records
                },
            }
        )
    if output:
        with open(output + ".tmp", "w") as f:
            json.dump(summary, f, indent=2)
        os.replace(output + ".tmp", output)
    return summary


def summary_table(summary: dict) -> str:
    """A markdown table of a summary: one row per (agent, environment)."""
    lines = [
        "| agent | environment | seeds at target | final return (mean ± std) | best return (mean ± std) "
        "| steps to target | wall s per run |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in summary["results"]:
        final, best = row["final_return"] or {}, row["best_return"] or {}
        steps = ", ".join("-" if s is None else f"{s:,}" for s in row["steps_to_target"])
        wall = ", ".join(f"{w:.0f}" for w in row["wall_seconds"])
        lines.append(
            f"| {row['agent']} | {row['environment']} | {row['seeds_reaching_target']} | "
            f"{final.get('mean', float('nan')):.1f} ± {final.get('std', float('nan')):.1f} | "
            f"{best.get('mean', float('nan')):.1f} ± {best.get('std', float('nan')):.1f} | {steps} | {wall} |"
        )
    return "\n".join(lines)
