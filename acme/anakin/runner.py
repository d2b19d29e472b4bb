"""``run_anakin``: an experiment trained with the whole loop on the device, and the run around it on the host.

The host only hands out work in chunks: one jitted call trains every agent for
the iterations up to the next evaluation (a ``fori_loop`` of
``AnakinAgent.iterate``, vmapped over the agents where there are several), a
second runs the greedy evaluation episodes of every agent (vmapped over the
episodes, and the agents), and between the two the host logs (``learner`` and
``evaluator`` CSV rows, one per agent), advances the progress bar and
checkpoints. Both calls compile once.

Agents (``RunOptions``): ``num_seeds`` seeds (``config.seed``, ``config.seed + 1``, ...),
times each value of a ``sweep`` of a config field when one is given: the field's
value is a traced number inside the update (e.g. the learning rate), so every
agent runs in the same call.

Steps: the budget and the evaluation schedule count environment steps as the
host loop does (the restart after an episode's LAST timestep is no step), per
agent; a chunk ends at the first whole iteration past ``eval_every`` steps, the
run at the first past ``max_num_actor_steps``.
"""

from __future__ import annotations

import copy
import dataclasses
import gc
import time
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from acme.anakin.loop import AgentCarry, AnakinAgent, canonical_spec, check_supported
from acme.anakin.sharding import AnakinLayout
from acme.environments.device import DEVICE_EXAMPLES, is_device_environment, make_device_environment
from acme.environments.jax_native import JaxEnvironment
from acme.experiments.checkpointing import ExperimentCheckpointer, experiment_identity
from acme.experiments.config import ExperimentConfig
from acme.experiments.evaluation import EvaluationResult
from acme.experiments.options import RunOptions
from acme.experiments.result import RunResult, SeedRun
from acme.experiments.schedule import Schedule
from acme.utils import checkpoint_files

# Compilation is most of a short run's time on a CPU, so each call is compiled with no more of XLA's backend
# optimisation than it needs. The calls made once or between chunks (the agents' initial state, the evaluation,
# the policy read for a snapshot) get none: on one core this cuts their compilation from 2.5 s to 0.7 s (initial
# state) and 1.2 s to 0.4 s (evaluation) for PPO on CartPole, while an evaluation takes 5 ms instead of 2. The
# training chunk gets level 1 of 3: 2.2 s instead of 3.0 s, and the same steps/s at 4 and 256 environments.
QUICK_COMPILE = {"xla_backend_optimization_level": 0}
CHUNK_COMPILE = {"xla_backend_optimization_level": 1}


def _jit(function, options: dict, **kwargs):
    """``jax.jit`` with these compiler ``options`` where this jax takes them (0.4.35 and later)."""
    try:
        return jax.jit(function, compiler_options=options, **kwargs)
    except TypeError:
        return jax.jit(function, **kwargs)


def jax_environment_of(environment_id: str) -> JaxEnvironment:
    """The JAX environment of an id such as ``jax:CartPole-v1`` or ``gymnax:CartPole-v1``; a clear error for a
    host-only id."""
    if not is_device_environment(environment_id):
        raise ValueError(
            f"The on-device loop (--launcher anakin) steps environments written in JAX, and "
            f"{environment_id or '(none)'!r} steps on the host. Use one such as {', '.join(DEVICE_EXAMPLES)} "
            "(docs/environments.md lists them), or run this environment with --launcher local, threads or ray."
        )
    return make_device_environment(environment_id)


def _with_value(agent_config: Any, field: str, value: Any) -> Any:
    """``agent_config`` with ``field`` set to ``value`` (a traced number), past the dataclass's validation, which
    ``check_sweep`` ran on every concrete value."""
    swept = copy.copy(agent_config)
    object.__setattr__(swept, field, value)
    return swept


