"""Environments from the JAX libraries researchers use, behind :class:`JaxEnvironment` (so the on-device loop, and
through ``make_environment`` the host runners, step them), each under its own id prefix:

=============  ===============================================  ==================================
prefix         library (what ``<name>`` is)                     example
=============  ===============================================  ==================================
``gymnax``     gymnax (``gymnax.registered_envs``)              ``gymnax:CartPole-v1``
``brax``       Brax (``brax.envs.get_environment``)             ``brax:inverted_pendulum``
``playground`` MuJoCo Playground (``registry.ALL_ENVS``), MJX   ``playground:CartpoleSwingup``
``jumanji``    Jumanji (``jumanji.registered_environments()``)  ``jumanji:Snake-v1``
``craftax``    Craftax (its four ids)                           ``craftax:Craftax-Classic-Symbolic-v1``
``navix``      Navix (``navix.registry()``)                     ``navix:Navix-Empty-5x5-v0``
=============  ===============================================  ==================================

Each library is imported only when one of its ids is made; one that is not installed is a clear error saying how
to install it (``make install`` installs them all: the ``jax-envs`` extra). ``tests/environments/
test_jax_libraries.py`` steps each adapter against its library's own reset and step.
"""

from __future__ import annotations

import difflib
import importlib
from typing import Callable, NamedTuple

from acme.environments.jax_native.base import JaxEnvironment
from acme.utils.quoting import quote

# Episodes of Brax's environments and Playground's, as their training wrappers cut them (episode_length=1000).
BRAX_EPISODE_STEPS = 1_000
CRAFTAX_IDS = ("Craftax-Classic-Symbolic-v1", "Craftax-Classic-Pixels-v1", "Craftax-Symbolic-v1", "Craftax-Pixels-v1")


class Library(NamedTuple):
    """A JAX environment library: its module, how to install it, its ids and how to make one."""

    module: str
    requirement: str
    names: Callable[[], list[str]]
    make: Callable[[str], JaxEnvironment]
    example: str


def _gymnax_names() -> list[str]:
    import gymnax

    return list(gymnax.registered_envs)


def _make_gymnax(name: str) -> JaxEnvironment:
    import gymnax

    from acme.environments.jax_libraries.gymnax_style import GymnaxStyleEnvironment

    env, params = gymnax.make(name)
    return GymnaxStyleEnvironment(env, params, "max_steps_in_episode")


def _brax_names() -> list[str]:
    from brax import envs

    return sorted(getattr(envs, "_envs", {}))  # brax keeps its registry in a module dict, without an accessor


def _make_brax(name: str) -> JaxEnvironment:
    import warnings

    from brax import envs

    from acme.environments.jax_libraries.brax_style import BraxStyleEnvironment

    with warnings.catch_warnings():  # brax warns at every load that MJX and Playground are maintained instead
        warnings.filterwarnings("ignore", message="Brax System", category=UserWarning)
        env = envs.get_environment(name)
    return BraxStyleEnvironment(env, BRAX_EPISODE_STEPS)


def _playground_names() -> list[str]:
    from mujoco_playground import registry

    return list(registry.ALL_ENVS)


def _make_playground(name: str) -> JaxEnvironment:
    from mujoco_playground import registry

    from acme.environments.jax_libraries.brax_style import BraxStyleEnvironment

    config = registry.get_default_config(name)
    overrides = {"impl": "jax"} if "impl" in config else {}  # MJX in JAX: vmaps and scans on any device (not warp)
    env = registry.load(name, config_overrides=overrides)
    return BraxStyleEnvironment(env, int(config.episode_length))


def _jumanji_names() -> list[str]:
    import jumanji

    return sorted(jumanji.registered_environments())


def _make_jumanji(name: str) -> JaxEnvironment:
    import jumanji

    from acme.environments.jax_libraries.jumanji_style import JumanjiEnvironment

    return JumanjiEnvironment(jumanji.make(name))


def _make_craftax(name: str) -> JaxEnvironment:
    from craftax.craftax_env import make_craftax_env_from_name

    from acme.environments.jax_libraries.gymnax_style import GymnaxStyleEnvironment

    env = make_craftax_env_from_name(name, auto_reset=False)
    return GymnaxStyleEnvironment(env, env.default_params, "max_timesteps")


def _navix_names() -> list[str]:
    import navix

    return sorted(navix.registry())


def _make_navix(name: str) -> JaxEnvironment:
    import navix

    from acme.environments.jax_libraries.navix_style import NavixEnvironment

    return NavixEnvironment(navix.make(name, disable_autoreset=True))


LIBRARIES: dict[str, Library] = {
    "gymnax": Library("gymnax", "gymnax==0.0.9", _gymnax_names, _make_gymnax, "gymnax:CartPole-v1"),
    "brax": Library("brax", "brax", _brax_names, _make_brax, "brax:inverted_pendulum"),
    "playground": Library(
        "mujoco_playground", "playground", _playground_names, _make_playground, "playground:CartpoleSwingup"
    ),
    "jumanji": Library("jumanji", "jumanji", _jumanji_names, _make_jumanji, "jumanji:Snake-v1"),
    "craftax": Library(
        "craftax", "craftax", lambda: list(CRAFTAX_IDS), _make_craftax, "craftax:Craftax-Classic-Symbolic-v1"
    ),
    "navix": Library("navix", "navix", _navix_names, _make_navix, "navix:Navix-Empty-5x5-v0"),
}


def make_library_environment(prefix: str, name: str) -> JaxEnvironment:
    """The environment ``name`` of the library under ``prefix`` (a key of :data:`LIBRARIES`); clear errors for a
    library that is not installed and for an id it does not have (with close matches)."""
    library = LIBRARIES[prefix]
    try:
        importlib.import_module(library.module)
    except ImportError as error:
        raise ValueError(
            f"'{prefix}:' environments need {library.module}, which is not installed ({error}). Install it with "
            f"pip install '{library.requirement}' (make install includes it: the jax-envs extra)."
        ) from error
    names = library.names()
    if name not in names:
        close = difflib.get_close_matches(name, names, n=5)
        hint = f" Did you mean {', '.join(f'{prefix}:{c}' for c in close)}?" if close else ""
        shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
        raise ValueError(f"{library.module} has no environment {quote(name)}.{hint} Its ids: {shown}.")
    try:
        return library.make(name)
    except ValueError as error:
        raise ValueError(f"'{prefix}:{name}' cannot run here: {error}") from error
