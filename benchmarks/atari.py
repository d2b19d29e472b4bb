"""Training and acting on Atari, on one core: DQN's training steps per second on Pong against the rate its own
costs allow, one update's time alone and inside the fused update (both convolution forms), and emulator frames per
second of DQN's actor (its Nature torso, jitted, epsilon-greedy) stepping 1,
8 and 32 games of Pong through one batched policy call per step (more than one game: together in ale-py's vector
environment, as a run with ``--num-envs K`` steps them), each transition written to local replay, against
ale-py's own C++ vector environment stepping as many games with random actions and no agent, in the same run; and
what replay holds per million transitions. Writes ``benchmarks/results/atari.json``.

Both sides run in this process, pinned to one core with single-threaded XLA and BLAS, and ale-py's vector
environment gets one thread: the figures compare work per core. A frame is one emulator frame (an agent step is
4). Replay's bytes are measured, not computed: the arrays a ``LocalReplay`` table holds after inserting
``--replay-items`` transitions, divided by the items, times a million.

Training: ``run_experiment`` trains DQN with its registered Atari settings (``registry.ATARI_CONFIG_OVERRIDES``,
``--min-replay`` transitions before learning, so the learning phase dominates a short run) for ``--train-steps``
agent steps, without evaluations, its set-up and compilation timed with it. The rate its costs allow is that of
the same steps at one acting step's time (the actor alone in one game, measured in this run) before learning, and
at one acting step plus
``updates per step`` times one update timed alone (the learner's jitted update of one batch, U = 1) after: issue
#46's target is a training rate at least 0.8 times that. The fused update (U = 64 on a ``[U, B]`` stack inside one
``lax.scan``, as ``num_sgd_steps_per_step`` runs it) is timed per update with the torsos' convolutions by strided
slices (the CPU's form) and by ``lax.conv_general_dilated``.

    .venv/bin/python benchmarks/atari.py [--envs 1 8 32] [--steps 2000] [--train-steps 20000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import machine, write_report  # noqa: E402
from benchmarks.peer_protocol import SINGLE_THREAD_ENV  # noqa: E402

if __name__ == "__main__":
    os.environ.update({k: v for k, v in SINGLE_THREAD_ENV.items() if k not in os.environ})
    os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})

import jax  # noqa: E402
import numpy as np  # noqa: E402

GAME = "Pong"
FRAMES_PER_STEP = 4


def _agent_parts(replay_items: int):
    from acme import specs
    from acme.replay.local_client import LocalReplay
    from baselines import registry

    entry = registry.get_agent("dqn")
    config = entry.make_config(max_replay_size=max(replay_items, 1_000))
    environment = registry.make_agent_environment("dqn", f"atari:{GAME}", seed=0)
    spec = specs.make_environment_spec(environment)
    builder = entry.make_builder(config)
    networks = entry.make_networks(spec, config)
    params = networks.init(jax.random.PRNGKey(0))
    policy = builder.make_policy(networks, spec)
    replay = LocalReplay(builder.make_replay_tables(spec, policy), wait_on_insert=False)
    return registry, builder, policy, spec, params, replay


class _Params:
    """A variable source that holds fixed parameters (no learner: acting alone)."""

    def __init__(self, params):
        self._params = params

    def get_variables(self, names):
        return [self._params for _ in names]


def agent_frames_per_second(num_envs: int, steps: int) -> float:
    """DQN's actor in ``num_envs`` games: emulator frames per second over ``steps`` agent steps (after warm-up)."""
    from acme.environment_loop import EnvironmentLoop
    from acme.environments import make_environment_batch
    from acme.utils import loggers

    registry, builder, policy, spec, params, replay = _agent_parts(steps + 1_000)
    if num_envs > 1:  # as a run with --num-envs K has them: stepped together in ale-py's vector environment
        environments = make_environment_batch(f"atari:{GAME}", list(range(num_envs)))
    else:
        environments = [registry.make_agent_environment("dqn", f"atari:{GAME}", seed=0)]
    adders = [builder.make_adder(replay, spec, policy) for _ in range(num_envs)]
    keys = [jax.random.PRNGKey(100 + i) for i in range(num_envs)]
    actor = builder.make_actor(keys, policy, spec, _Params(params), adders)
    loop = EnvironmentLoop(environments, actor, logger=loggers.NoOpLogger(), should_update=False)
    loop.run(max(num_envs * 10, 100))  # compiles, fills the stacks
    start = time.perf_counter()
    loop.run(steps)
    return steps * FRAMES_PER_STEP / (time.perf_counter() - start)


