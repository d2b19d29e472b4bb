"""Offline baselines: datasets made by this library's own agents, and the offline agents learned from them.

    python -m baselines.offline datasets --env gymnasium:Pendulum-v1           # remakes expert, medium, medium-replay
    python -m baselines.offline reproduce --env gymnasium:Pendulum-v1 --seeds 0 1 2   # records the offline runs

For each environment a recipe trains an agent twice: to its baseline budget (the expert's snapshot) and to a
budget where its evaluation return is about half-way from a random policy's to the expert's (the medium
snapshot; the actors' transitions of that run, recorded with ``--record``, are the medium-replay dataset). Each
snapshot's greedy episodes are recorded as the expert and medium datasets. ``reproduce`` trains every offline
agent of the plan from its dataset over seeds and writes ``baselines/results/offline.json``; ``python -m
baselines report`` puts it in the results report, with the commands that remade the datasets.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import sys
import time
from typing import Sequence

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "offline.json")
DATASETS_DIR = os.path.join("runs", "datasets")
RUNS_DIR = os.path.join("runs", "offline")
EVAL_EPISODES = 10  # greedy episodes per evaluation of an offline run


@dataclasses.dataclass(frozen=True)
class Recipe:
    """How an environment's datasets are made: ``agent`` trained with ``seed`` for ``expert_steps`` (the expert)
    and ``medium_steps`` (the medium policy, whose run's actors are recorded), ``episodes`` recorded of each (with
    Gaussian action ``noise`` where given)."""

    name: str  # the datasets' directory prefix
    agent: str
    expert_steps: int
    medium_steps: int
    episodes: int = 50
    seed: int = 100
    noise: float | None = None  # Gaussian action noise of the expert's and medium policy's recorded episodes
    overrides: dict = dataclasses.field(default_factory=dict)  # config values of both trainings beyond the baseline's


@dataclasses.dataclass(frozen=True)
class Plan:
    """The offline runs of an environment: (agent, dataset) pairs, ``learner_steps`` each, config overrides for
    every agent and per agent."""

    runs: tuple[tuple[str, str], ...]
    learner_steps: int
    overrides: dict = dataclasses.field(default_factory=dict)
    agent_overrides: dict = dataclasses.field(default_factory=dict)


RECIPES = {
    # SAC's evaluation return (seed 100, every 1,000 steps) went -1372, -1471, -1073, -961, -382, -139 over the first
    # 6,000 steps and stayed near -140 after: half-way from random (about -1,300) lies between 4,000 and 5,000.
    "gymnasium:Pendulum-v1": Recipe("pendulum", "sac", expert_steps=20_000, medium_steps=4_500),
    # DQN (seed 100, every 2,500 steps): 195, 272, 230, 279, 339, ... 500 from 40,000: 250 near 5,000.
    "gymnasium:CartPole-v1": Recipe("cartpole", "dqn", expert_steps=50_000, medium_steps=5_000),
    # SAC's swingup baseline (seeds 0-2, every 10,000 steps) passed 415, half its final 825, between 40,000 and
    # 70,000 steps (50,000: 561, 442, 305); its expert is the baseline's 100,000-step run (seed 100: 704, and 347
    # at 50,000 steps). Its greedy episodes are all but identical (return std 0.4), and BC on them ended near 300
    # (seed 0, 64 and 256 units): it never saw a state off the expert's path. With noise 0.2 in the recorded
    # episodes (mean return 696) BC ended at 689 and 702. The datasets were made at half an update per step and with
    # one-step targets, the swingup baseline's settings until 2026-12-01 (it now takes one update per step and
    # three-step targets), and the recipe keeps them.
    "dm_control:cartpole/swingup": Recipe(
        "swingup",
        "sac",
        expert_steps=100_000,
        medium_steps=50_000,
        noise=0.2,
        overrides={"samples_per_insert": 128.0, "n_step": 1},
    ),
}

_CONTINUOUS = ("td3_bc", "iql", "cql")
_SMALL = {"policy_hidden_sizes": (64, 64), "critic_hidden_sizes": (64, 64)}
# Networks of 64 units: CQL's penalty evaluates the critics on 3 x 4 sampled actions per state, which at 256
# units took over 10 minutes per 30,000 updates on this machine's two cores.
_CONTINUOUS_PLAN = Plan(
    runs=(("bc", "expert"), ("bc", "medium-replay"), *((agent, "medium-replay") for agent in _CONTINUOUS)),
    learner_steps=30_000,
    overrides={"num_sgd_steps_per_step": 10},
    agent_overrides={
        "bc": {"hidden_sizes": (64, 64)},
        "td3_bc": _SMALL,
        "iql": _SMALL,
        "cql": {**_SMALL, "num_action_samples": 4},
    },
)
PLANS = {
    "gymnasium:Pendulum-v1": _CONTINUOUS_PLAN,
    "dm_control:cartpole/swingup": _CONTINUOUS_PLAN,
    "gymnasium:CartPole-v1": Plan(
        runs=(("bc", "expert"),), learner_steps=10_000, overrides={"num_sgd_steps_per_step": 10}
    ),
}


@dataclasses.dataclass(frozen=True)
class Training:
    """A run that trains ``agent`` on ``environment_id`` (from ``dataset`` where given) into the run folder
    ``run_dir``, recording its actors' transitions to ``record`` where given."""

    agent: str
    environment_id: str
    seed: int
    max_steps: int
    run_dir: str
    record: str | None = None
    dataset: str | None = None
    eval_every: int | None = None
    eval_episodes: int | None = None
    overrides: dict = dataclasses.field(default_factory=dict)

    def command(self) -> list[str]:
        """The ``python -m baselines`` arguments of the same run."""
        argv = ["run", self.agent, "--env", self.environment_id]
        argv += ["--dataset", self.dataset] if self.dataset else []
        argv += ["--seed", str(self.seed), "--max-steps", str(self.max_steps)]
        argv += ["--eval-every", str(self.eval_every)] if self.eval_every is not None else []
        argv += ["--eval-episodes", str(self.eval_episodes)] if self.eval_episodes is not None else []
        argv += ["--no-progress", "--run-dir", self.run_dir]
        argv += ["--record", self.record] if self.record else []
        for field, value in self.overrides.items():
            argv += ["--set", f"{field}={','.join(map(str, value)) if isinstance(value, tuple) else value}"]
        return argv

    def outputs(self) -> list[str]:
        return [os.path.join(self.run_dir, "policy", "manifest.json")] + _dataset_file(self.record)

    def execute(self) -> None:
        from acme.experiments import RunOptions
        from acme.utils import loggers
        from baselines import registry, run_outputs

        config = registry.make_experiment_config(
            self.agent,
            self.environment_id,
            seed=self.seed,
            max_steps=self.max_steps,
            eval_every=self.eval_every,
            num_eval_episodes=self.eval_episodes,
            logger_factory=loggers.make_logger_factory(self.run_dir),
            config_overrides=self.overrides,
        )
        options = RunOptions(launcher="local", dataset=self.dataset, record=self.record)
        description = run_outputs.RunDescription(
            self.agent, self.environment_id, config.builder.config, dataset=self.dataset
        )
        if run_outputs.run_and_write(self.run_dir, config, options, description) != 0:
            raise RuntimeError(f"python -m baselines {' '.join(self.command())} could not write its snapshot.")


