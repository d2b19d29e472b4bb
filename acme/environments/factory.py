"""One factory for every supported environment family: ``make_environment("prefix:id")``."""

from __future__ import annotations

import ctypes.util
import difflib
import functools
import os
from typing import Callable, NamedTuple, Sequence

import dm_env

from acme import wrappers
from acme.utils.quoting import quote


class EnvironmentFamily(NamedTuple):
    """Ids ``<prefix>:<name>`` that one factory makes: the form of their names, examples, and a note (what the
    family needs or is). ``--help`` and the unknown-prefix error list them from ``FAMILIES``."""

    prefix: str
    name_form: str
    examples: tuple[str, ...]
    note: str = ""


# Partially observed versions of fully observed tasks: the entries of the observation each keeps.
MEMORY_TASKS = {"CartPole-v1": ("CartPole-v1", (0, 2))}  # cart position and pole angle, no velocities

FAMILIES = (
    EnvironmentFamily("gymnasium", "<id>", ("gymnasium:CartPole-v1", "gymnasium:Acrobot-v1", "gymnasium:Pendulum-v1")),
    EnvironmentFamily("bsuite", "<id>", ("bsuite:catch/0", "bsuite:cartpole/0")),
    EnvironmentFamily("dm_control", "<domain>/<task>", ("dm_control:cartpole/swingup",), "needs dm-control"),
    EnvironmentFamily("atari", "<Game>", ("atari:Pong", "atari:Breakout?terminal_on_life_loss=true"), "needs ale-py"),
    EnvironmentFamily(
        "memory", "<task>", tuple(f"memory:{name}" for name in MEMORY_TASKS), "a gymnasium task, part of it hidden"
    ),
    EnvironmentFamily(
        "jax", "<id>", ("jax:CartPole-v1", "jax:MinAtar-Breakout"), "in JAX: --launcher anakin runs it on the device"
    ),
    EnvironmentFamily("gymnax", "<id>", ("gymnax:CartPole-v1",), "needs gymnax; in JAX, like jax:"),
    EnvironmentFamily("brax", "<name>", ("brax:inverted_pendulum",), "needs brax; in JAX, like jax:"),
    EnvironmentFamily(
        "playground", "<Name>", ("playground:CartpoleSwingup",), "MuJoCo Playground (MJX); in JAX, like jax:"
    ),
    EnvironmentFamily("jumanji", "<id>", ("jumanji:Snake-v1",), "needs jumanji; in JAX, like jax:"),
    EnvironmentFamily("craftax", "<id>", ("craftax:Craftax-Classic-Symbolic-v1",), "needs craftax; in JAX, like jax:"),
    EnvironmentFamily("navix", "<id>", ("navix:Navix-Empty-5x5-v0",), "needs navix; in JAX, like jax:"),
)
KNOWN_PREFIXES = tuple(family.prefix for family in FAMILIES)
# The families written in JAX (acme.environments.device.DEVICE_PREFIXES, named here without importing jax).
JAX_PREFIXES = ("jax", "gymnax", "brax", "playground", "jumanji", "craftax", "navix")
# No family's id comes near this (gymnasium's longest are under 60 characters, an Atari id with every option
# about 200); a longer one is refused before any family's factory reads it.
MAX_ID_LENGTH = 1_000
INSTALL_ALE = "pip install 'ale-py>=0.12.1'"  # the Atari ROMs come with ale-py since 0.9
EXAMPLE_IDS = (
    "gymnasium:CartPole-v1",
    "gymnasium:Pendulum-v1",
    "bsuite:catch/0",
    "dm_control:cartpole/swingup",
)


class UnknownEnvironmentError(ValueError):
    """An environment id that no factory knows."""


def _split(environment_id: str) -> tuple[str, str]:
    if isinstance(environment_id, str) and len(environment_id) > MAX_ID_LENGTH:
        raise UnknownEnvironmentError(
            f"Environment id {quote(environment_id)} is too long: ids are '<prefix>:<name>' of at most "
            f"{MAX_ID_LENGTH:,} characters, for example {', '.join(EXAMPLE_IDS)}."
        )
    if not isinstance(environment_id, str) or ":" not in environment_id:
        raise UnknownEnvironmentError(
            f"Environment id {quote(environment_id)} has no family prefix. Write it as "
            f"'<prefix>:<name>' with a prefix among {', '.join(KNOWN_PREFIXES)}; "
            f"for example {', '.join(EXAMPLE_IDS)}."
        )
    prefix, name = environment_id.split(":", 1)
    if prefix not in KNOWN_PREFIXES:
        raise UnknownEnvironmentError(
            f"Unknown environment family {quote(prefix)} in {quote(environment_id)}. Known prefixes: "
            f"{', '.join(KNOWN_PREFIXES)} (for example {', '.join(EXAMPLE_IDS)})."
        )
    if not name:
        raise UnknownEnvironmentError(f"Environment id {quote(environment_id)} names no environment after the prefix.")
    return prefix, name


