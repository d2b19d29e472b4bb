"""The GPU check (issue #48, item 5): one script, prepared once, run whenever a GPU machine is lent.

Within a deadline (default 8 minutes), on jax's default device, it measures and writes to one JSON file:

- ``ppo_scaling``: the on-device PPO (``run_anakin``'s own training chunk, no evaluation) on jax:CartPole-v1 at
  PureJaxRL's settings (``benchmarks/anakin.py``'s ``PUREJAXRL``) with 2,048, 8,192 and 65,536 environments, one
  seed; compilation timed apart;
- ``ppo_seeds``: the same with 1, 16 and 256 seeds in one vmapped call, 4 environments each (PureJaxRL's
  ``NUM_ENVS``), and 16 seeds of 2,048 environments (the wall-clock of 16 seeds against one: target <= 1.5);
- ``ppo_2048_seeds``: PureJaxRL's headline run, 2,048 seeds of PPO on CartPole at 500k steps each (976 iterations
  of 4 environments x 128 steps), wall-clock with compilation (PureJaxRL's published A100 figure: about 98 s;
  target <= 60 s and >= 1e7 environment steps/s summed). Where the whole run does not fit its share of the
  deadline, a timed chunk of it is extrapolated, and the JSON says so;
- ``purejaxrl``: PureJaxRL's own PPO in the same run, through ``benchmarks/purejaxrl_peer.py`` in a subprocess
  (``--peer-python``, by default this interpreter) on PureJaxRL's source (``--purejaxrl-source``, by default
  ``.whl/purejaxrl``, which ``benchmarks/gpu_wheels.sh`` fills, else ``make install-purejaxrl``'s
  ``.peers/purejaxrl-31756b1``), at the 2,048-seed point (50k steps each) and at 8,192 environments; where the
  peer script, the source or gymnax is missing, the section records that it is absent;
- ``minatar_ppo``: PPO on jax:MinAtar-Breakout (its registered anakin baseline's config; minibatches of 4,096 as
  there) at 1,024, 4,096 and 16,384 environments;
- ``learner_updates``: DQN's and SAC's learner updates/s (``SGDLearner``, one update per jitted call, the batch
  tiled from a sample of its own replay, as ``benchmarks/device_updates.py``) at batches 256 to 65,536 on the
  default device, against the same on one CPU core: a child process pinned to one core with single-threaded XLA
  and ``JAX_PLATFORMS=cpu``, started first and run beside the device sections on a core of its own;
- ``sebulba``: a host-loop DQN run on gymnasium:CartPole-v1 with the actors' policy on the CPU and the learner on
  the default device (``learner_sharding`` replicated on one device; ``actor_device`` left at the CPU), steps/s.

Each section is timed and guarded: one that fails records its error and the others still run. Each gets a share
of the time left (shares of sections that finish early pass on); a point that its section's time left would not
cover is skipped and marked so, as is a section with no time left. The file is rewritten after every point, and
a watchdog ends the run 30 s past the deadline with what it has.

    python benchmarks/gpu.py [--deadline 480] [--output benchmarks/results/gpu.json]
    python benchmarks/gpu.py --dry-run --output /tmp/gpu.json   # every section on the CPU at tiny sizes (seconds)

``make bench-gpu`` installs the wheels carried in ``.whl/`` and runs it on a GPU machine; ``make bench-gpu DRY=1``
runs the dry mode here.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback

# Several processes share the GPU (this one, PureJaxRL's peer): none may take 75% of its memory up front.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.anakin import PUREJAXRL  # noqa: E402
from benchmarks.common import machine  # noqa: E402
from benchmarks.device_updates import AGENTS as UPDATE_AGENTS  # noqa: E402
from benchmarks.device_updates import _tiled  # noqa: E402
from launch.config import thread_environment  # noqa: E402

# PureJaxRL's ppo.py: TOTAL_TIMESTEPS 5e5 // NUM_STEPS 128 // NUM_ENVS 4 updates, each of 4 x 128 steps per seed.
PUREJAXRL_ENVS = 4
PUREJAXRL_ITERATIONS = 500_000 // PUREJAXRL["unroll_length"] // PUREJAXRL_ENVS  # 976
PUREJAXRL_A100_SECONDS = 98.0  # the README's 2,048 seeds of CartPole PPO on one A100 (about)
TARGET_SECONDS, TARGET_STEPS_PER_SECOND = 60.0, 1e7
MINATAR_MINIBATCH = 4096  # the MinAtar PPO baseline's: 4,096 environments x 128 steps in 128 minibatches

SIZES = {
    "gpu": dict(
        scaling_envs=(2048, 8192, 65536),
        seed_points=((PUREJAXRL_ENVS, 1), (PUREJAXRL_ENVS, 16), (PUREJAXRL_ENVS, 256), (2048, 16)),
        many_seeds=2048,
        many_seeds_iterations=PUREJAXRL_ITERATIONS,
        min_seconds=2.0,
        peer_points=(
            dict(num_envs=PUREJAXRL_ENVS, num_seeds=2048, total_timesteps=50_000),
            dict(num_envs=8192, num_seeds=1, total_timesteps=8192 * 128 * 40),
        ),
        minatar_envs=(1024, 4096, 16384),
        minatar_overrides={},
        update_batches=(256, 1024, 4096, 16384, 65536),
        update_seconds=1.0,
        sebulba_steps=20_000,
        sebulba_overrides={},
        sebulba_envs=8,
        compile_guess=30.0,
    ),
    # Tiny, and shaped alike so that the CartPole points share one compiled program (seeds are vmapped all the
    # same: an axis of one; the figures of several are checked in tests/benchmarks/test_gpu_dry_run.py).
    "dry": dict(
        scaling_envs=(PUREJAXRL_ENVS,),
        seed_points=((PUREJAXRL_ENVS, 1),),
        many_seeds=1,
        many_seeds_iterations=16,
        min_seconds=0.05,
        peer_points=(dict(num_envs=PUREJAXRL_ENVS, num_seeds=1, total_timesteps=PUREJAXRL_ENVS * 128 * 2),),
        minatar_envs=(4,),
        minatar_overrides=dict(unroll_length=8, num_epochs=1),
        update_batches=(8,),
        update_seconds=0.05,
        sebulba_steps=300,
        sebulba_overrides=dict(min_replay_size=100),  # so that the learner runs
        sebulba_envs=2,
        compile_guess=5.0,
    ),
}

# Shares of the deadline; a section gets its share of the time left over the shares still to run.
SHARES = {
    "ppo_scaling": 0.13,
    "ppo_seeds": 0.13,
    "ppo_2048_seeds": 0.17,
    "purejaxrl": 0.16,
    "minatar_ppo": 0.13,
    "learner_updates": 0.16,
    "sebulba": 0.08,
}
RESERVE = 0.04  # of the deadline, kept for start-up and the last write
GRACE_SECONDS = 30.0


class Skip(Exception):
    """A point (or section) that its time left would not cover."""


class Budget:
    """Seconds left until ``end`` (``time.monotonic()``)."""

    def __init__(self, end: float):
        self.end = end

    def left(self) -> float:
        return self.end - time.monotonic()

    def need(self, seconds: float, what: str) -> None:
        """Raises ``Skip`` unless ``seconds`` more fit."""
        if seconds > self.left():
            raise Skip(f"{what} would overrun: about {seconds:.1f} s needed, {max(self.left(), 0):.1f} s left")


class Report:
    """The JSON report, rewritten whole (and atomically) after every change."""

    def __init__(self, path: str, report: dict):
        self.path, self.report, self.lock = path, report, threading.Lock()
        self.children: list[subprocess.Popen] = []

    def save(self) -> None:
        with self.lock:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            with open(self.path + ".tmp", "w") as f:
                json.dump(self.report, f, indent=2)
            os.replace(self.path + ".tmp", self.path)

    def kill_children(self) -> None:
        for child in self.children:
            if child.poll() is None:
                child.kill()


def _log(*parts) -> None:
    print(*parts, flush=True)


# ---------------------------------------------------------------------------------------------------------------
# The on-device PPO


def _anakin_agents(environment_id: str, overrides: dict, num_seeds: int):
    from acme.anakin.runner import AnakinAgents
    from acme.experiments import RunOptions
    from baselines.registry import make_experiment_config

    config = make_experiment_config("ppo", environment_id, config_overrides=overrides)
    return AnakinAgents(config, RunOptions(launcher="anakin", num_seeds=num_seeds))


def _compiled(agents, num_seeds: int):
    """The agents' first carry after one compiled chunk of one iteration, and the seconds that took (the
    initial state's compilation and the chunk's, with one iteration)."""
    import jax
    import jax.numpy as jnp

    keys = jnp.stack([jax.random.PRNGKey(s) for s in range(num_seeds)])
    start = time.perf_counter()
    carry, _ = agents.chunk(agents.init(keys, agents.swept), agents.swept, 1)
    jax.block_until_ready(carry)
    return carry, time.perf_counter() - start


def _timed(agents, carry, iterations: int):
    import jax

    start = time.perf_counter()
    carry, _ = agents.chunk(carry, agents.swept, iterations)
    jax.block_until_ready(carry)
    return carry, time.perf_counter() - start


def ppo_point(
    environment_id: str, overrides: dict, num_envs: int, num_seeds: int, min_seconds: float, budget: Budget, guess
) -> dict:
    """Steps/s (summed over seeds) of one compiled chunk timed for about ``min_seconds``, after a compilation and
    one iteration timed apart; skipped where the compilation ``guess`` and ``min_seconds`` would not fit."""
    budget.need(guess() + 2 * min_seconds, f"{num_envs} environments x {num_seeds} seeds")
    overrides = dict(overrides, batch_size=num_envs, queue_size=max(num_envs, 16))
    agents = _anakin_agents(environment_id, overrides, num_seeds)
    carry, compile_seconds = _compiled(agents, num_seeds)
    guess.seen(compile_seconds)
    carry, one = _timed(agents, carry, 1)
    iterations = max(1, math.ceil(min_seconds / max(one, 1e-6)))
    if iterations * one > budget.left():
        iterations = max(1, int(budget.left() / max(one, 1e-6)))
    carry, seconds = _timed(agents, carry, iterations)
    steps = iterations * agents.base.steps_per_iteration * num_seeds
    return {
        "num_envs": num_envs,
        "num_seeds": num_seeds,
        "compile_seconds": round(compile_seconds, 2),
        "iterations": iterations,
        "steps": steps,
        "seconds": round(seconds, 3),
        "steps_per_second": round(steps / seconds),
    }


class CompileGuess:
    """The seconds a compilation is expected to take: the longest seen so far, else a first guess."""

    def __init__(self, first: float):
        self.value, self.measured = first, False

    def __call__(self) -> float:
        return self.value

    def seen(self, seconds: float) -> None:
        self.value = seconds if not self.measured else max(self.value, seconds)
        self.measured = True


def section_ppo_scaling(sizes: dict, budget: Budget, guess: CompileGuess, out: dict) -> None:
    out["settings"] = dict(PUREJAXRL, environment="jax:CartPole-v1")
    out["points"] = points = []
    for num_envs in sizes["scaling_envs"]:
        points.append(
            _point(lambda: ppo_point("jax:CartPole-v1", PUREJAXRL, num_envs, 1, sizes["min_seconds"], budget, guess))
        )
        yield


def section_ppo_seeds(sizes: dict, budget: Budget, guess: CompileGuess, out: dict) -> None:
    out["points"] = points = []
    for num_envs, num_seeds in sizes["seed_points"]:
        points.append(
            _point(
                lambda: ppo_point(
                    "jax:CartPole-v1", PUREJAXRL, num_envs, num_seeds, sizes["min_seconds"], budget, guess
                )
            )
        )
        yield


def section_ppo_2048_seeds(sizes: dict, budget: Budget, guess: CompileGuess, out: dict) -> None:
    """PureJaxRL's 2,048 seeds x 4 environments x 976 iterations: the whole run where it fits, else a timed chunk
    extrapolated to it."""
    num_seeds, iterations = sizes["many_seeds"], sizes["many_seeds_iterations"]
    budget.need(guess() + 2 * sizes["min_seconds"], f"{num_seeds} seeds")
    overrides = dict(PUREJAXRL, batch_size=PUREJAXRL_ENVS, queue_size=16)
    agents = _anakin_agents("jax:CartPole-v1", overrides, num_seeds)
    carry, compile_seconds = _compiled(agents, num_seeds)  # includes the run's first iteration
    guess.seen(compile_seconds)
    carry, one = _timed(agents, carry, 1)
    sample = max(1, min(iterations - 1, math.ceil(sizes["min_seconds"] / max(one, 1e-6))))
    carry, sample_seconds = _timed(agents, carry, sample)
    per_iteration = sample_seconds / sample
    whole = iterations * per_iteration * 1.1 + 2.0 < budget.left()
    if whole:
        # The run from the start, as PureJaxRL times it: a fresh initial state, then every iteration in one call
        # (the chunk is compiled already; the initial state's own compilation is cached too).
        import jax
        import jax.numpy as jnp

        keys = jnp.stack([jax.random.PRNGKey(s) for s in range(num_seeds)])
        start = time.perf_counter()
        carry = agents.init(keys, agents.swept)
        carry, _ = agents.chunk(carry, agents.swept, iterations)
        jax.block_until_ready(carry)
        run_seconds = time.perf_counter() - start
    else:
        run_seconds = iterations * per_iteration
    steps_per_seed = iterations * agents.base.steps_per_iteration
    wall = compile_seconds + run_seconds
    out.update(
        {
            "num_seeds": num_seeds,
            "num_envs_per_seed": PUREJAXRL_ENVS,
            "iterations": iterations,
            "steps_per_seed": steps_per_seed,
            "compile_seconds": round(compile_seconds, 2),
            "timed_chunk": {"iterations": sample, "seconds": round(sample_seconds, 3)},
            "run_seconds": round(run_seconds, 2),
            "extrapolated": not whole,
            "how": (
                "the whole run timed (after compiling)"
                if whole
                else f"extrapolated: {iterations} iterations x the seconds per iteration of a timed chunk of {sample}; "
                "the whole run did not fit this section's share of the deadline"
            ),
            "wall_seconds_with_compile": round(wall, 2),
            "wall_note": "compile_seconds (the initial state's and the chunk's compilation, with one iteration) plus "
            "run_seconds (a fresh initial state and every iteration): one iteration and the initial state counted "
            "twice",
            "steps_per_second": round(steps_per_seed * num_seeds / run_seconds),
            "purejaxrl_a100_seconds": PUREJAXRL_A100_SECONDS,
            "target": {"wall_seconds": TARGET_SECONDS, "steps_per_second": TARGET_STEPS_PER_SECOND},
            "meets_wall_target": wall <= TARGET_SECONDS,
            "meets_steps_target": steps_per_seed * num_seeds / run_seconds >= TARGET_STEPS_PER_SECOND,
        }
    )
    yield


def section_minatar_ppo(sizes: dict, budget: Budget, guess: CompileGuess, out: dict) -> None:
    from baselines.registry import BASELINES

    baseline = dict(BASELINES[("ppo", "jax:MinAtar-Breakout")].config_overrides)
    out["baseline_config"] = baseline
    out["points"] = points = []
    minatar_guess = CompileGuess(2 * guess())
    for num_envs in sizes["minatar_envs"]:
        overrides = dict(baseline, **sizes["minatar_overrides"])
        samples = num_envs * overrides["unroll_length"]
        overrides["num_minibatches"] = max(1, samples // MINATAR_MINIBATCH)
        points.append(
            _point(
                lambda: dict(
                    ppo_point(
                        "jax:MinAtar-Breakout", overrides, num_envs, 1, sizes["min_seconds"], budget, minatar_guess
                    ),
                    num_minibatches=overrides["num_minibatches"],
                    unroll_length=overrides["unroll_length"],
                )
            )
        )
        yield


# ---------------------------------------------------------------------------------------------------------------
# PureJaxRL's PPO, same run

PEER = os.path.join(ROOT, "benchmarks", "purejaxrl_peer.py")
# Where PureJaxRL's source is looked for: what benchmarks/gpu_wheels.sh carries, then make install-purejaxrl's.
PEER_SOURCES = (os.path.join(ROOT, ".whl", "purejaxrl"), os.path.join(ROOT, ".peers", "purejaxrl-31756b1"))
PEER_PACKAGES = ("gymnax", "flax", "distrax", "optax")


def _peer_absent(source: str | None, python: str) -> str | None:
    """Why PureJaxRL's peer cannot run here, or None."""
    if not os.path.exists(PEER):
        return f"{os.path.relpath(PEER, ROOT)} does not exist"
    if source is None or not os.path.exists(os.path.join(source, "purejaxrl", "ppo.py")):
        where = source or " or ".join(os.path.relpath(s, ROOT) for s in PEER_SOURCES)
        return f"no PureJaxRL source (purejaxrl/ppo.py) in {where}: benchmarks/gpu_wheels.sh puts one in .whl/purejaxrl"
    check = f"import importlib.util as u; print(' '.join(n for n in {PEER_PACKAGES!r} if u.find_spec(n) is None))"
    found = subprocess.run([python, "-c", check], capture_output=True, text=True, cwd=ROOT)
    if found.returncode != 0:
        return f"{python} does not run: {found.stderr[-500:]}"
    if found.stdout.split():
        return f"{', '.join(found.stdout.split())} not installed for {python} (make bench-gpu installs them from .whl/)"
    return None


