"""The on-device loop's speed (issue #30), each figure from a process pinned to one core with single-threaded XLA.

- ``scaling``: PPO environment steps/s against the number of environments (1 to 4,096) at PureJaxRL's
  CartPole settings (128-step rollouts, 4 epochs of 4 minibatches, 64-64 tanh networks), compilation timed apart;
- ``seeds``: the same at 4 environments with 1, 4 and 16 seeds in one vmapped call (steps/s added over seeds);
- ``settings``: PPO at PureJaxRL's settings and at this library's tuned CartPole settings (8 x 32, 20 epochs);
- ``time_to_target``: wall-clock seconds from the call to the first greedy evaluation >= 475 on jax:CartPole-v1,
  compilation included, for PPO and DQN (their registered anakin baselines, evaluated on their schedule), seeds
  0-2, and whether every later evaluation held 475;
- ``host``: this library's host loop (PPO, its CartPole baseline, gymnasium:CartPole-v1) in the same run, and the
  ratio of the on-device PPO at PureJaxRL's settings to it;
- ``cache``: PPO's time to 475 (as ``time_to_target``) in a fresh process with jax's persistent compilation cache
  in an empty folder (a user's first run), then again with it filled (a second run of the same configuration);
- ``purejaxrl``: PureJaxRL's own PPO (``benchmarks/purejaxrl_peer.py``, in ``.venv-purejaxrl``, ``make
  install-purejaxrl``) on the same core: its steps/s at 4 environments (1 and 16 seeds) and its wall-clock from
  the call to the first update whose training episodes averaged 475 (seeds 0-2), and our ratios to it.

    python benchmarks/anakin.py [--quick] [--core 0] [--envs 1 4 ... 4096] [--gpu] [--peer-python PY]
writes benchmarks/results/anakin.json. ``--gpu`` leaves the accelerator on (no pinning) and measures 2,048 to
65,536 environments and 1 against 16 seeds by wall-clock.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

from benchmarks.common import machine, pin_worker, run_worker, write_report  # noqa: E402
from launch.config import thread_environment  # noqa: E402

PUREJAXRL = dict(
    unroll_length=128,
    num_epochs=4,
    num_minibatches=4,
    learning_rate=2.5e-4,
    discount=0.99,
    gae_lambda=0.95,
    entropy_coef=0.01,
    max_gradient_norm=0.5,
    normalize_advantages=True,
)


def _ppo_throughput(num_envs: int, num_seeds: int, settings: str, min_seconds: float) -> dict:
    """Steps/s of run_anakin's own training chunk (no evaluation), after a compilation timed apart."""
    import jax
    import jax.numpy as jnp

    from acme.anakin.runner import AnakinAgents
    from acme.experiments import RunOptions
    from baselines.registry import make_experiment_config

    overrides = dict(PUREJAXRL) if settings == "purejaxrl" else {}
    overrides.update(batch_size=num_envs, queue_size=max(num_envs, 16))
    config = make_experiment_config("ppo", "jax:CartPole-v1", config_overrides=overrides)
    agents = AnakinAgents(config, RunOptions(launcher="anakin", num_seeds=num_seeds))
    keys = jnp.stack([jax.random.PRNGKey(s) for s in range(num_seeds)])
    start = time.perf_counter()
    carry, _ = agents.chunk(agents.init(keys, agents.swept), agents.swept, 1)
    jax.block_until_ready(carry)
    compile_seconds = time.perf_counter() - start
    iterations = 1
    while True:
        start = time.perf_counter()
        carry, _ = agents.chunk(carry, agents.swept, iterations)
        jax.block_until_ready(carry)
        seconds = time.perf_counter() - start
        if seconds >= min_seconds:
            break
        iterations *= max(2, int(min_seconds / max(seconds, 1e-3)))
    steps = iterations * agents.base.steps_per_iteration * num_seeds
    return {
        "settings": settings,
        "num_envs": num_envs,
        "num_seeds": num_seeds,
        "compile_seconds": round(compile_seconds, 2),
        "steps": steps,
        "seconds": round(seconds, 3),
        "steps_per_second": round(steps / seconds),
    }


