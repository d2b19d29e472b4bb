"""``python -m baselines plan``: what a learner layout costs each device, before anything is launched.

For an agent on an environment and a ``LearnerSharding`` (or ``auto``), the plan gives, per device: the bytes of
parameters, optimiser state and other state, the bytes of a batch, the bytes its collectives move per update
(a small cost model: nothing for ``replicated``; a ring all-reduce of the gradients, ``2 (n-1)/n`` of their
bytes, for ``data``; all-gathers of the parameters forward and backward and a reduce-scatter of the gradients,
``3 (n-1)/n``, for ``fsdp``), and XLA's own figures for the compiled update: its memory analysis, its flops and
the collectives it inserted. A plan whose compiled update does not fit ``--memory-per-device`` is refused.
``auto`` compiles replicated (one device), data and fsdp, and picks the one that fits with the least estimated
time per update (flops over the device's rate plus collective bytes over the link's rate, both stated), saying
why. In the spirit of PartIR's simulator and of Automap's and Rhino's searches, at the scale of an RL learner.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

import jax
import numpy as np

from acme import specs
from acme.environment_loop import EnvironmentLoop
from acme.jax.cpu_devices import request_cpu_devices
from acme.jax.sharding import LearnerSharding, leaf_path
from acme.replay.local_client import LocalReplay
from acme.utils import loggers
from baselines import registry

_QUIET = lambda label, steps_key=None: loggers.NoOpLogger()  # noqa: E731
_BYTES = {"pred": 1, "s8": 1, "u8": 1, "bf16": 2, "f16": 2, "s16": 2, "u16": 2, "f32": 4, "s32": 4, "u32": 4}
_BYTES.update({"f64": 8, "s64": 8, "u64": 8})
_COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")
# Assumed rates for the time estimate of ``auto`` (stated in its output): per device, and per link.
RATES = {"cpu": (5e10, 1e10), "gpu": (5e13, 1e11), "tpu": (1e14, 1e11)}
# Seconds one collective between processes takes whatever its size, as measured (``benchmarks/learner_scaling.py``,
# 2026-11-29: a bare all-reduce between two processes, gloo over loopback, 3.7 to 4.2 ms); none measured elsewhere.
CROSS_PROCESS_SECONDS = {"cpu": 4e-3}


@dataclasses.dataclass
class Plan:
    """One layout's figures, per device."""

    strategy: str
    devices: int
    parameters: int
    optimiser: int
    other_state: int
    batch: int
    collective_bytes: int | None  # the cost model's, per update (None: not modelled for rules)
    xla_arguments: int
    xla_outputs: int
    xla_temporaries: int
    xla_flops: float
    xla_collectives: dict

    @property
    def predicted(self) -> int:
        """The arguments of one update as the plan counts them: state and batch."""
        return self.parameters + self.optimiser + self.other_state + self.batch

    @property
    def xla_total(self) -> int:
        return self.xla_arguments + self.xla_outputs + self.xla_temporaries


def one_sample(agent: str, environment_id: str, agent_config: Any, seed: int = 0) -> Any:
    """A sample of the agent's own replay, as its learner receives one: its untrained actor acts in the
    environment until the dataset has a batch."""
    entry = registry.get_agent(agent)
    builder = entry.make_builder(agent_config)
    environment = registry.make_agent_environment(agent, environment_id, seed=seed)
    spec = specs.make_environment_spec(environment)
    networks = entry.make_networks(spec, agent_config)
    policy = builder.make_policy(networks, spec)
    replay = LocalReplay(builder.make_replay_tables(spec, policy), seed=seed, wait_on_insert=False)
    learner = builder.make_learner(jax.random.PRNGKey(seed), networks, iter(()), _QUIET, spec, replay)
    adders = [builder.make_adder(replay, spec, policy)]
    actor = builder.make_actor([jax.random.PRNGKey(seed + 1)], policy, spec, learner, adders)
    loop = EnvironmentLoop(environment, actor, logger=loggers.NoOpLogger(), should_update=False)
    iterator = builder.make_dataset_iterator(replay)
    while not iterator.ready():
        loop.run(200)
    return jax.device_get(next(iterator)), spec


def _local_bytes(leaf: Any, sharding: Any) -> int:
    shape = sharding.shard_shape(np.shape(leaf)) if sharding is not None else np.shape(leaf)
    return int(math.prod(shape)) * np.dtype(leaf.dtype).itemsize


