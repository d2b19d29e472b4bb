"""The peer protocol of issue #14: the figures SBX, Stable-Baselines3 and dm-acme were measured with.

- DQN on ``gymnasium:CartPole-v1``: 50,000 steps, an evaluation (10 greedy episodes) every 5,000;
  target 475.
- SAC on ``gymnasium:Pendulum-v1``: 20,000 steps, an evaluation every 2,000; target -200.

Default configs, seeds 0-2, each run in its own process pinned to one core
(``os.sched_setaffinity`` and single-threaded XLA, TensorFlow and BLAS), one
after another. Per run: training steps per second over the whole run
(evaluation time included, as the peers were measured), wall-clock seconds to
the first evaluation at the target, and the final evaluation.

    python benchmarks/peer_protocol.py [--agents dqn sac] [--seeds 0 1 2] [--replay local]
                                       [--peer-python .venv-peers/bin/python]
writes benchmarks/results/peer_protocol.json.

With ``--peer-python`` (an interpreter with SBX: ``make install-peers``), SBX
runs the same protocol after each of our runs, on the same core, and the
summary gives our figures as ratios to SBX's from this run, which hold across
hosts where absolute steps/s do not (the same code measured 862 and 1,629
DQN steps/s on two hosts a day apart).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

from baselines import arguments  # noqa: E402
from benchmarks.common import machine, write_report  # noqa: E402
from launch.config import thread_environment  # noqa: E402

PROTOCOL = {
    "dqn": {"environment": "gymnasium:CartPole-v1", "max_steps": 50_000, "eval_every": 5_000, "target": 475.0},
    "sac": {"environment": "gymnasium:Pendulum-v1", "max_steps": 20_000, "eval_every": 2_000, "target": -200.0},
}
PEERS = {  # issue #14, measured on the host of that day pinned to one core (training steps/s incl. evaluation)
    "dqn": {"SBX 0.28": 1766, "dm-acme 0.4": 277},
    "sac": {"SBX 0.28": 92},
}
SINGLE_THREAD_ENV = thread_environment(1)


def run_one(agent: str, seed: int, replay: str, max_steps: int | None, core: int) -> dict:
    """One run in this process, pinned to ``core``; returns its figures."""
    os.sched_setaffinity(0, {core})
    from acme.experiments import run_experiment
    from acme.utils import loggers
    from baselines.registry import make_experiment_config

    protocol = PROTOCOL[agent]
    config = make_experiment_config(
        agent,
        protocol["environment"],
        seed=seed,
        max_steps=protocol["max_steps"] if max_steps is None else max_steps,
        eval_every=protocol["eval_every"],
        num_eval_episodes=10,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
    )
    result = run_experiment(config, progress=False, replay=replay)
    first = result.first_reaching(protocol["target"])
    return {
        "agent": agent,
        "seed": seed,
        "replay": replay,
        "actor_steps": result.actor_steps,
        "learner_steps": result.learner_steps,
        "wall_seconds": round(result.wall_seconds, 2),
        "training_steps_per_second": round(result.actor_steps / result.wall_seconds, 1),
        "first_at_target": None
        if first is None
        else {"step": first.actor_steps, "wall_seconds": round(first.wall_seconds, 2)},
        "final_return": round(result.evaluations[-1].mean_return, 1) if result.evaluations else None,
        "curve": [[e.actor_steps, round(e.mean_return, 1)] for e in result.evaluations],
    }


def _child(args: argparse.Namespace) -> dict:
    command = [
        sys.executable,
        os.path.abspath(__file__),
        "--child",
        args.agents[0],
        str(args.seeds[0]),
        "--replay",
        args.replay,
        "--core",
        str(args.core),
    ]
    if args.max_steps is not None:
        command += ["--max-steps", str(args.max_steps)]
    return _last_json_line(command, {"PYTHONPATH": ROOT}, f"run {args.agents[0]} seed {args.seeds[0]}")


def _peer(args: argparse.Namespace, agent: str, seed: int) -> dict:
    """SBX's run of the protocol for (agent, seed), in ``args.peer_python``, pinned to the same core."""
    protocol = PROTOCOL[agent]
    steps = protocol["max_steps"] if args.max_steps is None else args.max_steps
    command = [
        args.peer_python,
        os.path.join(ROOT, "benchmarks", "sbx_peer.py"),
        agent,
        str(seed),
        str(steps),
        str(protocol["eval_every"]),
        str(args.core),
    ]
    return _last_json_line(command, {}, f"SBX run {agent} seed {seed}")