@dataclasses.dataclass(frozen=True)
class Recording:
    """``episodes`` greedy episodes of the snapshot in ``run_dir`` (with Gaussian action ``noise`` where given),
    written to ``out`` as a dataset."""

    run_dir: str
    episodes: int
    out: str
    noise: float | None = None

    def command(self) -> list[str]:
        noise = ["--noise", str(self.noise)] if self.noise is not None else []
        return ["record", "--snapshot", self.run_dir, "--episodes", str(self.episodes), "--out", self.out, *noise]

    def outputs(self) -> list[str]:
        return _dataset_file(self.out)

    def execute(self) -> None:
        from baselines.record import record_episodes

        snapshot = os.path.join(self.run_dir, "policy")
        record_episodes(snapshot, self.episodes, self.out, noise=self.noise or 0.0)


def _dataset_file(directory: str | None) -> list[str]:
    return [] if directory is None else [os.path.join(directory, "data", "metadata.json")]


def dataset_steps(environment_id: str, out: str = DATASETS_DIR) -> list[Training | Recording]:
    """The steps that remake ``environment_id``'s three datasets under ``out``."""
    recipe = _recipe(environment_id)
    path = lambda name: os.path.join(out, f"{recipe.name}-{name}")  # noqa: E731
    train = functools.partial(Training, recipe.agent, environment_id, recipe.seed, overrides=recipe.overrides)
    record = functools.partial(Recording, episodes=recipe.episodes, noise=recipe.noise)
    return [
        train(recipe.expert_steps, path("expert-run")),
        record(path("expert-run"), out=path("expert")),
        train(recipe.medium_steps, path("medium-run"), record=path("medium-replay")),
        record(path("medium-run"), out=path("medium")),
    ]


