"""A throughput model of a distributed run from per-unit costs: how many actor steps per second N actors reach
on a machine (or cluster) of M cores, and which resource stops them.

Each role costs CPU seconds per actor step, measured in a distributed run by ``cpu_accounting``:

- ``actor``: one actor process per step (environment, policy call or inference request, the adder's inserts,
  parameter polls);
- ``learner``: the learner process per actor step (its updates and their sampling, at the run's
  samples-per-insert ratio, which fixes updates per actor step), of which ``update`` is the updates alone
  (one thread runs them; the sampling runs on the reverb client's and ``tf.data``'s own threads);
- ``services``: the replay server and the other nodes per actor step (inserts, samples, counter calls);
- ``inference``: the inference server per actor step, when there is one;

plus ``background_cores``, what Ray's daemons and the driver use whatever the rate. Throughput is the largest
rate every limit allows:

- each actor and the inference server run on at most one core (one Python thread does their work), and so
  do the learner's updates; the learner process as a whole (updates and sampling threads) and the replay
  server run on at most the cores of their host (``learner_cores``, ``replay_cores``; on one machine, all of
  its cores);
- all processes together use at most the cores there are, less the background: when processes outnumber
  cores the operating system shares the cores, so the sum of CPU per step bounds the rate;
- the network carries ``bytes_per_step`` (inserts, samples, parameters and calls, measured on loopback) at
  most at ``network_bytes_per_second``.

A ``LearnerLayout`` puts the learner's updates on devices (``acme.jax.sharding``'s ``data`` strategy): ``D``
devices of a measured ``DeviceKind``, each with the configured batch, so the global batch grows with ``D`` and,
at the run's samples-per-insert ratio, the updates per actor step fall as ``1 / D``; each update costs one
device's update plus the gradients' reduction (``exchange`` per step of a tree over ``D`` devices). The learner's
other work (sampling, and inserts into a replay it holds) stays on its hosts' cores: each host feeds its own
devices from its share of the inserts. Which of these a run can use today is the caller's to say: the library
runs a learner on the devices of one process (one host).

The binding limit is the bottleneck the model names. The model has no term for what sharing cores costs
beyond the CPU time itself (context switches, caches); where the measured rate is below its prediction, that
difference is the cost it leaves out.
"""

from __future__ import annotations

import dataclasses
import math

# The cluster the predictions assume: hosts of this many cores for the learner and for the replay, and a
# 10 Gbit/s network.
CLUSTER_HOST_CORES = 4
NETWORK_BYTES_PER_SECOND = 10e9 / 8


@dataclasses.dataclass(frozen=True)
class UnitCosts:
    """CPU seconds per actor step by role, the background cores, and loopback bytes per actor step."""

    actor: float
    learner: float
    services: float
    update: float = 0.0
    inference: float = 0.0
    background_cores: float = 0.0
    bytes_per_step: float = 0.0

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"UnitCosts.{field.name} must be a finite number >= 0, got {value!r}.")
        if self.actor <= 0 or self.learner <= 0:
            raise ValueError(
                f"UnitCosts.actor and .learner must be > 0 (every actor step costs its actor and, through the "
                f"samples-per-insert ratio, the learner something), got {self.actor} and {self.learner}."
            )


@dataclasses.dataclass(frozen=True)
class DeviceKind:
    """What one learner update costs on one device of a kind, measured: ``fixed`` seconds whatever the batch
    (dispatch, the batch-independent work), ``per_sample`` seconds per sample of the device's batch, and
    ``exchange`` seconds per step of the reduction of the gradients between devices (a tree over ``D`` devices
    takes ``ceil(log2 D)`` steps), ``exchange_across_hosts`` per step between devices of different hosts (their
    processes' collectives over the network; None: as ``exchange``)."""

    name: str
    fixed: float
    per_sample: float
    exchange: float = 0.0
    exchange_across_hosts: float | None = None

    def __post_init__(self):
        if self.exchange_across_hosts is None:
            object.__setattr__(self, "exchange_across_hosts", self.exchange)
        for name in ("fixed", "per_sample", "exchange", "exchange_across_hosts"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"DeviceKind.{name} must be a finite number >= 0, got {value!r}.")
        if self.fixed + self.per_sample <= 0:
            raise ValueError("DeviceKind.fixed and .per_sample cannot both be 0: an update costs something.")