def _xla_collectives(text: str) -> dict:
    """Per kind of collective in the compiled module: how many, and the bytes of their results on one device."""
    found = {}
    for line in text.splitlines():
        for kind in _COLLECTIVES:
            match = re.search(rf"=\s*(.*?)\s{kind}(-start)?\(", line)
            if match:
                size = sum(
                    _BYTES.get(dtype, 4) * math.prod(int(d) for d in dims.split(",") if d)
                    for dtype, dims in re.findall(r"(\w+)\[([\d,]*)\]", match[1])
                )
                count, total = found.get(kind, (0, 0))
                found[kind] = (count + 1, total + size)
    return {kind: {"count": count, "bytes": total} for kind, (count, total) in found.items()}


def plan_layout(agent: str, agent_config: Any, spec: Any, sample: Any, sharding: LearnerSharding) -> Plan:
    """The figures of ``sharding`` for this agent's learner (its update is compiled, not run)."""
    entry = registry.get_agent(agent)
    builder = entry.make_builder(agent_config)
    learner = builder.make_learner(
        jax.random.PRNGKey(0), entry.make_networks(spec, agent_config), iter(()), _QUIET, spec, sharding=sharding
    )
    layout = learner.layout
    compiled = learner.compile_step(sample)
    sizes = {"parameters": 0, "optimiser": 0, "other_state": 0}
    trainable = 0
    leaves = jax.tree_util.tree_flatten_with_path(learner.state)[0]
    for (path, leaf), leaf_sharding in zip(leaves, jax.tree.leaves(layout.state)):
        name = leaf_path(path)
        kind = "optimiser" if "opt" in name.split("/")[0] else "parameters" if "param" in name else "other_state"
        sizes[kind] += _local_bytes(leaf, leaf_sharding)
        if kind == "parameters" and not name.startswith("target"):
            trainable += int(np.size(leaf)) * np.dtype(leaf.dtype).itemsize
    batch_bytes = sum(_local_bytes(leaf, leaf.sharding) for leaf in jax.tree.leaves(learner.placed_batch(sample)))
    n = layout.data_size
    collective = {"replicated": 0, "data": 2 * (n - 1) * trainable // n, "fsdp": 3 * (n - 1) * trainable // n}
    memory = compiled.memory_analysis()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, (list, tuple)) else cost
    return Plan(
        strategy=sharding.strategy,
        devices=len(layout.mesh.devices.flat),
        batch=batch_bytes,
        collective_bytes=collective.get(sharding.strategy),
        xla_arguments=int(memory.argument_size_in_bytes),
        xla_outputs=int(memory.output_size_in_bytes),
        xla_temporaries=int(memory.temp_size_in_bytes),
        xla_flops=float((cost or {}).get("flops", 0.0)),
        xla_collectives=_xla_collectives(compiled.as_text()),
        **sizes,
    )


def estimated_seconds(plan: Plan, platform: str) -> float:
    """Time per update by the stated rates: per-device flops over the device's, collective bytes over the link's."""
    flops_rate, link_rate = RATES.get(platform, RATES["cpu"])
    return plan.xla_flops / flops_rate + (plan.collective_bytes or 0) / link_rate