def dataset_commands(environment_id: str, out: str = DATASETS_DIR) -> list[str]:
    """The commands that remake ``environment_id``'s three datasets under ``out``."""
    return ["python -m baselines " + " ".join(step.command()) for step in dataset_steps(environment_id, out)]


def _recipe(environment_id: str) -> Recipe:
    if environment_id not in RECIPES:
        raise ValueError(f"No offline recipe for {environment_id!r}; recipes: {', '.join(sorted(RECIPES))}.")
    return RECIPES[environment_id]


def make_datasets(environment_id: str, out: str = DATASETS_DIR) -> None:
    """Runs the recipe's steps, skipping those whose outputs exist (so a stopped run of it goes on)."""
    for step in dataset_steps(environment_id, out):
        command = "python -m baselines " + " ".join(step.command())
        if all(os.path.exists(path) for path in step.outputs()):
            print(f"done already: {command}", flush=True)
            continue
        print(command, flush=True)
        step.execute()


def _summary(directory: str) -> dict:
    from acme.datasets.minari_format import read_metadata

    metadata = read_metadata(directory).metadata
    return {
        "episodes": metadata["total_episodes"],
        "steps": metadata["total_steps"],
        "returns": metadata["acme_returns"],
        "agent": metadata.get("acme_agent"),
    }


def reproduce(environment_id: str, seeds: Sequence[int], datasets: str = DATASETS_DIR, output: str = RESULTS) -> dict:
    """Trains the plan's offline agents over ``seeds`` and writes their final and best returns to ``output``."""
    recipe, plan = _recipe(environment_id), PLANS[environment_id]
    record = {
        "datasets": {},
        "commands": dataset_commands(environment_id, datasets),
        "learner_steps": plan.learner_steps,
        "runs": [],
        "date": time.strftime("%Y-%m-%d"),
    }
    for name in ("expert", "medium", "medium-replay"):
        directory = os.path.join(datasets, f"{recipe.name}-{name}")
        if os.path.exists(directory):
            record["datasets"][name] = _summary(directory)
    for agent, dataset in plan.runs:
        directory = os.path.join(datasets, f"{recipe.name}-{dataset}")
        for seed in seeds:
            run_dir = os.path.join(
                RUNS_DIR, f"{agent}-{recipe.name}-{dataset}-seed{seed}-{time.strftime('%Y%m%d-%H%M%S')}"
            )
            training = Training(
                agent,
                environment_id,
                seed,
                plan.learner_steps,
                run_dir,
                dataset=directory,
                eval_every=plan.learner_steps // 10,
                eval_episodes=EVAL_EPISODES,
                overrides={**plan.overrides, **plan.agent_overrides.get(agent, {})},
            )
            print("python -m baselines " + " ".join(training.command()), flush=True)
            training.execute()
            with open(os.path.join(run_dir, "result.json")) as f:
                result = json.load(f)
            returns = [e["mean_return"] for e in result["evaluations"]]
            record["runs"].append(
                {
                    "agent": agent,
                    "dataset": dataset,
                    "seed": seed,
                    "final_return": returns[-1],
                    "best_return": max(returns),
                    "wall_seconds": result["wall_seconds"],
                }
            )
            _write_record(output, environment_id, record)  # after every run: a stopped reproduce keeps what ran
    return record