def section_purejaxrl(
    sizes: dict, budget: Budget, guess: CompileGuess, out: dict, report: Report, source: str | None, python: str
):
    absent = _peer_absent(source, python)
    out["peer"] = os.path.relpath(PEER, ROOT)
    out["source"] = source
    out["python"] = python
    if absent is not None:
        out["status"] = "absent"
        out["absent"] = absent
        return
    out["points"] = points = []
    peer_guess = CompileGuess(guess())  # its compilations are not ours
    for point in sizes["peer_points"]:
        points.append(_point(lambda: _peer_run(point, budget, peer_guess, report, source, python)))
        yield


def _peer_run(point: dict, budget: Budget, guess: CompileGuess, report: Report, source: str, python: str) -> dict:
    budget.need(guess() + 5.0, f"PureJaxRL at {point}")
    command = [python, PEER, "--source", source]
    for name, value in point.items():
        command += [f"--{name.replace('_', '-')}", str(value)]
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    report.children.append(child)
    try:
        stdout, stderr = child.communicate(timeout=max(budget.left(), 1.0))
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        raise Skip(f"PureJaxRL at {point} ran past this section's time and was stopped") from None
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if child.returncode != 0 or not lines:
        raise RuntimeError(f"the peer failed (exit {child.returncode}):\n{stderr[-3000:]}")
    result = json.loads(lines[-1])
    if "compile_seconds" in result:
        guess.seen(float(result["compile_seconds"]))
    return dict(point, **result)


