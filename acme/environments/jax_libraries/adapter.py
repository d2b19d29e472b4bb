"""What every JAX library's environment shares behind :class:`JaxEnvironment`: specs read from what ``initial``
returns, and the action specs the agents take (one discrete action, or a bounded vector)."""

from __future__ import annotations

import functools
from typing import Any, Mapping

import jax
import numpy as np

from acme import specs
from acme.environments.jax_native.base import JaxEnvironment

# The time limit handed to a library whose own step also ends episodes at its time limit (gymnax, Craftax): never
# reached, so that its end of episode means termination (discount 0) and the adapter's max_episode_steps, set to the
# library's own limit, truncates (discount 1) as dm_env says.
UNLIMITED_STEPS = 2**30


def discrete_actions(num_values: int) -> specs.DiscreteArray:
    """One discrete action among ``num_values``."""
    if int(num_values) < 1:
        raise ValueError(f"A discrete action space needs at least one action, got {num_values}.")
    return specs.DiscreteArray(int(num_values), dtype=np.int32, name="action")


def bounded_actions(shape: tuple[int, ...], minimum: Any, maximum: Any) -> specs.BoundedArray:
    """A float32 action vector within ``[minimum, maximum]``."""
    return specs.BoundedArray(
        tuple(int(d) for d in shape),
        np.float32,
        np.broadcast_to(np.asarray(minimum, np.float32), shape),
        np.broadcast_to(np.asarray(maximum, np.float32), shape),
        name="action",
    )


def as_dict(observation: Any) -> Any:
    """A library's structured observation (a namedtuple or dataclass of arrays) as a dict of its fields, which
    networks flatten; an array or dict as it is."""
    if hasattr(observation, "_asdict"):
        return dict(observation._asdict())
    if hasattr(observation, "__dataclass_fields__"):
        return {name: getattr(observation, name) for name in observation.__dataclass_fields__}
    return observation


class LibraryEnvironment(JaxEnvironment):
    """A library's environment: a subclass gives its action spec and dynamics; the observation spec is what
    ``initial`` returns (shapes and dtypes exactly as the library gives them)."""

    def __init__(self, actions: specs.Array, max_episode_steps: int):
        super().__init__(max_episode_steps=max_episode_steps)
        self._actions = actions

    @functools.cached_property
    def _observations(self) -> Any:
        shapes = jax.eval_shape(lambda key: self.initial(key)[1], jax.random.PRNGKey(0))
        if isinstance(shapes, Mapping):
            return {key: specs.Array(s.shape, s.dtype, name=key) for key, s in shapes.items()}
        return specs.Array(shapes.shape, shapes.dtype, name="observation")

    def spec(self) -> specs.EnvironmentSpec:
        return specs.EnvironmentSpec(
            observations=self._observations,
            actions=self._actions,
            rewards=specs.Array((), np.float32, name="reward"),
            discounts=specs.BoundedArray((), np.float32, 0.0, 1.0, name="discount"),
        )