def _time_to_target(agent: str, seed: int, cache_dir: str = "off") -> dict:
    from acme.anakin import run_anakin
    from acme.jax import compile_cache
    from acme.utils import loggers
    from baselines.registry import BASELINES, make_experiment_config

    compile_cache.enable(cache_dir)
    baseline = BASELINES[(agent, "jax:CartPole-v1")]
    config = make_experiment_config(
        agent,
        "jax:CartPole-v1",
        seed=seed,
        max_steps=baseline.max_steps,
        eval_every=baseline.eval_every,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
    )
    result = run_anakin(config, progress=False)
    run = result.runs[0]
    first = run.first_reaching(475.0)
    after = run.evaluations[run.evaluations.index(first) :] if first else []
    return {
        "agent": agent,
        "seed": seed,
        "compile_cache": cache_dir,
        "compile_seconds": round(result.compile_seconds, 2),
        "wall_seconds": round(result.wall_seconds, 2),
        "first_at_target": None
        if first is None
        else {"step": first.actor_steps, "wall_seconds": round(first.wall_seconds, 2)},
        "held_to_the_end": bool(after) and all(e.mean_return >= 475.0 for e in after),
        "lowest_after_target": None if not after else round(min(e.mean_return for e in after), 1),
        "final_return": round(run.evaluations[-1].mean_return, 1),
    }


def _host_ppo(max_steps: int) -> dict:
    from acme.experiments import run_experiment
    from acme.utils import loggers
    from baselines.registry import make_experiment_config

    config = make_experiment_config(
        "ppo",
        "gymnasium:CartPole-v1",
        max_steps=max_steps,
        eval_every=0,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
    )
    result = run_experiment(config, progress=False)
    return {
        "environment": "gymnasium:CartPole-v1",
        "actor_steps": result.actor_steps,
        "wall_seconds": round(result.wall_seconds, 2),
        "steps_per_second": round(result.actor_steps / result.wall_seconds),
    }


TASKS = {"ppo": _ppo_throughput, "time_to_target": _time_to_target, "host_ppo": _host_ppo}


def _run(task: str, kwargs: dict, core: int | None) -> dict:
    """One measurement in a fresh process (pinned to ``core`` with single-threaded XLA unless ``core`` is None)."""
    result = run_worker(__file__, {"task": task, "kwargs": kwargs, "core": core}, core)
    print(json.dumps(result), flush=True)
    return result


PEER_PYTHON = os.path.join(ROOT, ".venv-purejaxrl", "bin", "python")
PEER_SOURCE = os.path.join(ROOT, ".peers", "purejaxrl-31756b1")


def _peer(python: str, core: int | None, **flags) -> dict:
    """One PureJaxRL run (``purejaxrl_peer.py``) in a fresh process of the peer's interpreter."""
    env = dict(os.environ)
    command = [python, os.path.join(ROOT, "benchmarks", "purejaxrl_peer.py"), "--source", PEER_SOURCE]
    if core is not None:
        env.update(thread_environment(1))
        command += ["--core", str(core)]
    for name, value in flags.items():
        command += [f"--{name.replace('_', '-')}", str(value)]
    out = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"PureJaxRL {flags} failed:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    print(json.dumps(result), flush=True)
    return result