# ---------------------------------------------------------------------------------------------------------------
# Learner updates: the default device against one CPU core


def _one_sample(agent: str):
    """A sample of ``agent``'s own replay (numpy) and the environment's spec."""
    from baselines import plan, registry

    environment = UPDATE_AGENTS[agent]
    config = registry.make_agent_config(agent, environment, {"num_sgd_steps_per_step": 1})
    return plan.one_sample(agent, environment, config)


def _learner_step(agent: str, batch: int, cache: dict):
    """A learner of ``agent`` at ``batch`` (one update per call) on jax's default device, fed one tiled batch."""
    import jax

    from acme.utils import loggers
    from baselines import registry

    environment = UPDATE_AGENTS[agent]
    if agent not in cache:
        cache[agent] = _one_sample(agent)
    sample, spec = cache[agent]
    config = registry.make_agent_config(agent, environment, {"num_sgd_steps_per_step": 1, "batch_size": batch})
    tiled = jax.device_put(_tiled(sample, batch))
    entry = registry.get_agent(agent)

    def endless():
        while True:
            yield tiled

    learner = entry.make_builder(config).make_learner(
        jax.random.PRNGKey(0),
        entry.make_networks(spec, config),
        endless(),
        lambda label, steps_key=None: loggers.NoOpLogger(),
        spec,
    )
    return learner