def _last_json_line(command: list[str], extra_env: dict, what: str) -> dict:
    """Runs ``command`` single-threaded (plus ``extra_env``) and returns the last JSON line it printed."""
    completed = subprocess.run(
        command, env={**os.environ, **SINGLE_THREAD_ENV, **extra_env}, capture_output=True, text=True, check=False
    )
    lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
    if completed.returncode != 0 or not lines:
        raise RuntimeError(f"{what} failed:\n{completed.stderr[-3000:]}")
    return json.loads(lines[-1])


def _figures(mine: list[dict], target: float) -> dict:
    import numpy as np

    reached = [r["first_at_target"]["wall_seconds"] for r in mine if r["first_at_target"]]
    return {
        "median_training_steps_per_second": float(np.median([r["training_steps_per_second"] for r in mine])),
        "median_seconds_to_target": float(np.median(reached)) if reached else None,
        "seeds_reaching_target": f"{len(reached)}/{len(mine)}",
        "final_returns": [r["final_return"] for r in mine],
        "seeds_final_at_target": sum(r["final_return"] is not None and r["final_return"] >= target for r in mine),
    }


def summarise(runs: list[dict], peer_runs: list[dict] | None = None) -> dict:
    """Per agent: median steps/s, median seconds to the target, finals, how many seeds reached it, and
    (with ``peer_runs``) SBX's figures from the same run and our steps/s as a ratio to SBX's."""
    summary = {}
    for agent in sorted({r["agent"] for r in runs}):
        mine = [r for r in runs if r["agent"] == agent]
        summary[agent] = {
            **_figures(mine, PROTOCOL[agent]["target"]),
            "peers_training_steps_per_second": PEERS.get(agent, {}),
        }
        theirs = [r for r in peer_runs or [] if r["agent"] == agent]
        if theirs:
            peer = _figures(theirs, PROTOCOL[agent]["target"])
            summary[agent]["sbx_this_run"] = {"library": theirs[0]["library"], **peer}
            summary[agent]["steps_per_second_ratio_to_sbx"] = round(
                summary[agent]["median_training_steps_per_second"] / peer["median_training_steps_per_second"], 3
            )
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", nargs="+", choices=sorted(PROTOCOL), default=sorted(PROTOCOL))
    parser.add_argument("--seeds", type=arguments.seed, nargs="+", default=[0, 1, 2])
    parser.add_argument("--replay", choices=("local", "reverb"), default="local")
    parser.add_argument(
        "--max-steps", type=arguments.positive_integer, default=None, help="shorten every run (smoke tests only)"
    )
    parser.add_argument(
        "--core", type=arguments.integer(0), default=max(os.sched_getaffinity(0)), help="the core to pin runs to"
    )
    parser.add_argument(
        "--peer-python",
        default=None,
        help="an interpreter with SBX (make install-peers): run SBX's protocol too, for ratios",
    )
    parser.add_argument("--output", default=os.path.join(ROOT, "benchmarks", "results", "peer_protocol.json"))
    parser.add_argument("--child", nargs=2, metavar=("AGENT", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(
            json.dumps(run_one(args.child[0], int(args.child[1]), args.replay, args.max_steps, args.core)), flush=True
        )
        return
    if args.peer_python is not None and not os.access(args.peer_python, os.X_OK):
        parser.error(
            f"--peer-python {args.peer_python!r} is not an executable (make install-peers creates "
            ".venv-peers/bin/python)."
        )
    runs, peer_runs = [], []
    for agent in args.agents:
        for seed in args.seeds:
            one = argparse.Namespace(**{**vars(args), "agents": [agent], "seeds": [seed]})
            runs.append(_child(one))
            print(json.dumps({k: v for k, v in runs[-1].items() if k != "curve"}), flush=True)
            if args.peer_python is not None:
                peer_runs.append(_peer(args, agent, seed))
                print(json.dumps({k: v for k, v in peer_runs[-1].items() if k != "curve"}), flush=True)
    report = {
        "benchmark": "peer_protocol",
        "protocol": PROTOCOL,
        "replay": args.replay,
        "max_steps_override": args.max_steps,
        "machine": machine(pinned_core=args.core, threads=SINGLE_THREAD_ENV),
        "summary": summarise(runs, peer_runs),
        "runs": runs,
        "sbx_runs": peer_runs,
    }
    write_report(args.output, report, summary=report["summary"])


if __name__ == "__main__":
    main()