def _median(values: list) -> float | None:
    values = sorted(v for v in values if v is not None)
    return (
        None
        if not values
        else values[len(values) // 2]
        if len(values) % 2
        else sum(values[len(values) // 2 - 1 : len(values) // 2 + 1]) / 2
    )


def _peer_ratios(report: dict) -> dict:
    """Ours over PureJaxRL's, same run, same core: throughput (> 1 is faster) and seconds to 475 (< 1 is sooner)."""
    peer = report["purejaxrl"]
    ours_cold = [r["first_at_target"] and r["first_at_target"]["wall_seconds"] for r in report["cache"]["first"]]
    ours_warm = [r["first_at_target"] and r["first_at_target"]["wall_seconds"] for r in report["cache"]["second"]]
    theirs = [
        r["seeds"][0]["first_at_target"] and r["seeds"][0]["first_at_target"]["wall_seconds"]
        for r in peer["time_to_target"]
    ]
    one = next(r for r in report["seeds"] if r["num_seeds"] == 1)
    sixteen = next(r for r in report["seeds"] if r["num_seeds"] == 16)
    return {
        "throughput_over_purejaxrl": round(one["steps_per_second"] / peer["one_seed"]["steps_per_second"], 2),
        "sixteen_seeds_over_purejaxrl": round(
            sixteen["steps_per_second"] / peer["sixteen_seeds"]["steps_per_second"], 2
        ),
        "purejaxrl_seconds_to_475": theirs,
        "ppo_seconds_to_475_first_call": ours_cold,
        "ppo_seconds_to_475_cache_warm": ours_warm,
        "first_call_over_purejaxrl": _ratio(_median(ours_cold), _median(theirs)),
        "cache_warm_over_purejaxrl": _ratio(_median(ours_warm), _median(theirs)),
    }


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else round(a / b, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--core", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="fewer points and shorter timings (a smoke run)")
    parser.add_argument("--gpu", action="store_true", help="on an accelerator: no pinning, 2,048 to 65,536 envs")
    parser.add_argument("--envs", type=int, nargs="+", default=None)
    parser.add_argument("--output", default=os.path.join(ROOT, "benchmarks", "results", "anakin.json"))
    parser.add_argument(
        "--peer-python",
        default=PEER_PYTHON if os.path.exists(PEER_PYTHON) else None,
        help="the interpreter of PureJaxRL's venv (default: .venv-purejaxrl's, where make install-purejaxrl made it)",
    )
    args = parser.parse_args()
    if args.worker is not None:
        job = json.loads(args.worker)
        pin_worker(job["core"])
        print(json.dumps(TASKS[job["task"]](**job["kwargs"])), flush=True)
        return
    core = None if args.gpu else args.core
    seconds = 0.5 if args.quick else 2.0
    if args.gpu:
        envs = args.envs or [2048, 8192, 32768, 65536]
    else:
        envs = args.envs or ([1, 16, 256] if args.quick else [1, 4, 16, 64, 256, 1024, 4096])
    report = {"machine": machine(pinned_core=core, gpu=args.gpu), "purejaxrl_settings": PUREJAXRL}
    report["scaling"] = [
        _run("ppo", dict(num_envs=n, num_seeds=1, settings="purejaxrl", min_seconds=seconds), core) for n in envs
    ]
    seed_envs = envs[0] if args.gpu else 4
    report["seeds"] = [
        _run("ppo", dict(num_envs=seed_envs, num_seeds=s, settings="purejaxrl", min_seconds=seconds), core)
        for s in (1, 4, 16)
    ]
    report["settings"] = [
        _run("ppo", dict(num_envs=n, num_seeds=1, settings=s, min_seconds=seconds), core)
        for s, n in (("purejaxrl", 4), ("tuned", 8))
    ]
    if not args.gpu:
        report["time_to_target"] = [
            _run("time_to_target", dict(agent=a, seed=s), core) for a in ("ppo", "dqn") for s in (0, 1, 2)
        ]
        report["host"] = _run("host_ppo", dict(max_steps=10_000 if args.quick else 30_000), core)
        report["cache"] = {"first": [], "second": []}
        for seed in (0, 1, 2):  # each seed: an empty cache folder (a user's first run), then the same folder again
            cache_dir = tempfile.mkdtemp(prefix="anakin-compile-cache-")
            for round_name in ("first", "second"):
                task = dict(agent="ppo", seed=seed, cache_dir=cache_dir)
                report["cache"][round_name].append(_run("time_to_target", task, core))
            shutil.rmtree(cache_dir, ignore_errors=True)
    if args.peer_python and not args.gpu:
        report["purejaxrl"] = {
            "one_seed": _peer(args.peer_python, core, num_envs=4, num_seeds=1),
            "sixteen_seeds": _peer(args.peer_python, core, num_envs=4, num_seeds=16, total_timesteps=100_000),
            "time_to_target": [_peer(args.peer_python, core, num_envs=4, seed=s) for s in (0, 1, 2)],
        }
    one, sixteen = report["seeds"][0], report["seeds"][-1]
    summary = {
        "ppo_purejaxrl_steps_per_second": report["settings"][0]["steps_per_second"],
        "ppo_tuned_steps_per_second": report["settings"][1]["steps_per_second"],
        "best_scaling": max(report["scaling"], key=lambda r: r["steps_per_second"]),
        "sixteen_seeds_over_one": round(sixteen["steps_per_second"] / one["steps_per_second"], 2),
        # The wall-clock of 16 seeds' steps against one seed's same steps (GPU target: <= 1.5).
        "sixteen_seeds_wall_over_one": round((16 * one["steps_per_second"]) / sixteen["steps_per_second"], 2),
    }
    if "host" in report:
        summary["host_ppo_steps_per_second"] = report["host"]["steps_per_second"]
        summary["anakin_over_host"] = round(
            summary["ppo_purejaxrl_steps_per_second"] / report["host"]["steps_per_second"], 1
        )
        for agent in ("ppo", "dqn"):
            runs = [r for r in report["time_to_target"] if r["agent"] == agent]
            summary[f"{agent}_seconds_to_475"] = [
                r["first_at_target"] and r["first_at_target"]["wall_seconds"] for r in runs
            ]
            summary[f"{agent}_held_to_the_end"] = [r["held_to_the_end"] for r in runs]
    if "purejaxrl" in report:
        summary.update(_peer_ratios(report))
    report["summary"] = summary
    write_report(args.output, report, summary)


if __name__ == "__main__":
    main()