def updates_point(agent: str, batch: int, seconds: float, budget: Budget, estimate: dict, cache: dict) -> dict:
    """Updates/s of ``agent``'s learner at ``batch``, timed for about ``seconds`` after two warm-up updates (the
    first compiles); skipped where the estimate from the last smaller batch would not fit."""
    import jax

    if agent in estimate:  # the cost of an update grows at most linearly with the batch past the fixed part
        compile_seconds, last_batch, last_update = estimate[agent]
        per_update = last_update * max(1.0, batch / last_batch)
        budget.need(compile_seconds + 3 * per_update + seconds, f"{agent} at batch {batch}")
    learner = _learner_step(agent, batch, cache)
    start = time.perf_counter()
    learner.step()
    jax.block_until_ready(learner.state)
    compile_seconds = time.perf_counter() - start
    start = time.perf_counter()
    learner.step()
    jax.block_until_ready(learner.state)
    one = time.perf_counter() - start
    count = max(2, min(1000, math.ceil(seconds / max(one, 1e-6))))
    if count * one > budget.left():
        count = max(1, int(budget.left() / max(one, 1e-6)))
    start = time.perf_counter()
    for i in range(count):
        learner.step()
        if i % 10 == 9:
            jax.block_until_ready(learner.state)
    jax.block_until_ready(learner.state)
    elapsed = time.perf_counter() - start
    estimate[agent] = (compile_seconds, batch, elapsed / count)
    return {
        "compile_seconds": round(compile_seconds, 2),
        "updates": count,
        "seconds": round(elapsed, 3),
        "updates_per_second": round(count / elapsed, 2),
    }


