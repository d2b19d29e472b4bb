"""What the environment factory's wrappers cost: wrapped against bare dm_env stepping.

``bare`` is the gymnasium environment behind only the dm_env adapter;
``wrapped`` is the same environment from ``make_environment`` (single
precision, canonical actions for continuous ones), as every agent gets it.
Both take the same pre-drawn random actions, alternating over ``--repeats``
rounds in one process; the medians and their ratio are reported.

    python benchmarks/wrapper_overhead.py --steps 20000
writes benchmarks/results/wrapper_overhead.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import gymnasium  # noqa: E402
import numpy as np  # noqa: E402

from acme import specs, wrappers  # noqa: E402
from acme.environments import make_environment  # noqa: E402

CASES = ("Pendulum-v1", "CartPole-v1")


def _actions(spec: specs.EnvironmentSpec, count: int, canonical: bool) -> list:
    rng = np.random.default_rng(0)
    action_spec = spec.actions
    if np.issubdtype(action_spec.dtype, np.integer):
        return list(rng.integers(0, action_spec.num_values, size=count).astype(action_spec.dtype))
    low, high = (-1.0, 1.0) if canonical else (action_spec.minimum, action_spec.maximum)
    return list(rng.uniform(low, high, size=(count, *action_spec.shape)).astype(np.float32))


def steps_per_second(environment, actions: list) -> float:
    timestep = environment.reset()
    start = time.perf_counter()
    for action in actions:
        if timestep.last():
            timestep = environment.reset()
        timestep = environment.step(action)
    return len(actions) / (time.perf_counter() - start)


def measure(gym_id: str, steps: int, repeats: int) -> dict:
    bare = wrappers.GymnasiumToDmEnv(gymnasium.make(gym_id), seed=0)
    wrapped = make_environment(f"gymnasium:{gym_id}", seed=0, canonical_actions=True)
    bare_actions = _actions(specs.make_environment_spec(bare), steps, canonical=False)
    wrapped_actions = _actions(specs.make_environment_spec(wrapped), steps, canonical=True)
    rates = {"bare": [], "wrapped": []}
    for _ in range(repeats):
        rates["bare"].append(steps_per_second(bare, bare_actions))
        rates["wrapped"].append(steps_per_second(wrapped, wrapped_actions))
    bare_median, wrapped_median = float(np.median(rates["bare"])), float(np.median(rates["wrapped"]))
    return {
        "environment": f"gymnasium:{gym_id}",
        "steps": steps,
        "repeats": repeats,
        "bare_steps_per_second": round(bare_median, 1),
        "wrapped_steps_per_second": round(wrapped_median, 1),
        "wrapped_to_bare": round(wrapped_median / bare_median, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20_000, help="steps per round (default 20000)")
    parser.add_argument("--repeats", type=int, default=4, help="alternating rounds (default 4)")
    parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "results", "wrapper_overhead.json"))
    args = parser.parse_args()
    if args.steps < 1 or args.repeats < 1:
        parser.error(f"--steps and --repeats must be positive integers, got {args.steps} and {args.repeats}")
    rows = [measure(gym_id, args.steps, args.repeats) for gym_id in CASES]
    for row in rows:
        print(json.dumps(row), flush=True)
    report = {"benchmark": "wrapper_overhead",
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version()}, "results": rows}
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output + ".tmp", "w") as f:
        json.dump(report, f, indent=2)
    os.replace(args.output + ".tmp", args.output)
    print(f"Written to {args.output}")


if __name__ == "__main__":
    main()