def _write_record(output: str, environment_id: str, record: dict) -> None:
    everything = {}
    if os.path.exists(output):
        with open(output) as f:
            everything = json.load(f)
    everything[environment_id] = record
    with open(output + ".tmp", "w") as f:
        json.dump(everything, f, indent=2)
    os.replace(output + ".tmp", output)


def _mean_std(values: Sequence[float]) -> str:
    import numpy as np

    return f"{np.mean(values):.1f} ± {np.std(values):.1f}"


def offline_section(path: str = RESULTS) -> str:
    """The report's offline section: each environment's datasets and the offline agents' returns over seeds."""
    if not os.path.exists(path):
        return ""
    with open(path) as f:
        everything = json.load(f)
    lines = [
        "Datasets made by this library's own agents (`python -m baselines.offline datasets`), agents trained from "
        "them with no actors (`python -m baselines.offline reproduce`); returns of the final evaluation "
        f"({EVAL_EPISODES} greedy episodes), mean ± std over seeds.",
    ]
    for environment_id, record in everything.items():
        lines.append(f"### {environment_id}")
        lines.append("| dataset | episodes | steps | mean return of its episodes |\n|---|---|---|---|")
        for name, summary in record["datasets"].items():
            returns = summary["returns"]
            lines[-1] += f"\n| {name} | {summary['episodes']} | {summary['steps']:,} | {returns['mean']:.1f} |"
        pairs = sorted({(r["agent"], r["dataset"]) for r in record["runs"]}, key=lambda p: (p[1], p[0]))
        table = f"| agent | dataset | final return ({record['learner_steps']:,} learner steps) | best | per seed |\n"
        table += "|---|---|---|---|---|"
        for agent, dataset in pairs:
            runs = [r for r in record["runs"] if (r["agent"], r["dataset"]) == (agent, dataset)]
            finals = [r["final_return"] for r in runs]
            per_seed = ", ".join(f"{r['final_return']:.1f}" for r in sorted(runs, key=lambda r: r["seed"]))
            best = _mean_std([r["best_return"] for r in runs])
            table += f"\n| {agent} | {dataset} | {_mean_std(finals)} | {best} | {per_seed} |"
        lines.append(table)
        lines.append("Remake the datasets with:\n\n```bash\n" + "\n".join(record["commands"]) + "\n```")
    return "\n\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m baselines.offline", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    datasets = commands.add_parser("datasets", help="remake an environment's expert, medium and medium-replay data")
    datasets.add_argument("--env", required=True, choices=sorted(RECIPES))
    datasets.add_argument("--out", default=DATASETS_DIR)
    runs = commands.add_parser("reproduce", help="train the offline agents from the datasets and record them")
    runs.add_argument("--env", required=True, choices=sorted(RECIPES))
    runs.add_argument("--datasets", default=DATASETS_DIR)
    runs.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    runs.add_argument("--output", default=RESULTS)
    args = parser.parse_args(argv)
    if args.command == "datasets":
        make_datasets(args.env, args.out)
    else:
        reproduce(args.env, args.seeds, args.datasets, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