def measure_updates(batches, seconds: float, budget: Budget, on_point=None, results=None, cache=None) -> dict:
    """``{agent: {batch: point}}`` on jax's default device (filled into ``results``, where given, as it goes); a
    skipped or failed point says why. ``cache``: each agent's replay sample and spec, where made already."""
    cache = {} if cache is None else cache
    estimate = {}
    results = {} if results is None else results
    results.update({agent: {} for agent in UPDATE_AGENTS})
    for batch in batches:
        for agent in UPDATE_AGENTS:
            results[agent][str(batch)] = _point(lambda: updates_point(agent, batch, seconds, budget, estimate, cache))
            if on_point is not None:
                on_point()
    return results


def cpu_core_child(batches, seconds: float, budget_seconds: float, core: int, samples: str) -> None:
    """The CPU-core figures, in a child process: pinned to ``core``, single-threaded XLA, CPU only. Writes each
    agent's replay sample to ``samples`` first (the parent's learners take the same), and prints the figures so
    far as one JSON line after every point (a child stopped early leaves what it measured)."""
    os.sched_setaffinity(0, {core})
    budget = Budget(time.monotonic() + budget_seconds)
    cache = {agent: _one_sample(agent) for agent in UPDATE_AGENTS}
    with open(samples + ".tmp", "wb") as f:
        pickle.dump(cache, f)
    os.replace(samples + ".tmp", samples)
    results = {}

    def show():
        print(json.dumps(results), flush=True)

    results.update(measure_updates(batches, seconds, budget, on_point=show, results=results, cache=cache))
    show()


def start_cpu_core(sizes: dict, seconds_left: float, report: Report, samples: str):
    """Starts the CPU-core child on the last core this process may use, and moves this process off that core
    (where there is another); returns the child and its core. Called before this process starts jax's threads."""
    cores = sorted(os.sched_getaffinity(0))
    core = cores[-1]
    if len(cores) > 1:
        os.sched_setaffinity(0, set(cores[:-1]))
    job = {
        "batches": list(sizes["update_batches"]),
        "seconds": sizes["update_seconds"],
        "budget": max(seconds_left, 1.0),
        "core": core,
        "samples": samples,
    }
    command = [sys.executable, os.path.abspath(__file__), "--cpu-core-child", json.dumps(job)]
    env = {**os.environ, **thread_environment(1), "JAX_PLATFORMS": "cpu", "PYTHONPATH": _pythonpath()}
    child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    report.children.append(child)
    return child, core


def _pythonpath() -> str:
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return os.pathsep.join(parts + ([ROOT] if ROOT not in parts else []))