def check_sweep(agent_config: Any, field: str, values: Sequence[float]) -> None:
    """Refuses a field the config does not have or that is not a number, and values the config refuses."""
    fields = {f.name: f for f in dataclasses.fields(agent_config)}
    numeric = sorted(
        name
        for name in fields
        if isinstance(getattr(agent_config, name), (int, float)) and not isinstance(getattr(agent_config, name), bool)
    )
    if field not in fields or field not in numeric:
        raise ValueError(
            f"Cannot sweep {field!r}: the {type(agent_config).__name__} fields that hold a number are "
            f"{', '.join(numeric)}."
        )
    for value in values:
        dataclasses.replace(agent_config, **{field: type(getattr(agent_config, field))(value)})  # its own checks


def _one_agent(function, in_axes=0):
    """What ``jax.vmap(function, in_axes)`` computes over an axis of one agent, without batching: the mapped
    arguments lose their leading axis and every output gets it back."""

    def call(*args):
        axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        inner = [arg if axis is None else jax.tree.map(lambda x: x[0], arg) for arg, axis in zip(args, axes)]
        return jax.tree.map(lambda x: x[None], function(*inner))

    return call


class AnakinAgents:
    """The agents of one ``run_anakin`` call: their seeds and swept values, and the jitted functions over them, each
    with a leading axis of agents (``init``, ``chunk`` of training iterations, evaluation; vmapped where there are
    several agents); ``benchmarks/anakin.py`` times ``chunk``."""

    def __init__(self, config: ExperimentConfig, options: RunOptions):
        builder = config.builder
        check_supported(builder)
        self.environment = jax_environment_of(config.environment_id)
        self.spec = canonical_spec(self.environment)
        networks = config.network_factory(self.spec)
        field, values = options.sweep or (None, (None,))
        if field is not None:
            check_sweep(builder.config, field, values)
        num_envs = options.num_envs
        if num_envs is None:
            rollouts = hasattr(builder.config, "unroll_length")
            num_envs = builder.config.batch_size if rollouts else config.num_envs_per_actor
        self.layout = None if config.learner_sharding is None else AnakinLayout(config.learner_sharding, num_envs)
        self.base = AnakinAgent(builder, networks, self.environment, num_envs, self.layout, options.resets_per_step)
        self.seeds = [config.seed + s for v in values for s in range(options.num_seeds)]
        self.values = [v for v in values for _ in range(options.num_seeds)]
        self.field = field
        swept = np.asarray([0.0 if v is None else v for v in self.values], np.float32)
        self.swept = jnp.asarray(swept)

        def agent(value) -> AnakinAgent:
            if field is None:
                return self.base
            return AnakinAgent(
                type(builder)(_with_value(builder.config, field, value)),
                networks,
                self.environment,
                num_envs,
                self.layout,
                options.resets_per_step,
            )

        self._agent = agent
        num_eval = config.num_eval_episodes

        def init(key, value):
            return agent(value).init(key)

        def chunk(carry, value, iterations):
            # One traced iteration serves both the metrics' shapes and the loop's body (a jitted function is traced
            # once per argument types). Traced twice, tracing and lowering the chunk took 1.6-1.8 s instead of
            # 1.1-1.4 s (PPO on CartPole, on a core shared with another run).
            iterate = jax.jit(agent(value).iterate)
            metrics = jax.eval_shape(lambda c: iterate(c)[1], carry)
            start = (carry, jax.tree.map(lambda m: jnp.zeros(m.shape, m.dtype), metrics))
            return jax.lax.fori_loop(0, iterations, lambda i, state: iterate(state[0]), start)

        def evaluate(learner, key, value, salt):
            return agent(value).evaluate(learner, jax.random.fold_in(key, salt), num_eval)

        def policy(learner):
            return self.base.definition.variables(learner)["policy"]

        self.carry_shardings, placed = None, {}
        if self.layout is not None:  # the carry stays in the layout's shardings from one call to the next
            shapes = jax.eval_shape(jax.vmap(init), jnp.zeros((len(self), 2), jnp.uint32), self.swept)
            self.carry_shardings = self.layout.carry(shapes)
            placed = {"out_shardings": (self.carry_shardings, self.layout.replicated)}
        # A call of one agent (without a layout) is traced without vmap: tracing and lowering its programs take about
        # a third less time (a cache-warm PPO CartPole start to 475: 1.1-1.25 s instead of 1.55-1.65 s, one core) and
        # its chunk runs about 6% faster. Its numbers are those of a program without a batch axis, which XLA may round
        # differently from the same seed's in a call of several agents (PPO's already differed between calls of one
        # and of three agents).
        over = _one_agent if self.layout is None and len(self.seeds) == 1 else jax.vmap
        self.init = _jit(over(init), QUICK_COMPILE, **({"out_shardings": self.carry_shardings} if placed else {}))
        self.chunk = _jit(over(chunk, in_axes=(0, 0, None)), CHUNK_COMPILE, donate_argnums=0, **placed)
        # ``salt`` (an evaluation's own draws from the agent's key) is derived inside the compiled call: outside it,
        # the derivation is a small program of its own to compile.
        self.evaluate = _jit(over(evaluate, in_axes=(0, 0, 0, None)), QUICK_COMPILE)
        self.policy = _jit(over(policy), QUICK_COMPILE)

    def check_sweep_traces(self) -> None:
        """Traces one chunk with the swept value as a traced number (no compilation): a field the loop uses as a
        Python number (a shape, a count) cannot differ between the agents of one call, and is refused."""
        if self.field is None:
            return
        carry = jax.eval_shape(self.init, jnp.zeros((len(self), 2), jnp.uint32), self.swept)
        try:
            jax.eval_shape(self.chunk, carry, self.swept, 1)
        except (jax.errors.ConcretizationTypeError, jax.errors.TracerIntegerConversionError, TypeError) as error:
            raise ValueError(
                f"Cannot sweep {self.field!r} on the device: the on-device loop uses it as a Python number (a shape, "
                "a count or a schedule), the same for every agent of a call. Sweep a field used only in the "
                "arithmetic of the update, such as learning_rate, or run one call per value. "
                f"({type(error).__name__})"
            ) from None

    def __len__(self) -> int:
        return len(self.seeds)

    def place(self, carry: AgentCarry) -> AgentCarry:
        """``carry`` (e.g. restored from a checkpoint) in the layout's shardings; as it is without a layout."""
        return carry if self.carry_shardings is None else jax.device_put(carry, self.carry_shardings)

    def labels(self) -> list[dict]:
        """Per agent: its seed and, with a sweep, its value (the columns its log rows carry)."""
        return [
            {"seed": seed, **({self.field: value} if self.field else {})}
            for seed, value in zip(self.seeds, self.values)
        ]


