"""What acting costs on top of the environment: each agent's actor against raw stepping.

For each (agent, environment) the same environment is stepped three ways, in
the same process and invocation:

- ``raw``: ``environment.step`` with pre-drawn random actions (the reference);
- ``actor``: an ``EnvironmentLoop`` with the agent's exploratory actor (its
  jitted policy, parameters from a fresh learner) and no replay;
- ``actor_and_adder``: the same actor writing n-step transitions to a reverb
  table through the agent's adder, as in training (no learner steps, so the
  table's samples-per-insert limiter is replaced by a minimum size of 1).

Jit compilation is kept out of the timing by one warm-up episode. Results are
steps per second and the ratios ``actor / raw`` and ``actor_and_adder / raw``.

    python benchmarks/actor_overhead.py --steps 5000
writes benchmarks/results/actor_overhead.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import jax  # noqa: E402
import reverb  # noqa: E402

from acme import specs  # noqa: E402
from acme.environment_loop import EnvironmentLoop  # noqa: E402
from acme.replay import tables as replay_tables  # noqa: E402
from acme.replay.reverb_tables import to_reverb_tables  # noqa: E402
from acme.utils import counting, loggers  # noqa: E402
from baselines import (
    arguments,  # noqa: E402
    registry,  # noqa: E402
)
from benchmarks.common import machine, random_actions, steps_per_second, write_report  # noqa: E402
from launch.reverb_server import start_reverb_server  # noqa: E402

CASES = (
    ("dqn", "gymnasium:CartPole-v1"),
    ("sac", "gymnasium:Pendulum-v1"),
    ("td3", "gymnasium:Pendulum-v1"),
    ("d4pg", "gymnasium:Pendulum-v1"),
    ("mpo", "gymnasium:Pendulum-v1"),
    ("sac", "dm_control:cartpole/swingup"),
)


def _loop_steps_per_second(environment, actor, steps: int) -> float:
    loop = EnvironmentLoop(environment, actor, logger=loggers.NoOpLogger(), label="bench")
    loop.run_episodes(1)  # compiles the policy (and warms the adder)
    start = time.perf_counter()
    loop.run(steps)
    return steps / (time.perf_counter() - start)


def measure(agent: str, environment_id: str, steps: int) -> dict:
    entry = registry.get_agent(agent)
    baseline = registry.BASELINES.get((agent, environment_id))
    agent_config = entry.make_config(**(dict(baseline.config_overrides) if baseline else {}))
    builder = entry.make_builder(agent_config)
    environment = registry.make_agent_environment(agent, environment_id, seed=0)
    spec = specs.make_environment_spec(environment)
    networks = entry.make_networks(spec, agent_config)
    policy = builder.make_policy(networks, spec, evaluation=False)
    # The agent's tables, without their samples-per-insert limiter: nothing samples here, so it would
    # block the adder once the table holds min_replay_size items.
    tables = to_reverb_tables(
        [
            dataclasses.replace(table, rate_limiter=replay_tables.MinSize(1))
            for table in builder.make_replay_tables(spec, policy)
        ]
    )
    server = start_reverb_server(tables)  # no checkpointer, so no temporary directory left behind
    try:
        client = reverb.Client(f"localhost:{server.port}")
        learner_key, actor_key = jax.random.split(jax.random.PRNGKey(0))
        learner = builder.make_learner(
            learner_key,
            networks,
            builder.make_dataset_iterator(client),
            lambda *_: loggers.NoOpLogger(),
            spec,
            client,
            counting.Counter(),
        )
        raw = steps_per_second(environment, random_actions(spec.actions, steps))
        acting = _loop_steps_per_second(
            environment, builder.make_actor([actor_key], policy, spec, variable_source=learner), steps
        )
        adder = builder.make_adder(client, spec, policy)
        with_adder = _loop_steps_per_second(
            environment, builder.make_actor([actor_key], policy, spec, variable_source=learner, adders=[adder]), steps
        )
        items_written = sum(info.current_size for info in client.server_info().values())
    finally:
        server.stop()
        environment.close()
    return {
        "agent": agent,
        "environment": environment_id,
        "steps": steps,
        "raw_steps_per_second": round(raw, 1),
        "actor_steps_per_second": round(acting, 1),
        "actor_and_adder_steps_per_second": round(with_adder, 1),
        "items_written": int(items_written),  # by the adder, warm-up episode included
        "actor_to_raw": round(acting / raw, 3),
        "actor_and_adder_to_raw": round(with_adder / raw, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--steps", type=arguments.positive_integer, default=5_000, help="timed steps per configuration (default 5000)"
    )
    parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "results", "actor_overhead.json"))
    args = parser.parse_args()
    if args.steps < 1:
        parser.error(f"--steps must be a positive integer, got {args.steps}")
    rows = []
    for agent, environment_id in CASES:
        row = measure(agent, environment_id, args.steps)
        print(json.dumps(row), flush=True)
        rows.append(row)
    report = {
        "benchmark": "actor_overhead",
        "machine": machine(jax_backend=jax.default_backend()),
        "note": "Ratios are to raw environment stepping with random actions in the same process and run; "
        "one warm-up episode keeps jit compilation out of the timed steps.",
        "results": rows,
    }
    write_report(args.output, report)


if __name__ == "__main__":
    main()