def section_learner_updates(sizes: dict, budget: Budget, out: dict, report: Report, cpu_child, samples: str):
    import jax

    child, core = cpu_child
    device = jax.devices()[0]
    out["agents"] = dict(UPDATE_AGENTS)
    out["default_device"] = f"{device.platform}: {device.device_kind}"
    out["one_cpu_core"] = f"core {core}, a child process with single-threaded XLA and JAX_PLATFORMS=cpu"
    cache = {}
    if os.path.exists(samples):  # the CPU-core child's samples (this run's own folder), else made here
        with open(samples, "rb") as f:
            cache = pickle.load(f)
    out["default_device_updates"] = measure_updates(
        sizes["update_batches"], sizes["update_seconds"], budget, on_point=report.save, cache=cache
    )
    yield
    stopped = False
    try:
        stdout, stderr = child.communicate(timeout=max(budget.left(), 1.0))
    except subprocess.TimeoutExpired:
        child.kill()
        stdout, stderr = child.communicate()
        stopped = True
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if not lines:
        why = "ran past this section's time and was stopped" if stopped else f"failed:\n{stderr[-3000:]}"
        out["one_cpu_core_updates"] = {"error": f"the CPU-core child {why}"}
    else:
        out["one_cpu_core_updates"] = json.loads(lines[-1])
        if stopped:
            out["one_cpu_core_stopped"] = (
                "the CPU-core child ran past this section's time: its larger batches are missing"
            )
        elif child.returncode != 0:
            out["one_cpu_core_stopped"] = f"the CPU-core child failed after these:\n{stderr[-3000:]}"
    ratios = {}
    for agent, by_batch in out["default_device_updates"].items():
        core_points = out["one_cpu_core_updates"].get(agent, {})
        for batch, point in by_batch.items():
            theirs = core_points.get(batch, {})
            if "updates_per_second" in point and "updates_per_second" in theirs:
                ratios.setdefault(agent, {})[batch] = round(
                    point["updates_per_second"] / theirs["updates_per_second"], 2
                )
    out["default_over_one_core"] = ratios
    if device.platform == "cpu":
        out["note"] = "no accelerator: the default device is the CPU, so the ratios compare the CPU with itself"
    yield


# ---------------------------------------------------------------------------------------------------------------
# Sebulba: actors on the host, the learner on the device


def section_sebulba(sizes: dict, budget: Budget, guess: CompileGuess, out: dict, compile_cache: str) -> None:
    import jax

    from acme.experiments import RunOptions, run
    from acme.jax.sharding import LearnerSharding
    from acme.utils import loggers
    from baselines.registry import make_experiment_config

    budget.need(guess(), "the Sebulba run")
    config = make_experiment_config(
        "dqn",
        "gymnasium:CartPole-v1",
        max_steps=sizes["sebulba_steps"],
        eval_every=0,
        logger_factory=lambda label, steps_key=None: loggers.NoOpLogger(),
        config_overrides=sizes["sebulba_overrides"],
    )
    learner = LearnerSharding("replicated", devices=1)
    config = dataclasses.replace(config, learner_sharding=learner)
    options = RunOptions(launcher="local", num_envs=sizes["sebulba_envs"], compile_cache=compile_cache)
    result = run(config, options, progress=False)
    out.update(
        {
            "agent": "dqn",
            "environment": "gymnasium:CartPole-v1",
            "num_envs": sizes["sebulba_envs"],
            "learner_device": str(learner.device_list()[0]),
            "actor_device": str(jax.local_devices(backend="cpu")[0]),
            "actor_steps": result.actor_steps,
            "learner_steps": result.learner_steps,
            "wall_seconds": round(result.wall_seconds, 2),
            "steps_per_second": round(result.actor_steps / result.wall_seconds),
            "note": "one process: the actor thread's batched policy on the CPU, the learner's fused updates on the "
            "default device; wall-clock includes compilation",
        }
    )
    yield


# ---------------------------------------------------------------------------------------------------------------
# The run


def _point(measure) -> dict:
    """One point's figures, or why it was skipped or failed."""
    try:
        result = measure()
        _log(f"  {json.dumps(result)[:300]}")
        return result
    except Skip as skip:
        _log(f"  skipped: {skip}")
        return {"skipped": str(skip)}
    except Exception as error:  # noqa: BLE001 - recorded, and the next point runs
        _log(f"  failed: {error!r}")
        return {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()[-3000:]}


