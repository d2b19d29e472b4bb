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
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import gymnasium  # noqa: E402
import numpy as np  # noqa: E402

from acme import wrappers  # noqa: E402
from acme.environments import make_environment  # noqa: E402
from baselines import arguments  # noqa: E402
from benchmarks.common import machine, random_actions, steps_per_second, write_report  # noqa: E402

CASES = ("Pendulum-v1", "CartPole-v1")


def measure(gym_id: str, steps: int, repeats: int) -> dict:
    bare = wrappers.GymnasiumToDmEnv(gymnasium.make(gym_id), seed=0)
    wrapped = make_environment(f"gymnasium:{gym_id}", seed=0, canonical_actions=True)
    bare_actions = random_actions(bare.action_spec(), steps)
    wrapped_actions = random_actions(wrapped.action_spec(), steps)  # canonical: [-1, 1]
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
    parser.add_argument(
        "--steps", type=arguments.positive_integer, default=20_000, help="steps per round (default 20000)"
    )
    parser.add_argument("--repeats", type=arguments.positive_integer, default=4, help="alternating rounds (default 4)")
    parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "results", "wrapper_overhead.json"))
    args = parser.parse_args()
    if args.steps < 1 or args.repeats < 1:
        parser.error(f"--steps and --repeats must be positive integers, got {args.steps} and {args.repeats}")
    rows = [measure(gym_id, args.steps, args.repeats) for gym_id in CASES]
    for row in rows:
        print(json.dumps(row), flush=True)
    write_report(args.output, {"benchmark": "wrapper_overhead", "machine": machine(), "results": rows})


if __name__ == "__main__":
    main()
