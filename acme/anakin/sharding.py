"""The on-device loop over a mesh of devices, by the same ``LearnerSharding`` a host learner takes.

Each agent's environments are split over the mesh's ``"data"`` axis: every device steps its share of them, keeps
their n-step windows or rollouts, and acts with the same (replicated) policy. Learning is data-parallel: each
update's batch is split over ``"data"`` along its batch dimension, so each device computes the loss and gradients
of its part, and XLA reduces the gradients between them. The learner's state is laid out as the strategy says
(``acme.jax.sharding.Layout``: replicated for ``data``, each leaf split for ``fsdp``, by path for ``rules``).
A transition agent's device replay stays whole on every device: each device inserts what every device's
environments produced (a few rows per step) and gathers its part of each batch locally.

Nothing of the loop changes: the same jitted program runs, and XLA partitions it from these shardings, so the
results equal the one-device loop's up to the order of floating-point sums.
"""

from __future__ import annotations

from typing import Any

import jax
from jax.sharding import NamedSharding, PartitionSpec

from acme.anakin.loop import AgentCarry
from acme.jax.sharding import Layout, LearnerSharding


class AnakinLayout:
    """A ``LearnerSharding`` applied to the agents of one call, each with ``num_envs`` environments: the shardings
    of their carry (leaves ``[A, ...]``, one row per agent) and of each update's batch (inside the agents' vmap,
    leaves ``[B, ...]`` or ``[U, B, ...]``)."""

    def __init__(self, sharding: LearnerSharding, num_envs: int):
        self.sharding = sharding
        self.mesh = sharding.mesh()
        self.data_size = self.mesh.shape["data"]
        if num_envs % self.data_size:
            raise ValueError(
                f"The on-device loop splits each agent's {num_envs} environments over the {self.data_size} devices "
                f"of the data axis, which do not divide them: use a number of environments that {self.data_size} "
                "divides, or other devices."
            )
        self.replicated = NamedSharding(self.mesh, PartitionSpec())
        self._layout: Layout | None = None  # the learner's, once ``carry`` knows the learner state's shapes

    def carry(self, carry: AgentCarry) -> AgentCarry:
        """The shardings of the agents' carry, given its shapes (``jax.eval_shape`` of their vmapped ``init``)."""
        one_learner = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape[1:], x.dtype), carry.learner)
        self._layout = Layout(self.sharding, one_learner)
        learner = jax.tree.map(lambda s: NamedSharding(self.mesh, PartitionSpec(None, *s.spec)), self._layout.state)
        per_environment = NamedSharding(self.mesh, PartitionSpec(None, "data"))
        storage = carry.storage
        if storage:
            windows, replay = storage
            storage = (
                jax.tree.map(lambda _: per_environment, windows),
                jax.tree.map(lambda _: self.replicated, replay),
            )
        return AgentCarry(
            learner=learner,
            first_bad=jax.tree.map(lambda _: self.replicated, carry.first_bad),
            environments=jax.tree.map(lambda _: per_environment, carry.environments),
            timesteps=jax.tree.map(lambda _: per_environment, carry.timesteps),
            storage=storage,
            core=jax.tree.map(lambda _: per_environment, carry.core),
            actor_steps=per_environment,
            key=self.replicated,
        )

    def split_batch(self, batch: Any, stacked: bool) -> Any:
        """``batch`` (inside the agents' vmap) constrained to the learner layout's batch shardings
        (``Layout.batch``: split over ``"data"`` along the batch dimension, the second of ``[U, B, ...]`` stacks;
        a batch the data axis does not divide is refused). Needs ``carry`` to have run (it builds the layout)."""
        return jax.tree.map(jax.lax.with_sharding_constraint, batch, self._layout.batch(batch, stacked))
