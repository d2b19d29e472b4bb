"""What one replay node costs a learner over several processes: the seconds each process waits for its share of
every batch when P processes sample one node at once. Writes ``benchmarks/results/replay_node.json``.

A learner over P processes (``--learner-processes P``) samples its batches from one replay node (``--replay
server``: ``LocalReplay`` tables behind a ``ReplayListener``, reached over authenticated direct connections);
each process asks for ``batch_size / P`` rows of every learner step (DQN on CartPole, its registered config:
64 updates of 64 rows a step, so 4,096 rows) and the group steps once every share has come. Here the node runs
in this process (pinned to core 0) with tables of ``ITEMS`` CartPole transitions (its rate limiter left out:
this measures serving, not the sampling ratio); P client processes (sharing core 1) each time ``STEPS`` calls of
DQN's own dataset iterator on their share, all at once. Reported per P: each process's seconds per step (the
slowest's bounds the group), against one process sampling the whole batch in the same run.

    .venv/bin/python benchmarks/replay_node.py
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import machine, write_report  # noqa: E402
from benchmarks.peer_protocol import SINGLE_THREAD_ENV  # noqa: E402

AGENT, ENVIRONMENT = "dqn", "gymnasium:CartPole-v1"
PROCESSES = (1, 2, 4)
ITEMS = 20_000
STEPS = 40


def _builder(rows: int):
    from baselines import registry

    config = registry.make_agent_config(AGENT, ENVIRONMENT, {})
    return registry.get_agent(AGENT).make_builder(dataclasses.replace(config, batch_size=rows))


def _client(address: list, rows: int, steps: int) -> dict:
    """One learner process's share: ``steps`` calls of DQN's dataset iterator for ``rows`` rows a batch."""
    from acme.replay.direct import RemoteTables

    os.sched_setaffinity(0, {os.cpu_count() - 1})
    client = RemoteTables((address[0], int(address[1]), bytes.fromhex(address[2])))
    iterator = _builder(rows).make_dataset_iterator(client)
    next(iterator)  # the first call connects and warms up
    start = time.perf_counter()
    for _ in range(steps):
        next(iterator)
    seconds = (time.perf_counter() - start) / steps
    client.close()
    return {"rows_per_update": rows, "seconds_per_step": seconds}


def _filled_node():
    """A ``ReplayListener`` over DQN's tables holding ``ITEMS`` transitions of a random policy, no rate limiter."""
    import jax
    import numpy as np

    from acme import specs
    from acme.replay import tables
    from acme.replay.direct import ReplayListener
    from acme.replay.local_client import LocalReplay
    from baselines import registry

    builder = _builder(64)
    environment = registry.make_agent_environment(AGENT, ENVIRONMENT, seed=0)
    spec = specs.make_environment_spec(environment)
    networks = registry.get_agent(AGENT).make_networks(spec, builder.config)
    policy = builder.make_policy(networks, spec)
    specs_ = [
        dataclasses.replace(table, rate_limiter=tables.MinSize(1)) for table in builder.make_replay_tables(spec, policy)
    ]
    replay = LocalReplay(specs_, seed=0, wait_on_insert=False)
    adder = builder.make_adder(replay, spec, policy)
    rng = np.random.default_rng(0)
    timestep = environment.reset()
    adder.add_first(timestep)
    while replay.server_info()[builder.config.replay_table_name].current_size < ITEMS:
        action = np.asarray(rng.integers(spec.actions.num_values), spec.actions.dtype)
        timestep = environment.step(action)
        adder.add(action, timestep)
        if timestep.last():
            timestep = environment.reset()
            adder.add_first(timestep)
    del jax
    return ReplayListener(replay)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=STEPS, help="learner steps' samples timed per process")
    parser.add_argument("--client", nargs=4, metavar=("HOST", "PORT", "KEY", "ROWS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        print(json.dumps(_client(args.client[:3], int(args.client[3]), args.steps)), flush=True)
        return
    os.sched_setaffinity(0, {0})
    listener = _filled_node()
    host, port, key = listener.address
    config = _builder(64).config
    whole = config.batch_size
    env = {**os.environ, **SINGLE_THREAD_ENV, "PYTHONPATH": ROOT}
    measured = {}
    for processes in PROCESSES:
        command = [sys.executable, os.path.abspath(__file__), "--steps", str(args.steps), "--client", host, str(port)]
        clients = [
            subprocess.Popen(command + [key.hex(), str(whole // processes)], env=env, stdout=subprocess.PIPE, text=True)
            for _ in range(processes)
        ]
        outputs = [client.communicate()[0] for client in clients]
        if any(client.returncode for client in clients):
            raise RuntimeError(f"a client of {processes} failed")
        rows = [json.loads(output.strip().splitlines()[-1]) for output in outputs]
        slowest = max(row["seconds_per_step"] for row in rows)
        measured[str(processes)] = {"per_process": rows, "slowest_seconds_per_step": slowest}
        print(f"{processes} process(es): {slowest * 1e3:.2f} ms a step for the slowest", flush=True)
    alone = measured["1"]["slowest_seconds_per_step"]
    for row in measured.values():
        row["against_one_process"] = row["slowest_seconds_per_step"] / alone
    listener.close()
    report = {
        "benchmark": "replay_node",
        "machine": machine(threads=SINGLE_THREAD_ENV),
        "setup": (
            f"{AGENT} on {ENVIRONMENT}, registered config: {config.num_sgd_steps_per_step} updates of "
            f"{config.batch_size} rows a learner step; the node (this process) on core 0 with {ITEMS} items; "
            "the clients together on the last core, all sampling at once"
        ),
        "results": measured,
    }
    write_report(os.path.join(ROOT, "benchmarks", "results", "replay_node.json"), report)


if __name__ == "__main__":
    main()