def _check_finite(name: str, first_bad: Any, labels: Sequence[dict], hint: str) -> None:
    for metric, (steps, values) in jax.device_get(first_bad).items():
        for agent, (step, value) in enumerate(zip(np.asarray(steps), np.asarray(values))):
            if int(step) >= 0:
                raise FloatingPointError(
                    f"{name} {metric} became {float(value)} at learner step {int(step)} (agent {labels[agent]}). "
                    f"{hint}".strip()
                )


def _identity(config: ExperimentConfig, agents: AnakinAgents) -> dict:
    """What a checkpoint must match to resume this run: the experiment's identity, the agents and environments."""
    return {
        **experiment_identity(config),
        "runner": "anakin",
        "agents": agents.labels(),
        "num_envs": agents.base.num_envs,
    }


def run_anakin(config: ExperimentConfig, options: RunOptions | None = None, progress: bool = True) -> RunResult:
    """Trains ``config``'s agent with environment, acting, storage and learning on the device (see the module), as
    ``options`` (``num_envs``, ``num_seeds``, ``sweep``) say.

    ``config.environment_id`` must be a ``jax:<name>`` id; ``config.checkpointing``
    checkpoints at chunk boundaries and resumes from the newest checkpoint.
    """
    # Tracing and lowering make hundreds of thousands of objects, enough for two or more of Python's full
    # collections, each of which walks every object the process holds, jax's modules included (about 0.12 s each on
    # one core). While the run lasts, the objects that existed before it are out of the collector's reach (still
    # freed when nothing refers to them), so its collections walk only what the run makes.
    gc.freeze()
    try:
        return _run_anakin(config, options, progress)
    finally:
        gc.unfreeze()


