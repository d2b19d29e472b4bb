"""What the pieces of one training step cost, as ratios to a reference measured in the same run.

- **actor**: DQN's exploratory actor with its adder writing into a local
  replay table (no learner), driving K = 1, 8, 32 CartPole environments
  (``EnvironmentLoop``), against raw stepping of one environment with
  pre-drawn random actions.
- **learner**: DQN updates per second (batch 64, the default network) with U =
  1, 4, 16 fused updates per call, fed from a local replay table, from an
  in-process reverb server (its ``tf.data`` pipeline), and from one fixed
  in-memory batch (the reference: no sampling at all).

Everything runs in this process, pinned to one core with single-threaded XLA,
TensorFlow and BLAS (set before jax loads); jit compilation is kept out of the
timings by warm-up calls.

    python benchmarks/components.py [--steps 5000] [--updates 1000]
writes benchmarks/results/components.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import os
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

from benchmarks.peer_protocol import SINGLE_THREAD_ENV  # noqa: E402

if __name__ == "__main__":  # before jax loads; imported by tests, the module leaves the environment alone
    os.environ.update({k: v for k, v in SINGLE_THREAD_ENV.items() if k not in os.environ})

import jax  # noqa: E402

from acme import specs  # noqa: E402
from acme.environment_loop import EnvironmentLoop  # noqa: E402
from acme.replay import tables  # noqa: E402
from acme.replay.local_client import LocalReplay  # noqa: E402
from acme.utils import counting, loggers  # noqa: E402
from baselines import arguments, registry  # noqa: E402
from benchmarks.common import machine, random_actions, steps_per_second, write_report  # noqa: E402

AGENT, ENV_ID = "dqn", "gymnasium:CartPole-v1"
QUIET = lambda label, steps_key=None: loggers.NoOpLogger()  # noqa: E731


def _parts(**overrides):
    entry = registry.get_agent(AGENT)
    config = entry.make_config(**overrides)
    environment = registry.make_agent_environment(AGENT, ENV_ID, seed=0)
    spec = specs.make_environment_spec(environment)
    return entry, config, entry.make_builder(config), entry.make_networks(spec, config), spec, environment


def _open_tables(builder, spec, policy) -> list:
    """The agent's tables with a minimum-size limiter: nothing samples while acting is timed."""
    import dataclasses

    return [dataclasses.replace(t, rate_limiter=tables.MinSize(1)) for t in builder.make_replay_tables(spec, policy)]


def _items(replay) -> int:
    return sum(info.current_size for info in replay.server_info().values())


def timed_acting(num_envs: int, steps: int) -> dict:
    """Acting with the adder into local replay, K environments: the timed run's ``steps`` as the loop counted
    them over all K, its ``seconds``, and the ``items`` its adders wrote to the table meanwhile."""
    entry, config, builder, networks, spec, _ = _parts()
    policy = builder.make_policy(networks, spec, evaluation=False)
    replay = LocalReplay(_open_tables(builder, spec, policy))
    learner = builder.make_learner(jax.random.PRNGKey(0), networks, iter(()), QUIET, spec)
    adders = [builder.make_adder(replay, spec, policy) for _ in range(num_envs)]
    actor = builder.make_actor(
        list(jax.random.split(jax.random.PRNGKey(1), num_envs)), policy, spec, variable_source=learner, adders=adders
    )
    environments = [registry.make_agent_environment(AGENT, ENV_ID, seed=i) for i in range(num_envs)]
    counter = counting.Counter()
    loop = EnvironmentLoop(environments, actor, counter=counter, logger=loggers.NoOpLogger())
    loop.run(200 * num_envs)  # compiles the policy for this K
    steps_before, items_before = counter.get_counts().get("steps", 0), _items(replay)
    start = time.perf_counter()
    loop.run(steps)
    seconds = time.perf_counter() - start
    return {
        "steps": counter.get_counts()["steps"] - steps_before,
        "seconds": seconds,
        "items": _items(replay) - items_before,
    }


def actor_steps_per_second(num_envs: int, steps: int) -> float:
    """Acting with the adder into local replay, K environments, steps counted over all K."""
    acting = timed_acting(num_envs, steps)
    return acting["steps"] / acting["seconds"]


def learner_updates_per_second(feed: str, num_updates: int, updates: int, **config_overrides) -> float:
    """Updates per second of DQN's learner with U = ``num_updates``, fed from ``feed``; ``config_overrides`` are
    DQN config fields over the defaults (a baseline's network and batch size, say)."""
    learning = timed_updates(feed, num_updates, updates, **config_overrides)
    return learning["updates"] / learning["seconds"]


