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

The binding limit is the bottleneck the model names. The model has no term for what sharing cores costs
beyond the CPU time itself (context switches, caches); where the measured rate is below its prediction, that
difference is the cost it leaves out.
"""

from __future__ import annotations

import dataclasses
import math


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
) -> Prediction:
    """Actor steps per second of ``num_actors`` actors with ``cores`` cores in all, and the limit that binds.

    ``learner_cores`` and ``replay_cores`` are the cores of the learner's and the replay server's hosts (by
    default ``cores``: everything on one machine); ``actor_cores`` the cores the actors share (by default one
    each; fewer when a placement pins them to fewer).
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
    per_step = costs.actor + costs.learner + costs.services + costs.inference
    limits = {
        "actors": actor_cores / costs.actor,
        "learner_updates": 1.0 / costs.update if costs.update else math.inf,
        "learner": learner_cores / costs.learner,
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
