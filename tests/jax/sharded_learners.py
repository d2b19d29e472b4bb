"""Every agent's learner under each sharding on fake CPU devices, against one device: run in a subprocess.

``python -m tests.jax.sharded_learners MODE`` (updates, layouts, sebulba, distributed) sets 8 fake CPU devices
before jax starts (a process that has started jax keeps its devices).

- ``updates`` prints one JSON line per (agent, strategy, devices): the largest difference of a float state leaf
  (parameters, optimiser state, targets) from the one-device learner's after the same updates on the same
  batches, relative to the leaf's size, and whether the integer leaves (steps, keys) are equal.
- ``layouts`` prints one JSON line per check of ``rules``, of restoring across layouts and of the refusals, with
  what it found.
- ``sebulba`` trains DQN in one process with its actor on device 0 and its learner on devices 1 and 2, and prints
  where each one's arrays were and what moving the policy from the learner's layout to the actor's device costs.
- ``distributed`` trains DQN with the same split as a distributed program on the threads launcher and prints its
  evaluations' returns.
- ``anakin`` runs the on-device loop's iterations for a transition agent (DQN, and SAC with two updates per call)
  and a rollout agent (PPO) under ``data`` and ``fsdp``, and prints how far their learner states are from the
  one-device loop's and how the environments and the learner's leaves were split; then a refusal.
"""

from __future__ import annotations

import jax

from acme.jax.cpu_devices import request_cpu_devices

request_cpu_devices(8)

import csv  # noqa: E402
import json  # noqa: E402

import numpy as np  # noqa: E402

from acme.jax.sharding import LearnerSharding, leaf_path  # noqa: E402
from acme.utils import loggers  # noqa: E402
from baselines import registry  # noqa: E402
from tests.jax.learner_batches import SMALL, after_updates, batches, compare, learner, quiet  # noqa: E402

NUM_UPDATES = 3
# Data parallel over 2 devices and both strategies over 8 (the widest split; 4 adds no case the two miss).
LAYOUTS = (("data", 8), ("fsdp", 8))
# DQN as the distributed check trains it: small, with 20-step returns (as the CartPole baseline) and a larger step.
DISTRIBUTED_DQN = dict(hidden_sizes=(16,), batch_size=16, min_replay_size=100, n_step=20, learning_rate=3e-3)


# Every learner state but the DQN family's members (C51, MDQN, QR-DQN): they are DQN's learner (acme.agents.
# q_learning) with another loss, so sharding splits the same state as DQN's.
UPDATE_AGENTS = sorted(set(SMALL) - {"c51", "mdqn", "qrdqn"})


def updates() -> None:
    for agent in UPDATE_AGENTS:
        samples = batches(agent, NUM_UPDATES)
        one = after_updates(agent, samples, None, NUM_UPDATES)
        for strategy, count in LAYOUTS:
            sharded = after_updates(agent, samples, LearnerSharding(strategy, devices=count), NUM_UPDATES)
            record = {"agent": agent, "strategy": strategy, "devices": count}
            print(json.dumps({**record, **compare(one, sharded)}), flush=True)


def _refusal(make, *args) -> str:
    try:
        learner = make(*args)
        learner.step()
    except ValueError as error:
        return str(error)
    return "accepted"


