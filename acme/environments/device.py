"""The environments the on-device loop steps: ``jax:`` (this library's own, ``acme.environments.jax_native``) and
the JAX libraries' (``gymnax:``, ``brax:``, ``playground:``, ``jumanji:``, ``craftax:``, ``navix:``;
``acme.environments.jax_libraries``), all behind :class:`JaxEnvironment`."""

from __future__ import annotations

from acme.environments.jax_libraries import LIBRARIES, make_library_environment
from acme.environments.jax_native import JaxEnvironment, make_jax_environment

DEVICE_PREFIXES = ("jax", *LIBRARIES)
DEVICE_EXAMPLES = ("jax:CartPole-v1", *(library.example for library in LIBRARIES.values()))


def is_device_environment(environment_id: str) -> bool:
    """Whether ``environment_id`` names an environment written in JAX (one the on-device loop can step)."""
    return isinstance(environment_id, str) and environment_id.split(":", 1)[0] in DEVICE_PREFIXES


def make_device_environment(environment_id: str) -> JaxEnvironment:
    """The JAX environment of ``environment_id`` (``<prefix>:<name>``, a prefix of :data:`DEVICE_PREFIXES`); a
    ValueError saying what is accepted otherwise."""
    if not is_device_environment(environment_id):
        raise ValueError(
            f"{environment_id!r} is not an environment written in JAX: their prefixes are "
            f"{', '.join(p + ':' for p in DEVICE_PREFIXES)} (for example {', '.join(DEVICE_EXAMPLES)})."
        )
    prefix, name = environment_id.split(":", 1)
    if prefix == "jax":
        return make_jax_environment(name)
    return make_library_environment(prefix, name)