def _has_numbers(value) -> bool:
    if isinstance(value, dict):
        return any(_has_numbers(v) for k, v in value.items() if k not in ("skipped", "error"))
    if isinstance(value, list):
        return any(_has_numbers(v) for v in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _status(out: dict) -> str:
    """ok: every point measured; partial: some skipped or failed; skipped / error: none measured."""
    if out.get("status") in ("absent", "skipped", "error"):
        return out["status"]
    figures = {
        k: v for k, v in out.items() if k not in ("status", "budget_seconds", "seconds", "settings", "baseline_config")
    }
    text = json.dumps(figures)
    if not any(f'"{word}"' in text for word in ("skipped", "error", "one_cpu_core_stopped")):
        return "ok"
    if _has_numbers(figures):
        return "partial"
    return "error" if '"error"' in text else "skipped"


def summary_of(sections: dict) -> dict:
    def measured(points):
        return [p for p in points or [] if "steps_per_second" in p]

    summary = {}
    scaling = measured(sections["ppo_scaling"].get("points"))
    if scaling:
        best = max(scaling, key=lambda p: p["steps_per_second"])
        summary["ppo_best_steps_per_second"] = {k: best[k] for k in ("num_envs", "steps_per_second")}
    seeds = {(p["num_envs"], p["num_seeds"]): p for p in measured(sections["ppo_seeds"].get("points"))}
    ones = {p["num_envs"]: p for p in scaling}
    ones.update({n: p for (n, s), p in seeds.items() if s == 1})
    for (num_envs, num_seeds), point in seeds.items():
        if num_seeds > 1 and num_envs in ones:  # wall-clock of S seeds' steps over one seed's same steps
            ratio = num_seeds * ones[num_envs]["steps_per_second"] / point["steps_per_second"]
            summary[f"seeds_{num_seeds}_x_envs_{num_envs}_wall_over_one"] = round(ratio, 2)
    many = sections["ppo_2048_seeds"]
    if "wall_seconds_with_compile" in many:
        summary["many_seeds"] = {
            k: many[k]
            for k in (
                "num_seeds",
                "wall_seconds_with_compile",
                "steps_per_second",
                "extrapolated",
                "meets_wall_target",
                "meets_steps_target",
            )
        }
    peer = sections["purejaxrl"]
    if peer.get("status") == "absent":
        summary["purejaxrl"] = "absent: " + peer["absent"]
    elif "points" in peer:
        ours = {(p["num_envs"], p["num_seeds"]): p["steps_per_second"] for p in scaling + list(seeds.values())}
        if "steps_per_second" in many:
            ours[(PUREJAXRL_ENVS, many["num_seeds"])] = many["steps_per_second"]
        ratios = {}
        for point in measured(peer.get("points")):
            key = (point.get("num_envs"), point.get("num_seeds"))
            if key in ours and point["steps_per_second"]:
                ratios[f"envs_{key[0]}_seeds_{key[1]}"] = round(ours[key] / point["steps_per_second"], 2)
        summary["ours_over_purejaxrl"] = ratios
    minatar = measured(sections["minatar_ppo"].get("points"))
    if minatar:
        best = max(minatar, key=lambda p: p["steps_per_second"])
        summary["minatar_ppo_best_steps_per_second"] = {k: best[k] for k in ("num_envs", "steps_per_second")}
    if "default_over_one_core" in sections["learner_updates"]:
        summary["updates_default_over_one_core"] = sections["learner_updates"]["default_over_one_core"]
    if "steps_per_second" in sections["sebulba"]:
        summary["sebulba_steps_per_second"] = sections["sebulba"]["steps_per_second"]
    summary["statuses"] = {name: section.get("status") for name, section in sections.items()}
    return summary


def _package_versions() -> dict:
    from importlib import metadata

    versions = {}
    for name in ("jax", "jaxlib", "flax", "optax", "chex", "dm-haiku", "rlax", "distrax", "gymnax", "gymnasium", "pgx"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    cuda = [d.metadata["Name"] for d in metadata.distributions() if "cuda" in (d.metadata["Name"] or "").lower()]
    versions["cuda_packages"] = sorted(set(cuda))
    return versions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dry-run", action="store_true", help="every section on the CPU at tiny sizes (seconds)")
    parser.add_argument(
        "--deadline", type=float, default=None, help="seconds for the whole run (default 480; dry run 240)"
    )
    parser.add_argument("--output", default=None, help="default: benchmarks/results/gpu.json")
    parser.add_argument(
        "--purejaxrl-source",
        default=next((s for s in PEER_SOURCES if os.path.exists(os.path.join(s, "purejaxrl", "ppo.py"))), None),
        help="a folder holding PureJaxRL's purejaxrl/ppo.py (default: .whl/purejaxrl, else .peers/purejaxrl-31756b1)",
    )
    parser.add_argument(
        "--peer-python",
        default=sys.executable,
        help="the interpreter that runs PureJaxRL (default: this one; here .venv-purejaxrl/bin/python has gymnax)",
    )
    parser.add_argument("--sections", nargs="+", choices=list(SHARES), default=list(SHARES), help=argparse.SUPPRESS)
    parser.add_argument("--cpu-core-child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cpu_core_child is not None:
        job = json.loads(args.cpu_core_child)
        cpu_core_child(job["batches"], job["seconds"], job["budget"], job["core"], job["samples"])
        return
    started = time.monotonic()
    mode = "dry" if args.dry_run else "gpu"
    if args.output is None:
        if args.dry_run:
            parser.error("--dry-run writes to a path you give with --output (not over benchmarks/results/gpu.json)")
        args.output = os.path.join(ROOT, "benchmarks", "results", "gpu.json")
    deadline = args.deadline if args.deadline is not None else (240.0 if args.dry_run else 480.0)
    end = started + deadline
    sizes = SIZES[mode]
    workdir = tempfile.mkdtemp(prefix="acme-gpu-check-")  # removed at the end
    cache = None
    if args.dry_run:
        # The CPU, and one compilation for the points that share shapes (a compile cache of this run's own).
        cache = os.path.join(workdir, "compile-cache")
        os.makedirs(cache)
        # Single-threaded XLA here as in the CPU-core child, so that their learners share compiled programs too.
        os.environ.update(
            thread_environment(1),
            JAX_PLATFORMS="cpu",
            JAX_COMPILATION_CACHE_DIR=cache,
            JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
            JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0",
        )
    report = Report(
        args.output,
        {
            "benchmark": "gpu",
            "dry_run": args.dry_run,
            "deadline_seconds": deadline,
            "sizes": {k: v for k, v in sizes.items() if k != "compile_guess"},
            "sections": {name: {"status": "pending"} for name in SHARES},
        },
    )
    try:
        _run_sections(args, sizes, deadline, started, end, report, workdir, cache)
    finally:
        report.kill_children()
        shutil.rmtree(workdir, ignore_errors=True)


def _run_sections(
    args, sizes: dict, deadline: float, started: float, end: float, report: Report, workdir: str, cache
) -> None:
    cpu_child = None
    samples = os.path.join(workdir, "samples.pkl")
    if "learner_updates" in args.sections:
        # Beside the device sections, on a core of its own, until the learner-updates section collects it.
        cpu_child = start_cpu_core(sizes, deadline * 0.75, report, samples)

    import jax

    devices = jax.devices()
    report.report["machine"] = machine(
        default_device=f"{devices[0].platform}: {devices[0].device_kind}",
        platform=devices[0].platform,
        devices=[f"{d.platform}:{d.id} {d.device_kind}" for d in devices],
        cpu_devices=len(jax.devices("cpu")),
        versions=_package_versions(),
    )
    if args.dry_run:
        report.report["note"] = (
            "dry run: every section on the CPU at tiny sizes, compiled programs shared through a cache of its own "
            "where points have the same shapes; its figures check the code paths, not speed"
        )
    elif devices[0].platform == "cpu":
        report.report["note"] = "no accelerator here: every 'default device' figure is the CPU's"
    report.save()

    def watchdog() -> None:
        report.report["interrupted"] = f"stopped by the watchdog {GRACE_SECONDS:g} s past the deadline"
        report.kill_children()
        try:
            report.save()
        except Exception as error:  # noqa: BLE001 - the main thread was changing the report; its last save stands
            _log(f"the watchdog could not save the report: {error!r}")
        _log(report.report["interrupted"])
        shutil.rmtree(workdir, ignore_errors=True)
        os._exit(3)

    timer = threading.Timer(max(end - time.monotonic(), 0) + GRACE_SECONDS, watchdog)
    timer.daemon = True
    timer.start()

    guess = CompileGuess(sizes["compile_guess"])
    sections = report.report["sections"]
    makers = {
        "ppo_scaling": lambda b, o: section_ppo_scaling(sizes, b, guess, o),
        "ppo_seeds": lambda b, o: section_ppo_seeds(sizes, b, guess, o),
        "ppo_2048_seeds": lambda b, o: section_ppo_2048_seeds(sizes, b, guess, o),
        "purejaxrl": lambda b, o: section_purejaxrl(
            sizes, b, guess, o, report, args.purejaxrl_source, args.peer_python
        ),
        "minatar_ppo": lambda b, o: section_minatar_ppo(sizes, b, guess, o),
        "learner_updates": lambda b, o: section_learner_updates(sizes, b, o, report, cpu_child, samples),
        "sebulba": lambda b, o: section_sebulba(sizes, b, guess, o, cache or "off"),
    }
    names = [name for name in SHARES if name in args.sections]
    for name in SHARES:
        if name not in names:
            sections[name] = {"status": "not run", "why": "left out by --sections"}
    reserve = RESERVE * deadline
    for index, name in enumerate(names):
        shares_left = sum(SHARES[n] for n in names[index:])
        seconds = (end - reserve - time.monotonic()) * SHARES[name] / shares_left
        out = sections[name] = {"status": "running", "budget_seconds": round(max(seconds, 0.0), 1)}
        start = time.monotonic()
        _log(f"{name}: {max(seconds, 0):.0f} s")
        if seconds <= 0:
            out.update(status="skipped", skipped="no time left before the deadline")
        else:
            try:
                for _ in makers[name](Budget(start + seconds), out):
                    report.save()
            except Skip as skip:
                out.update(status="skipped", skipped=str(skip))
            except Exception as error:  # noqa: BLE001 - recorded; the other sections still run
                out.update(
                    status="error",
                    error=f"{type(error).__name__}: {error}",
                    traceback=traceback.format_exc()[-3000:],
                )
        out["seconds"] = round(time.monotonic() - start, 2)
        out["status"] = _status(out)
        _log(f"  {out['status']} in {out['seconds']} s: {json.dumps(out)[:400]}")
        report.save()
    timer.cancel()
    report.kill_children()
    report.report["summary"] = summary_of(sections)
    report.report["wall_seconds"] = round(time.monotonic() - started, 2)
    report.save()
    _log(json.dumps(report.report["summary"], indent=2))
    _log(f"Written to {args.output}")


if __name__ == "__main__":
    main()