def vector_frames_per_second(num_envs: int, steps: int) -> float:
    """ale-py's ``AtariVectorEnv`` alone (one thread, random actions, the same preprocessing): frames per second."""
    from ale_py import AtariVectorEnv

    from acme.environments.atari import rom_id

    environment = AtariVectorEnv(rom_id(GAME), num_envs=num_envs, num_threads=1, repeat_action_probability=0.25)
    environment.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = rng.integers(0, environment.single_action_space.n, size=(steps // num_envs + 10, num_envs))
    for row in actions[:10]:
        environment.step(row)
    start = time.perf_counter()
    for row in actions[10:]:
        environment.step(row)
    elapsed = time.perf_counter() - start
    environment.close()
    return (len(actions) - 10) * num_envs * FRAMES_PER_STEP / elapsed


def replay_bytes_per_million(items: int) -> dict:
    """Inserts ``items`` transitions of Pong into DQN's replay table; the bytes its columns hold per item (the
    transition's leaves, uint8 observations, plus the key, priority and sample count of each slot)."""
    from acme.environment_loop import EnvironmentLoop
    from acme.utils import loggers

    registry, builder, policy, spec, params, replay = _agent_parts(items)
    environment = registry.make_agent_environment("dqn", f"atari:{GAME}", seed=0)
    actor = builder.make_actor(
        [jax.random.PRNGKey(0)], policy, spec, _Params(params), [builder.make_adder(replay, spec, policy)]
    )
    EnvironmentLoop(environment, actor, logger=loggers.NoOpLogger(), should_update=False).run(items + 10)
    table = replay.table(builder.config.replay_table_name)
    leaves = sum(int(np.prod(shape)) * np.dtype(dtype).itemsize for shape, dtype in table.leaf_specs)
    per_item = leaves + 8 + 8 + 4  # key, priority, times sampled
    observation = int(np.prod(spec.observations.shape)) * np.dtype(spec.observations.dtype).itemsize
    return {
        "items_inserted": len(table),
        "observation_bytes": observation,
        "bytes_per_transition": per_item,
        "gb_per_million_transitions": round(per_item * 1e6 / 1e9, 2),
    }


def seconds_per_update(fused: int, by_slices: bool, seconds: float = 5.0) -> float:
    """Seconds per update of DQN's learner (its Atari settings) on Pong, ``fused`` updates per jitted call, with the
    torsos' convolutions by strided slices or by ``lax.conv_general_dilated``."""
    from acme.jax import torsos
    from acme.utils import loggers
    from baselines import plan, registry

    overrides = {"num_sgd_steps_per_step": fused, "min_replay_size": 1_000}
    config = registry.make_agent_config("dqn", f"atari:{GAME}", overrides)
    sample, spec = plan.one_sample("dqn", f"atari:{GAME}", config)
    sample = jax.device_put(sample)
    entry = registry.get_agent("dqn")
    chosen = torsos.convolves_by_slices
    torsos.convolves_by_slices = lambda: by_slices  # read when the update is traced, below
    try:
        learner = entry.make_builder(config).make_learner(
            jax.random.PRNGKey(0),
            entry.make_networks(spec, config),
            iter(lambda: sample, None),
            lambda label, steps_key=None: loggers.NoOpLogger(),
            spec,
        )
        learner.step()  # compiles
        jax.block_until_ready(learner.state)
    finally:
        torsos.convolves_by_slices = chosen
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds or calls < 2:
        learner.step()
        jax.block_until_ready(learner.state)
        calls += 1
    return (time.perf_counter() - start) / (calls * fused)


def training_rate(steps: int, min_replay: int) -> dict:
    """DQN's training run on Pong (``steps`` agent steps, learning after ``min_replay``): its steps per second."""
    from acme.experiments import run_experiment
    from baselines import registry

    config = registry.make_experiment_config(
        "dqn",
        f"atari:{GAME}",
        max_steps=steps,
        eval_every=0,  # no evaluation: training alone is timed
        config_overrides={"min_replay_size": min_replay},
    )
    start = time.perf_counter()
    result = run_experiment(config, progress=False)
    seconds = time.perf_counter() - start  # set-up and compilation included
    return {
        "agent_steps": result.actor_steps,
        "learner_updates": result.learner_steps,
        "seconds": round(seconds, 1),
        "steps_per_second": round(result.actor_steps / seconds, 1),
    }


def training_against_costs(steps: int, min_replay: int, acting_steps: int) -> dict:
    """The training rate, and the rate one acting step's and one update's time allow for the same steps."""
    from baselines import registry

    acting = FRAMES_PER_STEP / agent_frames_per_second(1, acting_steps)  # seconds per agent step
    alone = seconds_per_update(fused=1, by_slices=True)
    fused = {form: seconds_per_update(fused=64, by_slices=form == "slices") for form in ("slices", "lax_conv")}
    overrides = registry.ATARI_CONFIG_OVERRIDES["dqn"]
    updates_per_step = overrides["samples_per_insert"] / overrides["batch_size"]
    allowed_seconds = min_replay * acting + (steps - min_replay) * (acting + updates_per_step * alone)
    trained = training_rate(steps, min_replay)
    allowed = steps / allowed_seconds
    return {
        "acting_ms_per_step": round(acting * 1e3, 3),
        "update_ms_alone": round(alone * 1e3, 2),
        "update_ms_fused_64": {form: round(seconds * 1e3, 2) for form, seconds in fused.items()},
        "updates_per_step": updates_per_step,
        "allowed_steps_per_second": round(allowed, 1),
        "training": trained,
        "training_over_allowed": round(trained["steps_per_second"] / allowed, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--steps", type=int, default=2_000, help="agent steps timed per figure")
    parser.add_argument("--replay-items", type=int, default=2_000)
    parser.add_argument("--train-steps", type=int, default=20_000, help="agent steps of the timed training run")
    parser.add_argument("--min-replay", type=int, default=5_000, help="transitions before the training run learns")
    args = parser.parse_args()
    training = training_against_costs(args.train_steps, args.min_replay, args.steps)
    print("training", training, flush=True)
    rows = {}
    for num_envs in args.envs:
        agent = agent_frames_per_second(num_envs, args.steps)
        vector = vector_frames_per_second(num_envs, args.steps)
        rows[str(num_envs)] = {
            "agent_frames_per_second": round(agent, 1),
            "ale_vector_frames_per_second": round(vector, 1),
            "agent_over_ale_vector": round(agent / vector, 3),
        }
        print(num_envs, rows[str(num_envs)], flush=True)
    report = {
        "benchmark": "atari",
        "game": GAME,
        "machine": machine(pinned_core=max(os.sched_getaffinity(0)), threads=SINGLE_THREAD_ENV),
        "training": training,
        "acting": rows,
        "replay": replay_bytes_per_million(args.replay_items),
    }
    write_report(os.path.join(ROOT, "benchmarks", "results", "atari.json"), report)


if __name__ == "__main__":
    main()