def _make_gymnasium(name: str, seed: int | None) -> dm_env.Environment:
    import gymnasium

    registered = sorted(gymnasium.envs.registry.keys())
    if name not in registered:
        close = difflib.get_close_matches(name, registered, n=5)
        hint = f" Did you mean {', '.join('gymnasium:' + c for c in close)}?" if close else ""
        raise UnknownEnvironmentError(
            f"gymnasium has no environment {quote(name)}.{hint} Registered ids include "
            f"{', '.join(registered[:8])}, ... (see gymnasium.envs.registry)."
        )
    return wrappers.GymnasiumToDmEnv(gymnasium.make(name), seed=seed)


def _jax_factory(prefix: str) -> Callable[[str, int | None], dm_env.Environment]:
    """The factory of a family written in JAX (``jax:`` or a JAX library's): its environment stepped from the host
    one jitted call at a time."""

    def make(name: str, seed: int | None) -> dm_env.Environment:
        from acme.environments.jax_native.host import JaxToDmEnv

        try:
            environment = _shared_device_environment(f"{prefix}:{name}")
        except ValueError as error:
            raise UnknownEnvironmentError(str(error)) from None
        return JaxToDmEnv(environment, seed=seed)

    return make


@functools.lru_cache(maxsize=None)
def _shared_device_environment(environment_id: str):
    """One JAX environment object per id in a process (they hold no state between calls), so that every host view
    of it (the actors', the evaluator's) shares its compiled reset and step: Craftax's step alone takes about 20 s
    to compile on a CPU."""
    from acme.environments.device import make_device_environment

    return make_device_environment(environment_id)


def _make_bsuite(name: str, seed: int | None) -> dm_env.Environment:
    del seed  # bsuite ids carry their own seed: "catch/0" .. "catch/19".
    try:
        import bsuite
        from bsuite import sweep
    except ImportError as error:  # pragma: no cover - bsuite is a core dependency
        raise UnknownEnvironmentError(f"bsuite is not installed ({error}); run `make install`.") from error
    if name not in sweep.SWEEP:
        close = difflib.get_close_matches(name, sweep.SWEEP, n=5)
        hint = f" Did you mean {', '.join('bsuite:' + c for c in close)}?" if close else ""
        raise UnknownEnvironmentError(
            f"bsuite has no environment {quote(name)}.{hint} Ids look like 'catch/0', 'cartpole/3', "
            "'deep_sea/10' (see bsuite.sweep.SWEEP)."
        )
    return bsuite.load_from_id(name)


def _headless_mujoco_gl() -> str | None:
    """The MuJoCo rendering backend to use without a display: EGL, else OSMesa, else none (rendering then
    raises, training does not render). None when there is a display or the user chose with MUJOCO_GL."""
    if "MUJOCO_GL" in os.environ or os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    for backend, library in (("egl", "EGL"), ("osmesa", "OSMesa")):
        if ctypes.util.find_library(library):
            return backend
    return "disable"


def _make_dm_control(name: str, seed: int | None) -> dm_env.Environment:
    backend = _headless_mujoco_gl()
    if backend is not None:  # else dm_control tries GLFW first, which warns that DISPLAY is missing
        os.environ["MUJOCO_GL"] = backend
    try:
        from dm_control import suite
    except ImportError as error:
        raise UnknownEnvironmentError(
            f"dm_control is not installed ({error}). Install it with `pip install dm-control` "
            "to use 'dm_control:<domain>/<task>' environments (Python 3.11 or 3.12: dm-control needs labmaze, "
            "which has no Python 3.13 build)."
        ) from error
    if "/" not in name:
        raise UnknownEnvironmentError(
            f"dm_control ids are '<domain>/<task>', e.g. 'cartpole/swingup'; got {quote(name)}."
        )
    domain, task = name.split("/", 1)
    if (domain, task) not in suite.ALL_TASKS:
        raise UnknownEnvironmentError(_unknown_dm_control_task(domain, task, suite.ALL_TASKS))
    return suite.load(domain, task, task_kwargs={"random": seed})


def _unknown_dm_control_task(domain: str, task: str, known: Sequence[tuple[str, str]]) -> str:
    """Why ``domain/task`` is not a dm_control task, with the domains or the domain's tasks that exist."""
    tasks = sorted(f"{d}/{t}" for d, t in known)
    close = difflib.get_close_matches(f"{domain}/{task}", tasks, n=5)
    hint = f" Did you mean {', '.join('dm_control:' + c for c in close)}?" if close else ""
    domains = sorted({d for d, _ in known})
    if domain not in domains:
        return f"dm_control has no domain {quote(domain)}.{hint} Its domains: {', '.join(domains)}."
    own = sorted(t for d, t in known if d == domain)
    return f"dm_control's {domain} domain has no task {quote(task)}.{hint} Its tasks: {', '.join(own)}."