@dataclasses.dataclass(frozen=True)
class LearnerLayout:
    """A data-parallel learner: ``devices`` devices of ``kind``, ``devices_per_host`` to a host, each updating on
    ``batch_per_device`` samples (the global batch is ``devices`` times that) at ``samples_per_insert`` sampled
    items per inserted one."""

    kind: DeviceKind
    devices: int
    batch_per_device: int
    samples_per_insert: float
    devices_per_host: int = 8

    def __post_init__(self):
        for name in ("devices", "batch_per_device", "devices_per_host"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"LearnerLayout.{name} must be an integer >= 1, got {value!r}.")
        spi = self.samples_per_insert
        if not (isinstance(spi, (int, float)) and math.isfinite(spi) and spi > 0):
            raise ValueError(f"LearnerLayout.samples_per_insert must be a finite number > 0, got {spi!r}.")

    @property
    def hosts(self) -> int:
        return math.ceil(self.devices / self.devices_per_host)

    @property
    def update_seconds(self) -> float:
        """One update of the global batch: a device's share, then the gradients' reduction: a tree within each
        host, then one across the hosts."""
        within = min(self.devices, self.devices_per_host)
        steps = math.ceil(math.log2(within)) if within > 1 else 0
        across = math.ceil(math.log2(self.hosts)) if self.hosts > 1 else 0
        kind = self.kind
        return (
            kind.fixed
            + kind.per_sample * self.batch_per_device
            + kind.exchange * steps
            + kind.exchange_across_hosts * across
        )

    @property
    def update_per_actor_step(self) -> float:
        """Seconds of updates per actor step: ``samples_per_insert / global batch`` updates of ``update_seconds``."""
        return self.samples_per_insert / (self.batch_per_device * self.devices) * self.update_seconds


@dataclasses.dataclass(frozen=True)
class Prediction:
    steps_per_second: float
    bottleneck: str
    limits: dict


def predict(
    costs: UnitCosts,
    num_actors: int,
    cores: float,
    learner_cores: float | None = None,
    replay_cores: float | None = None,
    network_bytes_per_second: float = math.inf,
    actor_cores: float | None = None,
    learner_layout: LearnerLayout | None = None,
) -> Prediction:
    """Actor steps per second of ``num_actors`` actors with ``cores`` cores in all, and the limit that binds.

    ``learner_cores`` and ``replay_cores`` are the cores of the learner's and the replay server's hosts (by
    default ``cores``: everything on one machine); ``actor_cores`` the cores the actors share (by default one
    each; fewer when a placement pins them to fewer). With a ``learner_layout`` the updates run on its devices
    (``costs.update`` is replaced by the layout's, and leaves the hosts' CPU), ``learner_cores`` are the cores of
    each of its hosts, and ``cores`` counts the cores besides its devices.
    """
    if not isinstance(num_actors, int) or num_actors < 1:
        raise ValueError(f"num_actors must be an integer >= 1, got {num_actors!r}.")
    if not cores > costs.background_cores:
        raise ValueError(
            f"cores must exceed the background's {costs.background_cores} cores (Ray's daemons and the driver), "
            f"got {cores}."
        )
    learner_cores = cores if learner_cores is None else learner_cores
    replay_cores = cores if replay_cores is None else replay_cores
    actor_cores = num_actors if actor_cores is None else min(actor_cores, num_actors)
    for name, value in (("learner_cores", learner_cores), ("replay_cores", replay_cores), ("actor_cores", actor_cores)):
        if not value > 0:
            raise ValueError(f"{name} must be > 0, got {value}.")
    if not network_bytes_per_second > 0:
        raise ValueError(f"network_bytes_per_second must be > 0, got {network_bytes_per_second}.")
    learner, update, learner_hosts = costs.learner, costs.update, 1
    if learner_layout is not None:
        learner = max(costs.learner - costs.update, 0.0)  # the host's part: sampling, inserts, the rest
        update, learner_hosts = learner_layout.update_per_actor_step, learner_layout.hosts
    per_step = costs.actor + learner + costs.services + costs.inference
    limits = {
        "actors": actor_cores / costs.actor,
        "learner_updates": 1.0 / update if update else math.inf,
        "learner": learner_hosts * learner_cores / learner if learner else math.inf,
        "replay": replay_cores / costs.services if costs.services else math.inf,
        "inference": 1.0 / costs.inference if costs.inference else math.inf,
        "cores": (cores - costs.background_cores) / per_step,
        "network": network_bytes_per_second / costs.bytes_per_step if costs.bytes_per_step else math.inf,
    }
    bottleneck = min(limits, key=limits.get)
    return Prediction(limits[bottleneck], bottleneck, {k: round(v, 1) for k, v in limits.items() if math.isfinite(v)})


def costs_from_run(
    cpu_per_role: dict, actor_steps: float, wall_seconds: float, loopback_bytes: float, update: float = 0.0
) -> UnitCosts:
    """Unit costs from a steady-state window of a run: CPU seconds per role (``cpu_accounting.cpu_by_role``),
    the actor steps and wall seconds of that window and the loopback bytes sent in it; ``update`` (seconds of
    updates per actor step) is measured apart, as the run's CPU accounting cannot split the learner's.

    A window taken as the difference of two runs can give a small role a small negative figure (its start-up
    varied between the runs by more than its steady work); such a figure counts as 0.
    """
    if actor_steps <= 0 or wall_seconds <= 0:
        raise ValueError(f"the window needs actor steps and seconds > 0, got {actor_steps} and {wall_seconds}.")

    def cpu(*roles: str) -> float:
        return max(sum(cpu_per_role.get(role, 0.0) for role in roles), 0.0)

    return UnitCosts(
        actor=cpu("actors") / actor_steps,
        learner=cpu("learner") / actor_steps,
        services=cpu("other_nodes") / actor_steps,
        update=update,
        inference=cpu("inference") / actor_steps,
        background_cores=cpu("ray_daemons", "driver") / wall_seconds,
        bytes_per_step=max(loopback_bytes, 0.0) / actor_steps,
    )