def timed_updates(feed: str, num_updates: int, updates: int, **config_overrides) -> dict:
    """DQN's learner with U = ``num_updates`` fed from ``feed`` (see ``learner_updates_per_second``): the timed
    ``updates`` as its training state counted them, their ``seconds``, and the ``calls`` of ``learner.step()``."""
    if "num_sgd_steps_per_step" in config_overrides:
        raise ValueError("num_sgd_steps_per_step is num_updates here; pass it as that, not as an override.")
    entry, config, builder, networks, spec, environment = _parts(**config_overrides, num_sgd_steps_per_step=num_updates)
    policy = builder.make_policy(networks, spec, evaluation=False)
    table_specs = _open_tables(builder, spec, policy)
    stop = None
    if feed == "reverb":
        import reverb

        from acme.replay.reverb_tables import to_reverb_tables
        from launch.reverb_server import start_reverb_server

        server = start_reverb_server(to_reverb_tables(table_specs))
        client, stop = reverb.Client(f"localhost:{server.port}"), server.stop
    else:
        client = LocalReplay(table_specs)
    adder = builder.make_adder(client, spec, policy)
    actions = random_actions(spec.actions, 5_000)
    timestep = environment.reset()
    adder.add_first(timestep)
    for action in actions:  # fill the table with real transitions
        timestep = environment.step(action)
        adder.add(action, timestep)
        if timestep.last():
            timestep = environment.reset()
            adder.add_first(timestep)
    adder.close() if hasattr(adder, "close") else None
    iterator = builder.make_dataset_iterator(client)
    if feed == "fixed":
        iterator = itertools.repeat(next(iterator))
    learner = builder.make_learner(jax.random.PRNGKey(0), networks, iterator, QUIET, spec, client)
    try:
        for _ in range(3):
            learner.step()
        jax.block_until_ready(learner.state)
        calls = max(1, updates // num_updates)
        steps_before = int(learner.state.steps)
        start = time.perf_counter()
        for _ in range(calls):
            learner.step()
        jax.block_until_ready(learner.state)
        seconds = time.perf_counter() - start
        return {"updates": int(learner.state.steps) - steps_before, "seconds": seconds, "calls": calls}
    finally:
        if hasattr(iterator, "close"):
            iterator.close()
        if stop is not None:
            stop()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=arguments.positive_integer, default=5_000, help="timed acting steps per K")
    parser.add_argument(
        "--updates", type=arguments.positive_integer, default=1_000, help="timed updates per configuration"
    )
    parser.add_argument("--core", type=arguments.integer(0), default=max(os.sched_getaffinity(0)))
    parser.add_argument("--output", default=os.path.join(ROOT, "benchmarks", "results", "components.json"))
    args = parser.parse_args(argv)
    if args.steps < 1 or args.updates < 1:
        parser.error("--steps and --updates must be positive")
    os.sched_setaffinity(0, {args.core})

    _, _, _, _, spec, environment = _parts()
    raw = steps_per_second(environment, random_actions(spec.actions, args.steps))
    acting = {k: actor_steps_per_second(k, args.steps) for k in (1, 8, 32)}
    with_reverb = importlib.util.find_spec("reverb") is not None  # the core stack has no reverb: not measured
    learning = {}
    for num_updates in (1, 4, 16):
        fixed = learner_updates_per_second("fixed", num_updates, args.updates)
        local = learner_updates_per_second("local", num_updates, args.updates)
        learning[f"U={num_updates}"] = {
            "fixed_batch_updates_per_second": round(fixed, 1),
            "local_replay_updates_per_second": round(local, 1),
            "local_to_fixed": round(local / fixed, 3),
        }
        if with_reverb:
            remote = learner_updates_per_second("reverb", num_updates, args.updates)
            learning[f"U={num_updates}"].update(
                reverb_updates_per_second=round(remote, 1), reverb_to_fixed=round(remote / fixed, 3)
            )
        else:
            learning[f"U={num_updates}"]["reverb_updates_per_second"] = "not measured: reverb is not installed"
    report = {
        "benchmark": "components",
        "agent": AGENT,
        "environment": ENV_ID,
        "machine": machine(pinned_core=args.core, threads=SINGLE_THREAD_ENV, jax_backend=jax.default_backend()),
        "actor": {
            "raw_steps_per_second": round(raw, 1),
            **{f"K={k}_steps_per_second": round(v, 1) for k, v in acting.items()},
            "K=1_to_raw": round(acting[1] / raw, 3),
            "K=8_to_K=1": round(acting[8] / acting[1], 2),
            "K=32_to_K=1": round(acting[32] / acting[1], 2),
        },
        "learner": learning,
    }
    write_report(args.output, report, summary={"actor": report["actor"], "learner": learning})


if __name__ == "__main__":
    main()