def _run_anakin(config: ExperimentConfig, options: RunOptions | None, progress: bool) -> RunResult:
    start = time.perf_counter()
    agents = AnakinAgents(config, options or RunOptions(launcher="anakin"))
    definition = agents.base.definition
    labels = agents.labels()
    logger_factory = config.get_logger_factory()
    learner_logger = logger_factory("learner", "learner_steps")
    evaluator_logger = logger_factory("evaluator", "actor_steps")
    per_iteration = agents.base.steps_per_iteration

    keys = jnp.stack([jax.random.PRNGKey(seed) for seed in agents.seeds])
    compile_start = time.perf_counter()
    carry = agents.init(keys, agents.swept)
    evaluations: list[list[EvaluationResult]] = [[] for _ in labels]
    iteration, resumed_from = 0, None
    checkpointer = None
    if config.checkpointing is not None:
        checkpointer = ExperimentCheckpointer(config.checkpointing, _identity(config, agents))
        restored = _restore_latest(checkpointer, config, agents)
        if restored is not None:
            path, leaves, loop = restored
            carry = agents.place(_unflatten(carry, leaves))
            iteration = int(loop["iteration"])
            evaluations = [[EvaluationResult(**e) for e in agent] for agent in loop["evaluations"]]
            start -= float(loop.get("wall_seconds", 0.0))  # the clock goes on from the stopped attempt's
            resumed_from = iteration
            print(f"Resuming from checkpoint {path} (iteration {iteration}).", flush=True)
    # Compile both calls before the clock of the run's own work starts (a chunk of 0 iterations, one evaluation).
    carry, _ = agents.chunk(carry, agents.swept, 0)
    jax.block_until_ready(agents.evaluate(carry.learner, keys, agents.swept, 1 << 20))
    compile_seconds = time.perf_counter() - compile_start

    def actor_steps() -> np.ndarray:
        return np.asarray(jax.device_get(carry.actor_steps)).sum(axis=-1)

    def learner_steps_now() -> np.ndarray:
        return np.asarray(jax.device_get(carry.learner.steps))

    schedule = Schedule(
        config.max_num_actor_steps,
        config.eval_every,
        done=int(actor_steps().min()),
        checkpointing=config.checkpointing,
        progress=progress,
        description=f"anakin {len(labels)} agent(s)",
    )
    hint = definition.hint(config.builder.config)

    def advance() -> int:
        nonlocal carry, iteration
        iterations = schedule.stretch_in(per_iteration)
        carry, metrics = agents.chunk(carry, agents.swept, iterations)
        iteration += iterations
        _check_finite(definition.name, carry.first_bad, labels, hint)
        metrics, steps, learner_steps = jax.device_get(metrics), actor_steps(), learner_steps_now()
        for agent, label in enumerate(labels):
            row = {k: np.asarray(v[agent]) for k, v in metrics.items() if np.ndim(v[agent]) == 0}
            learner_logger.write(
                {**label, **row, "learner_steps": int(learner_steps[agent]), "actor_steps": int(steps[agent])}
            )
        return int(steps.min())

    def evaluate() -> float:
        returns = np.asarray(jax.device_get(agents.evaluate(carry.learner, keys, agents.swept, iteration)))
        steps, learner_steps, elapsed = actor_steps(), learner_steps_now(), time.perf_counter() - start
        for agent, label in enumerate(labels):
            mean, std = float(returns[agent].mean()), float(returns[agent].std())
            result = EvaluationResult(int(steps[agent]), mean, std, elapsed, int(learner_steps[agent]))
            evaluations[agent].append(result)
            evaluator_logger.write({**label, **result.log_row()})
        return float(returns.mean())

    def save() -> None:
        path = _save(checkpointer, carry, iteration, evaluations, time.perf_counter() - start)
        schedule.say(f"Checkpoint saved: {path} (actor steps {int(actor_steps().min())}).")

    try:
        schedule.run(advance, evaluate, lambda: int(learner_steps_now().max()), save)
        learner_logger.close()
        evaluator_logger.close()
    finally:
        if checkpointer is not None:  # lets go of the directory for a later run
            checkpointer.close()
    policy = jax.device_get(agents.policy(carry.learner))
    steps, learner_steps = actor_steps(), learner_steps_now()
    runs = [
        SeedRun(
            seed=seed,
            sweep_value=value,
            evaluations=evaluations[agent],
            actor_steps=int(steps[agent]),
            learner_steps=int(learner_steps[agent]),
            policy_params=jax.tree.map(lambda x, a=agent: np.asarray(x[a]), policy),
        )
        for agent, (seed, value) in enumerate(zip(agents.seeds, agents.values))
    ]
    return RunResult(
        runs,
        time.perf_counter() - start,
        compile_seconds=compile_seconds,
        steps_per_iteration=per_iteration,
        resumed_from=resumed_from,
    )