def _size(value: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= scale:
            return f"{value / scale:.2f} {unit}"
    return f"{value} B"


def describe(plan: Plan) -> str:
    xla = ", ".join(f"{kind} x{c['count']} ({_size(c['bytes'])})" for kind, c in plan.xla_collectives.items())
    modelled = "not modelled" if plan.collective_bytes is None else _size(plan.collective_bytes)
    off = plan.xla_arguments / plan.predicted - 1 if plan.predicted else 0.0
    return "\n".join(
        [
            f"{plan.strategy} on {plan.devices} device(s), per device:",
            f"  parameters {_size(plan.parameters)}, optimiser state {_size(plan.optimiser)}, other state "
            f"{_size(plan.other_state)}, batch {_size(plan.batch)}: {_size(plan.predicted)}",
            f"  collectives per update: {modelled} moved (cost model); XLA inserted: {xla or 'none'} (their results' "
            "bytes, each op once)",
            f"  XLA's compiled update: arguments {_size(plan.xla_arguments)} ({off:+.1%} from the plan's), outputs "
            f"{_size(plan.xla_outputs)}, temporaries {_size(plan.xla_temporaries)}: {_size(plan.xla_total)}; "
            f"{plan.xla_flops:.3g} flops",
        ]
    )


def describe_processes(plan: Plan, processes: int, platform: str) -> str:
    """What a layout over ``processes`` processes (``--learner-processes``) adds: the collectives that cross
    between them each update, their bytes, and their time at the measured latency where there is one."""
    count = sum(c["count"] for c in plan.xla_collectives.values())
    per_process = plan.devices // processes
    latency = CROSS_PROCESS_SECONDS.get(platform)
    if latency is None:
        timing = f"no latency between processes has been measured for {platform} devices"
    else:
        timing = (
            f"at {latency * 1e3:g} ms each (gloo between processes on one machine, measured), at least "
            f"{count * latency * 1e3:.1f} ms per update spent waiting on them, against an estimated "
            f"{estimated_seconds(plan, platform) * 1e3:.3g} ms of the update itself"
        )
    return "\n".join(
        [
            f"over {processes} processes of {per_process} device(s) each (one mesh, each process feeding its "
            f"{per_process} device(s) 1/{processes} of every batch):",
            f"  across processes per update: {count} collective(s), each spanning every process; "
            f"{_size(plan.collective_bytes or 0)} out of each process (the cost model's ring); {timing}",
        ]
    )


def add_sharding_flags(parser: Any, with_auto: bool = False) -> None:
    """``--sharding``, ``--devices``, ``--sharding-rule`` and ``--model-axis``: a ``LearnerSharding``."""
    from acme.jax.sharding import STRATEGIES

    parser.add_argument(
        "--sharding",
        choices=(*STRATEGIES, "auto") if with_auto else STRATEGIES,
        default=None,
        help="how the learner's state and batches are laid out over its devices: replicated, data (the batch "
        "split, the state replicated), fsdp (the state split too), rules (--sharding-rule over a data x model "
        "mesh)" + (", or auto (the cheapest that fits)" if with_auto else "") + " (default: one device)",
    )
    parser.add_argument(
        "--devices",
        type=int,
        default=None,
        help="the learner's devices (default: all but for replicated, which takes one)",
    )
    parser.add_argument(
        "--sharding-rule",
        action="append",
        default=[],
        metavar="PATTERN=AXES",
        help="with --sharding rules: leaves whose path matches PATTERN are split as AXES, one per dimension, "
        "each data, model or none, e.g. 'linear_0/w$=none,model' (repeatable; the first match wins)",
    )
    parser.add_argument("--model-axis", type=int, default=1, help="with --sharding rules: the model axis's size")


def sharding_from_flags(args: Any) -> LearnerSharding | None:
    """The ``LearnerSharding`` the flags describe (None without ``--sharding``); its checks name the flags."""
    if args.sharding is None:
        given = [
            flag for flag, value in (("--devices", args.devices), ("--sharding-rule", args.sharding_rule)) if value
        ] + (["--model-axis"] if args.model_axis != 1 else [])
        if given:
            raise ValueError(f"{given[0]} describes the learner's layout: add --sharding, or leave {given[0]} out.")
        return None
    rules = []
    for text in args.sharding_rule:
        pattern, separator, axes = text.rpartition("=")
        if not separator or not pattern:
            raise ValueError(f"--sharding-rule must be PATTERN=AXES (e.g. 'linear_0/w$=none,model'), got {text!r}.")
        rules.append((pattern, tuple(None if axis.strip() == "none" else axis.strip() for axis in axes.split(","))))
    try:
        return LearnerSharding(args.sharding, devices=args.devices, rules=tuple(rules), model_axis=args.model_axis)
    except ValueError as error:
        raise ValueError(f"--sharding {args.sharding}: {error}") from None


def ask_for_cpu_devices(count: int | None) -> None:
    """On a machine without accelerators, ``count`` CPU devices for this process (before jax starts its backend);
    they share the machine's cores, so a plan over them checks layouts and bytes, not speed."""
    if count is not None and count > 1:
        try:
            request_cpu_devices(count)
        except RuntimeError:  # the backend already started: the devices it has are checked later
            pass


def devices_needed(device: int | None = None, sharding: LearnerSharding | None = None) -> int | None:
    """How many devices a process needs for ``device`` (an id) or ``sharding`` (a count or ids; None: any)."""
    if device is not None:
        return device + 1
    if sharding is None or sharding.devices is None:
        return None
    return sharding.devices if isinstance(sharding.devices, int) else max(sharding.devices) + 1


def with_cpu_devices(options: Any, sharding: LearnerSharding | None, actor_device: int | None) -> Any:
    """``options`` (``RunOptions``) where a Ray run on a machine without accelerators gives its learner node (and
    its actors, with ``actor_device``, and a learner's other processes) the CPU devices their layout names, as
    ``ask_for_cpu_devices`` gives this process; a node the placement already gives ``cpu_devices`` keeps them."""
    if options.launcher != "ray" or jax.default_backend() != "cpu":
        return options
    from launch import Resources

    placement = dict(options.placement or {})
    learner_devices = devices_needed(sharding=sharding)
    needs = [("learner", learner_devices), ("actor", devices_needed(actor_device))]
    if options.learner_processes > 1:  # the other processes of the learner (acme.experiments.distributed)
        needs.append(("learner_group", learner_devices))
    for label, count in needs:
        entry = placement.get(label, Resources())
        if count is not None and count > 1 and entry.cpu_devices is None:
            placement[label] = dataclasses.replace(entry, cpu_devices=count)
    return dataclasses.replace(options, placement=placement or options.placement)


def plan_command(args: Any, config_overrides: dict) -> int:
    """Prints the plan of ``args.sharding`` (or picks one for ``auto``); refuses one that does not fit."""
    if args.learner_processes > 1:
        return _plan_processes(args, config_overrides)
    ask_for_cpu_devices(args.devices)
    agent_config = registry.make_agent_config(args.agent, args.env, config_overrides)
    strategy = args.sharding or "replicated"
    sample, spec = one_sample(args.agent, args.env, agent_config)
    platform = jax.devices()[0].platform
    print(f"Plan for {args.agent} on {args.env} ({platform}, {len(jax.devices())} devices here):")
    if strategy != "auto":
        args.sharding = strategy
        plan = plan_layout(args.agent, agent_config, spec, sample, sharding_from_flags(args))
        print(describe(plan))
        return _check_fits(plan, args.memory_per_device)
    candidates = [LearnerSharding("replicated")]
    count = args.devices or len(jax.devices())
    if count > 1:
        candidates += [LearnerSharding("data", devices=count), LearnerSharding("fsdp", devices=count)]
    plans = []
    for sharding in candidates:
        try:
            plans.append(plan_layout(args.agent, agent_config, spec, sample, sharding))
        except ValueError as error:  # a layout this agent cannot use (say, a batch the devices do not divide)
            print(f"{sharding.strategy}: not possible ({error})")
    for plan in plans:
        print(describe(plan))
    fitting = [p for p in plans if args.memory_per_device is None or p.xla_total <= args.memory_per_device]
    if not fitting:
        print(f"error: no layout fits {_size(args.memory_per_device)} per device.", flush=True)
        return 2
    flops_rate, link_rate = RATES.get(platform, RATES["cpu"])
    best = min(fitting, key=lambda p: estimated_seconds(p, platform))
    others = ", ".join(f"{p.strategy} {estimated_seconds(p, platform) * 1e6:.1f} us" for p in fitting if p is not best)
    print(
        f"auto: {best.strategy} on {best.devices} device(s), estimated {estimated_seconds(best, platform) * 1e6:.1f} "
        f"us per update (its flops at an assumed {flops_rate:.0e} flops/s per {platform} device, its collective "
        f"bytes at an assumed {link_rate:.0e} B/s){'; ' + others if others else ''}"
        + ("" if args.memory_per_device is None else f"; fits {_size(args.memory_per_device)} per device")
        + "."
    )
    return 0


def _plan_processes(args: Any, config_overrides: dict) -> int:
    """The plan of a learner over ``args.learner_processes`` processes of ``args.devices`` devices each: data or
    fsdp over all of them (the update each process runs on its devices), compiled here over as many."""
    from acme.experiments.learner_group import GROUP_STRATEGIES, check_group_batch

    processes, per_process = args.learner_processes, args.devices or 1
    if args.sharding not in GROUP_STRATEGIES:
        raise ValueError(
            f"--learner-processes {processes} splits each batch over the processes' devices: plan it with "
            "--sharding data or fsdp (replicated, rules and auto over several processes are not built)."
        )
    ask_for_cpu_devices(processes * per_process)
    agent_config = registry.make_agent_config(args.agent, args.env, config_overrides)
    batch_size = getattr(agent_config, "batch_size", None)
    if batch_size is not None:
        check_group_batch(batch_size, processes, per_process)
    sample, spec = one_sample(args.agent, args.env, agent_config)
    platform = jax.devices()[0].platform
    if len(jax.devices()) < processes * per_process:
        raise ValueError(
            f"--learner-processes {processes} of --devices {per_process} is planned on as many devices in this "
            f"process; it has {len(jax.devices())} {platform} device(s)."
        )
    sharding = LearnerSharding(args.sharding, devices=processes * per_process)
    plan = plan_layout(args.agent, agent_config, spec, sample, sharding)
    print(f"Plan for {args.agent} on {args.env} ({platform}):")
    print(describe(plan))
    print(describe_processes(plan, processes, platform))
    return _check_fits(plan, args.memory_per_device)


def _check_fits(plan: Plan, limit: int | None) -> int:
    if limit is not None and plan.xla_total > limit:
        print(
            f"error: the compiled update needs {_size(plan.xla_total)} per device, more than --memory-per-device "
            f"{_size(limit)}: use more devices or fsdp, a smaller batch, or a larger limit.",
            flush=True,
        )
        return 2
    return 0