def layouts() -> None:
    samples = batches("dqn", 2)
    rules = LearnerSharding("rules", devices=8, model_axis=2, rules=((r"linear_0/w$", (None, "model")),))
    ruled = learner("dqn", samples, rules)
    ruled.step()
    specs = {}
    for path, leaf in jax.tree_util.tree_flatten_with_path(ruled.state)[0]:
        specs[leaf_path(path)] = list(leaf.sharding.spec)
    print(json.dumps({"check": "rules", "specs": specs, "mesh": dict(ruled.layout.mesh.shape)}), flush=True)

    fsdp = learner("dqn", samples, LearnerSharding("fsdp", devices=4))
    fsdp.step()
    saved = fsdp.save()
    restored = {}
    for name, sharding in (("data-8", LearnerSharding("data", devices=8)), ("one-device", None)):
        other = learner("dqn", samples, sharding)
        other.restore(saved)
        difference = max(
            float(np.max(np.abs(np.asarray(a) - np.asarray(b)), initial=0.0))
            for a, b in zip(jax.tree.leaves(saved), jax.tree.leaves(jax.device_get(other.state)))
        )
        restored[name] = difference
    sharded_leaves = sum(
        len(leaf.sharding.device_set) == 4 and not leaf.sharding.is_fully_replicated
        for leaf in jax.tree.leaves(fsdp.state)
    )
    print(json.dumps({"check": "restore", "differences": restored, "fsdp_sharded_leaves": sharded_leaves}), flush=True)

    odd = [jax.tree.map(lambda x: x[:12], sample) for sample in samples]
    refusals = {
        "batch": _refusal(learner, "dqn", odd, LearnerSharding("data", devices=8)),
        "unmatched_rule": _refusal(
            learner, "dqn", samples, LearnerSharding("rules", devices=8, rules=((r"no_such_layer", ("data",)),))
        ),
        "devices": _refusal(learner, "dqn", samples, LearnerSharding("data", devices=16)),
        "indivisible": _refusal(
            learner,
            "dqn",
            samples,
            LearnerSharding("rules", devices=8, model_axis=2, rules=((r"linear_1/w$", (None, "model")),)),
        ),
    }
    print(json.dumps({"check": "refusals", **refusals}), flush=True)


def sebulba() -> None:
    """Sebulba in one process: the actor's policy on device 0, the learner data-parallel on devices 1 and 2."""
    import dataclasses
    import time

    from acme.experiments.in_process import _InProcessRun

    config = registry.make_experiment_config(
        "dqn",
        "gymnasium:CartPole-v1",
        seed=0,
        max_steps=1_500,
        eval_every=0,
        logger_factory=quiet,
        config_overrides={"hidden_sizes": (16,), "batch_size": 16, "min_replay_size": 100, "num_sgd_steps_per_step": 1},
    )
    config = dataclasses.replace(config, learner_sharding=LearnerSharding("data", devices=(1, 2)), actor_device=0)
    run = _InProcessRun(config, "local")
    try:
        run.train(progress=False, stop_at_return=None)
    finally:
        run.close()
    placed = run.actor._select._placed_params
    actor_devices = sorted({device.id for leaf in jax.tree.leaves(placed) for device in leaf.devices()})
    learner_devices = sorted({device.id for leaf in jax.tree.leaves(run.learner.state) for device in leaf.devices()})
    params = run.learner.get_variables(["policy"])[0]
    target = jax.devices()[0]
    jax.block_until_ready(jax.device_put(params, target))
    start = time.perf_counter()
    for _ in range(50):
        jax.block_until_ready(jax.device_put(params, target))
    record = {"check": "sebulba", "actor_devices": actor_devices, "learner_devices": learner_devices}
    record.update(learner_steps=run.learner.num_steps, actor_steps=run.actor_steps)
    print(json.dumps({**record, "fetch_seconds": (time.perf_counter() - start) / 50}), flush=True)


def distributed() -> None:
    """Sebulba as a distributed program (threads launcher): the actors on device 0, the learner node data-parallel
    on devices 1 and 2, the evaluator's policy fetched from the learner's layout. 6,000 steps of DQN with 20-step
    returns, evaluated every 2,000."""
    import dataclasses
    import tempfile

    import launch
    from acme.experiments import make_distributed_experiment

    with tempfile.TemporaryDirectory() as run_dir:
        config = registry.make_experiment_config(
            "dqn",
            "gymnasium:CartPole-v1",
            seed=0,
            max_steps=6_000,
            eval_every=2_000,
            num_eval_episodes=5,
            logger_factory=loggers.make_logger_factory(run_dir, time_delta=0.0, terminal=False),
            config_overrides=DISTRIBUTED_DQN,
        )
        config = dataclasses.replace(config, learner_sharding=LearnerSharding("data", devices=(1, 2)), actor_device=0)
        program = make_distributed_experiment(config, num_actors=2, replay="learner", learner_feed="direct")
        launch.launch(program, launcher="threads", timeout=300)
        with open(f"{run_dir}/evaluator.csv") as f:
            evaluator = list(csv.DictReader(f))
    returns = [float(row["evaluation_return"]) for row in evaluator]
    record = {"check": "distributed", "evaluation_returns": returns}
    last = evaluator[-1]
    record.update(actor_steps=float(last["actor_steps"]), learner_steps=float(last.get("learner_steps") or 0))
    print(json.dumps(record), flush=True)