def _atari_game(name: str) -> tuple:
    """``(game, AtariConfig)`` of an ``atari:`` id; clear errors for no ale-py, a bad option or no such game."""
    try:
        import ale_py  # noqa: F401
    except ImportError as error:
        raise UnknownEnvironmentError(
            f"'atari:{name}' needs ale-py, which is not installed ({error}). Install it, with its ROMs, by: "
            f"{INSTALL_ALE} (make install includes it)"
        ) from error
    from acme.environments.atari import check_game, parse_atari_id

    try:
        game, config = parse_atari_id(name)
        check_game(game)
    except ValueError as error:
        raise UnknownEnvironmentError(str(error)) from None
    return game, config


def _make_atari(name: str, seed: int | None, evaluation: bool = False) -> dm_env.Environment:
    import dataclasses

    from acme.environments.atari import AtariEnvironment

    game, config = _atari_game(name)
    if evaluation and config.terminal_on_life_loss:  # an evaluator plays whole games
        config = dataclasses.replace(config, terminal_on_life_loss=False)
    return AtariEnvironment(game, config, seed=seed)


def make_environment_batch(environment_id: str, seeds: Sequence[int]):
    """K environments of ``environment_id`` stepped at once by a vectorised simulator, one per seed, where its family
    has one (Atari: ale-py's C++ vector environment, ``AtariVectorBatch``); None for the other families (their
    K environments step one after another)."""
    prefix, name = _split(environment_id)
    if prefix != "atari":
        return None
    from acme.environments.atari import AtariVectorBatch

    game, config = _atari_game(name)
    return AtariVectorBatch(game, seeds, config)


def _make_memory(name: str, seed: int | None) -> dm_env.Environment:
    if name not in MEMORY_TASKS:
        raise UnknownEnvironmentError(
            f"No memory task {quote(name)}; known: {', '.join('memory:' + n for n in MEMORY_TASKS)} "
            "(a gymnasium task with part of its observation hidden)."
        )
    base, indices = MEMORY_TASKS[name]
    return wrappers.ObservationSubsetWrapper(_make_gymnasium(base, seed), indices)


_FACTORIES: dict[str, Callable[[str, int | None], dm_env.Environment]] = {
    "gymnasium": _make_gymnasium,
    "bsuite": _make_bsuite,
    "dm_control": _make_dm_control,
    "atari": _make_atari,
    "memory": _make_memory,
    **{prefix: _jax_factory(prefix) for prefix in JAX_PREFIXES},
}


def make_environment(
    environment_id: str,
    seed: int | None = None,
    single_precision: bool = True,
    step_limit: int | None = None,
    canonical_actions: bool = False,
    evaluation: bool = False,
) -> dm_env.Environment:
    """Builds a dm_env environment from an id such as ``"gymnasium:CartPole-v1"``.

    Args:
      environment_id: ``"<prefix>:<name>"``; prefixes: gymnasium, bsuite, dm_control, atari (``atari:Pong``), memory
        (``memory:CartPole-v1``: CartPole without its velocities), jax (``jax:CartPole-v1``: written in JAX for
        the on-device loop, here stepped from the host), and the JAX libraries' gymnax, brax, playground, jumanji,
        craftax and navix (``acme.environments.jax_libraries``), stepped from the host the same way.
      seed: seeds the environment's randomness where the family supports it.
      single_precision: cast 64-bit observations, rewards and discounts to 32 bits.
      step_limit: truncate episodes after this many steps.
      canonical_actions: rescale bounded continuous actions to [-1, 1].
      evaluation: the environment an evaluator plays: Atari games are played whole (no end on a lost life).

    Atari ids take options after a ``?`` (``atari:Breakout?terminal_on_life_loss=true``; see
    ``acme.environments.atari``). A dm_control id on a machine without a display sets ``MUJOCO_GL`` (egl,
    else osmesa, else disable) unless it is set already.
    """
    prefix, name = _split(environment_id)
    environment = _make_atari(name, seed, evaluation) if prefix == "atari" else _FACTORIES[prefix](name, seed)
    if step_limit is not None:
        environment = wrappers.StepLimitWrapper(environment, step_limit)
    if canonical_actions:
        environment = wrappers.CanonicalActionSpecWrapper(environment)
    if single_precision:
        environment = wrappers.SinglePrecisionWrapper(environment)
    return environment