def _save(checkpointer: ExperimentCheckpointer, carry: AgentCarry, iteration: int, evaluations, wall_seconds: float):
    """The whole carry (learner states, environments, replay, keys) as a list of arrays, the counts, and as loop
    state the iteration, the evaluations and the run's wall-clock so far: data only. Named by
    the iteration (the agents' learner steps differ when they are swept). Returns the checkpoint's path."""
    leaves = [np.asarray(x) for x in jax.device_get(jax.tree.leaves(carry))]
    counts = {  # each agent's, as the schedule counts them
        "actor_steps": int(np.asarray(jax.device_get(carry.actor_steps)).sum(axis=-1).min()),
        "learner_steps": int(np.asarray(jax.device_get(carry.learner.steps)).max()),
    }
    loop = {
        "iteration": iteration,
        "evaluations": [[dataclasses.asdict(e) for e in agent] for agent in evaluations],
        "wall_seconds": float(wall_seconds),
    }
    return checkpointer.save({"leaves": leaves}, iteration, counts, loop=loop)


def _restore_latest(
    checkpointer: ExperimentCheckpointer, config: ExperimentConfig, agents: AnakinAgents
) -> tuple[str, list, dict] | None:
    """``(path, leaves, loop state)`` of the newest checkpoint, or None in a new directory. A checkpoint that an
    on-device run wrote before its checkpoints were the experiment format (2026-11-28: the leaves and the loop
    state in its tree, the identity as its metadata) resumes as well."""
    try:
        restored = checkpointer.restore()
    except checkpoint_files.CheckpointMismatchError:
        legacy = checkpoint_files.Checkpointer(checkpointer.directory, exclusive=False)
        found = legacy.restore_latest()
        identity = checkpoint_files.json_normalise(_identity(config, agents))
        if found is None or any(found[2].get(key) != value for key, value in identity.items()):
            raise
        state, iteration, _ = found
        return legacy.path(iteration), list(state["leaves"]), {**state["progress"], "iteration": iteration}
    if restored is None:
        return None
    return restored.path, list(restored.learner_state["leaves"]), restored.loop


def _unflatten(fresh: AgentCarry, stored: list) -> AgentCarry:
    """``stored`` leaves in ``fresh``'s structure, refused unless every shape and dtype is ``fresh``'s."""
    leaves, treedef = jax.tree.flatten(fresh)
    shapes = [(np.shape(x), np.asarray(x).dtype) for x in stored]
    expected = [(np.shape(x), np.asarray(x).dtype) for x in leaves]
    if shapes != expected:
        raise checkpoint_files.CheckpointMismatchError(
            "The checkpoint holds a run of other shapes (another network size, number of environments or replay "
            "size?) than this one; point --checkpoint-dir elsewhere to start afresh."
        )
    return jax.tree.unflatten(treedef, [jnp.asarray(x) for x in stored])


def check_runnable(config: ExperimentConfig, options: RunOptions) -> None:
    """Raises ValueError for what the on-device loop cannot run (a host-only environment, an agent it does not
    support, a number of environments or a sweep its config refuses), building nothing on the device."""
    if config.record_dataset is not None:
        raise ValueError(
            "record_dataset records the actors of an in-process host run; the on-device loop's actors record "
            "nothing. Record with the local launcher, or from a policy snapshot (python -m baselines record)."
        )
    AnakinAgents(config, options).check_sweep_traces()