# A transition agent (its replay on the device, two updates per call) and a rollout agent: the loop's two data paths.
# DQN's learner under these layouts is checked in ``updates``; its replay is SAC's.
ANAKIN = {
    "sac": (
        "jax:Pendulum-v1",
        dict(
            policy_hidden_sizes=(16,),
            critic_hidden_sizes=(16,),
            batch_size=16,
            min_replay_size=32,
            samples_per_insert=4.0,
            num_sgd_steps_per_step=2,
        ),
    ),
    "ppo": (
        "jax:CartPole-v1",
        dict(hidden_sizes=(16,), unroll_length=4, batch_size=8, num_epochs=2, num_minibatches=2),
    ),
}


def anakin_agents(agent: str, sharding: LearnerSharding | None, num_envs: int = 8):
    import dataclasses

    from acme.anakin.runner import AnakinAgents
    from acme.experiments import RunOptions

    environment, overrides = ANAKIN[agent]
    config = registry.make_experiment_config(agent, environment, seed=0, max_steps=1, config_overrides=overrides)
    config = dataclasses.replace(config, learner_sharding=sharding)
    return AnakinAgents(config, RunOptions(launcher="anakin", num_envs=num_envs, num_seeds=2))


def anakin_iterations(agent: str, sharding: LearnerSharding | None, iterations: int = 12):
    agents = anakin_agents(agent, sharding)
    carry = agents.init(jax.numpy.stack([jax.random.PRNGKey(seed) for seed in agents.seeds]), agents.swept)
    carry, _ = agents.chunk(carry, agents.swept, iterations)
    return carry


def anakin() -> None:
    for agent in ANAKIN:
        one = anakin_iterations(agent, None)
        one_leaves = [np.asarray(leaf) for leaf in jax.tree.leaves(jax.device_get(one.learner))]
        for strategy, count in (("data", 2), ("fsdp", 4)):
            carry = anakin_iterations(agent, LearnerSharding(strategy, devices=count))
            leaves = [np.asarray(leaf) for leaf in jax.tree.leaves(jax.device_get(carry.learner))]
            split = [
                leaf.sharding.spec for leaf in jax.tree.leaves(carry.learner) if not leaf.sharding.is_fully_replicated
            ]
            record = {
                "check": "anakin",
                "agent": agent,
                "strategy": strategy,
                "devices": count,
                "learner_steps": np.asarray(carry.learner.steps).tolist(),
                "environment_specs": sorted(
                    {tuple(leaf.sharding.spec) for leaf in jax.tree.leaves(carry.environments)}
                ),
                "carry_devices": sorted({len(leaf.sharding.device_set) for leaf in jax.tree.leaves(carry)}),
                "learner_leaves_split": len(split),
            }
            print(json.dumps({**record, **compare(one_leaves, leaves)}), flush=True)
    try:
        anakin_agents("sac", LearnerSharding("data", devices=4), num_envs=2)
        refusal = "accepted"
    except ValueError as error:
        refusal = str(error)
    print(json.dumps({"check": "anakin_refusal", "message": refusal}), flush=True)


if __name__ == "__main__":
    import sys

    assert len(jax.devices()) == 8, jax.devices()
    modes = {"updates": updates, "layouts": layouts, "sebulba": sebulba, "distributed": distributed, "anakin": anakin}
    modes[sys.argv[1]]()
