"""Steps/s of every JAX environment library on one core, each id in a fresh process pinned to one core with
single-threaded XLA: ``num_envs`` environments vmapped, stepped by a jitted scan with uniformly random actions
(drawn inside the scan), automatic resets included, compilation timed apart; the ids of ``BOUNDED_RESETS`` again
with at most K new episode starts computed a step (``--resets-per-step K``). Each library's id is measured beside
this library's own port of the same task where there is one (``jax:CartPole-v1`` beside ``gymnax:CartPole-v1``),
as a same-run ratio.

    python benchmarks/environments.py [--core 0] [--envs 64] [--steps 1000] [--ids gymnax:CartPole-v1 ...]

writes benchmarks/results/environments.json; ``docs/environments.md`` quotes it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

from benchmarks.common import machine, pin_worker, run_worker, write_report  # noqa: E402

IDS = (
    "jax:CartPole-v1",
    "gymnax:CartPole-v1",
    "jax:Pendulum-v1",
    "gymnax:Pendulum-v1",
    "jax:MinAtar-Breakout",
    "gymnax:Breakout-MinAtar",
    "brax:inverted_pendulum",
    "brax:ant",
    "playground:CartpoleSwingup",
    "playground:CheetahRun",
    "jumanji:Snake-v1",
    "craftax:Craftax-Classic-Symbolic-v1",
    "navix:Navix-Empty-5x5-v0",
)
# Ids measured again with a bound on the episode starts computed a step (--resets-per-step on the device).
BOUNDED_RESETS = {"craftax:Craftax-Classic-Symbolic-v1": (4, 1)}
PAIRS = {"gymnax:CartPole-v1": "jax:CartPole-v1", "gymnax:Pendulum-v1": "jax:Pendulum-v1"}


def measure(environment_id: str, num_envs: int, steps: int, resets_per_step: int | None = None) -> dict:
    """Steps/s of ``num_envs`` copies of ``environment_id`` stepped ``steps`` times in one jitted scan, with at most
    ``resets_per_step`` new episode starts computed a step (``JaxEnvironment.step_batch``; default one per
    environment), and the share of starts that were copies of another's (those beyond the bound)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from acme.environments.device import make_device_environment
    from acme.environments.jax_native import LAST

    environment = make_device_environment(environment_id)
    actions = environment.spec().actions

    def act(key):
        if hasattr(actions, "num_values"):
            return jax.random.randint(key, (), 0, actions.num_values, dtype=actions.dtype)
        return jax.random.uniform(key, actions.shape, actions.dtype, actions.minimum, actions.maximum)

    def run(state, key):
        def body(state, key):
            restarts = (state.step_type == LAST).sum()
            state, timestep = environment.step_batch(
                state, jax.vmap(act)(jax.random.split(key, num_envs)), resets_per_step
            )
            copies = jnp.maximum(restarts - (resets_per_step or num_envs), 0)
            return state, (timestep.reward.sum(), restarts, copies)

        state, (rewards, restarts, copies) = jax.lax.scan(body, state, jax.random.split(key, steps))
        return state, rewards.sum(), restarts.sum(), copies.sum()

    many = jax.jit(run)
    started = time.perf_counter()
    state, _ = jax.jit(jax.vmap(environment.reset))(jax.random.split(jax.random.PRNGKey(0), num_envs))
    key = jax.random.PRNGKey(1)
    compiled = many.lower(state, key).compile()
    compile_seconds = time.perf_counter() - started
    jax.block_until_ready(compiled(state, key))  # one warm-up call
    rounds, restarts, copies, started = 0, 0, 0, time.perf_counter()
    while rounds < 2 or time.perf_counter() - started < 2.0:
        key, round_key = jax.random.split(key)
        state, total, round_restarts, round_copies = compiled(state, round_key)
        jax.block_until_ready(total)
        rounds, restarts, copies = rounds + 1, restarts + int(round_restarts), copies + int(round_copies)
    seconds = time.perf_counter() - started
    return {
        "id": environment_id,
        "num_envs": num_envs,
        "resets_per_step": resets_per_step,
        "episode_starts": restarts,
        "copied_starts": copies,
        "steps_per_second": round(rounds * steps * num_envs / seconds),
        "compile_seconds": round(compile_seconds, 1),
        "observation_shapes": jax.tree.map(lambda s: list(s.shape), environment.spec().observations),
        "finite_rewards": bool(np.isfinite(float(total.sum()))),
    }


def _run(environment_id: str, num_envs: int, steps: int, core: int, resets_per_step: int | None = None) -> dict:
    try:
        result = run_worker(__file__, [environment_id, num_envs, steps, core, resets_per_step], core)
    except RuntimeError as error:
        return {"id": environment_id, "error": str(error).splitlines()[-1][:300]}
    print(json.dumps(result), flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--core", type=int, default=0)
    parser.add_argument("--envs", type=int, default=64)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--ids", nargs="+", default=list(IDS))
    parser.add_argument("--output", default=os.path.join(ROOT, "benchmarks", "results", "environments.json"))
    args = parser.parse_args()
    if args.worker is not None:
        environment_id, num_envs, steps, core, resets_per_step = json.loads(args.worker)
        pin_worker(core)
        print(json.dumps(measure(environment_id, num_envs, steps, resets_per_step)), flush=True)
        return
    runs = [(i, None) for i in args.ids] + [(i, k) for i in args.ids for k in BOUNDED_RESETS.get(i, ())]
    results = [_run(i, args.envs, args.steps, args.core, k) for i, k in runs]
    by_id = {r["id"]: r for r in results if "steps_per_second" in r and r["resets_per_step"] is None}
    ratios = {
        f"{ours} over {theirs}": round(by_id[ours]["steps_per_second"] / by_id[theirs]["steps_per_second"], 2)
        for theirs, ours in PAIRS.items()
        if ours in by_id and theirs in by_id
    }
    report = {"machine": machine(pinned_core=args.core), "num_envs": args.envs, "steps": args.steps}
    report.update(results=results, same_run_ratios=ratios)
    write_report(args.output, report)


if __name__ == "__main__":
    main()
