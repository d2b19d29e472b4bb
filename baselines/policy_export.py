"""Export a trained policy, load it back as a jittable function, and evaluate it greedily.

The snapshot (see ``acme.snapshots``) stores the parameters and, as metadata,
the agent's registry name, the environment id and the agent config
(``dataclasses.asdict``); loading rebuilds the networks and the evaluation
policy through ``baselines.registry``, so no replay and no learner are needed.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import dm_env
import jax

from acme import snapshots, specs
from acme.environments import UnknownEnvironmentError
from acme.utils import loggers
from acme.utils.checkpoint_files import CheckpointError, signatures_match, tree_signature
from acme.utils.quoting import quote
from baselines import registry

_REQUIRED = ("agent", "environment_id", "agent_config")


def export_policy(directory: str, agent: str, environment_id: str, agent_config: Any, params: Any) -> str:
    """Writes ``params`` of ``agent`` (a registry name) trained on ``environment_id`` as a policy snapshot.

    ``agent_config`` is the agent's config dataclass. Returns the snapshot's path.
    """
    registry.get_agent(agent)  # an unknown agent fails now, not at load time
    if not dataclasses.is_dataclass(agent_config) or isinstance(agent_config, type):
        raise TypeError(
            f"agent_config must be the agent's config dataclass instance (e.g. DQNConfig(...)), "
            f"got {type(agent_config).__name__}."
        )
    params = jax.device_get(params)
    metadata = {
        "agent": agent,
        "environment_id": environment_id,
        "agent_config": dataclasses.asdict(agent_config),
        "params_signature": tree_signature(params),
    }
    return snapshots.save_policy_snapshot(directory, params, metadata)


def load_policy(directory: str, seed: int | None = 0) -> tuple[Callable, dm_env.Environment, Any]:
    """Rebuilds the greedy policy of a snapshot.

    Returns ``(policy, environment, params)`` where ``policy`` is the agent's
    evaluation policy (``policy(params, key, observation, step) -> action``,
    or an ``acme.jax.actors.RecurrentPolicy`` for a recurrent agent) and
    ``environment`` a fresh instance of the environment it was trained on
    (seeded with ``seed``). Raises ``CheckpointError`` for a missing or broken
    snapshot.
    """
    policy, environment, params, _ = _load(directory, seed)
    return policy, environment, params


def _load(directory: str, seed: int | None) -> tuple[Any, dm_env.Environment, Any, Any]:
    """``load_policy``'s policy, environment and parameters, and the agent's builder."""
    params, metadata = snapshots.load_policy_snapshot(directory)
    _check_metadata(directory, metadata)
    config = snapshot_config(directory, metadata)  # before anything is built from it
    entry = registry.get_agent(metadata["agent"])
    try:
        environment = registry.make_agent_environment(
            metadata["agent"], metadata["environment_id"], seed=seed, evaluation=True
        )
    except UnknownEnvironmentError as error:
        raise CheckpointError(
            f"The snapshot at {directory} names the environment {quote(metadata['environment_id'])}, which the "
            f"environment factory does not make: {error}"
        ) from error
    spec = specs.make_environment_spec(environment)
    networks = entry.make_networks(spec, config)
    builder = entry.make_builder(config)
    expected = metadata.get("params_signature")
    if expected is not None:
        fresh = tree_signature(_fresh_policy_variables(builder, networks, spec))
        if not signatures_match(expected, fresh):
            raise CheckpointError(
                f"The snapshot's parameters ({expected}) do not fit the networks rebuilt from its config "
                f"({fresh}); was it written by another version of the agent?"
            )
    policy = builder.make_policy(networks, spec, evaluation=True)
    return policy, environment, params, builder


def snapshot_config(directory: str, metadata: dict) -> Any:
    """The agent config a snapshot's metadata stores, read as ``--config`` reads a file (known fields, lists as
    tuples, strings read by the field's type) and through the config's own checks, so that a config no run could
    have (a NaN, a layer of 10**12 units) is refused before any network or learner is built from it."""
    from baselines.hyperparameters import overrides_from_data

    agent = metadata["agent"]
    config_class = registry.get_agent(agent).make_config
    try:
        return config_class(**overrides_from_data(config_class, metadata["agent_config"], "agent_config"))
    except (TypeError, ValueError) as error:
        raise CheckpointError(
            f"The snapshot at {directory} holds an agent_config that {agent}'s config refuses: {error}"
        ) from error


def _check_metadata(directory: str, metadata: Any) -> None:
    """Refuses snapshot metadata that names no registered agent, no environment id or no config mapping."""
    if not isinstance(metadata, dict):
        raise CheckpointError(
            f"The snapshot at {directory} holds metadata of type {type(metadata).__name__}, not a dict."
        )
    missing = [key for key in _REQUIRED if key not in metadata]
    if missing:
        raise CheckpointError(
            f"The snapshot at {directory} lacks metadata {missing}; a policy snapshot written by "
            "baselines.policy_export.export_policy has keys " + ", ".join(_REQUIRED) + "."
        )
    agent, environment_id = metadata["agent"], metadata["environment_id"]
    if not isinstance(agent, str) or agent not in registry.agent_names():
        raise CheckpointError(
            f"The snapshot at {directory} names the agent {quote(agent)}, which the registry does not know; known "
            f"agents: {', '.join(registry.agent_names())}."
        )
    if not isinstance(environment_id, str):
        raise CheckpointError(
            f"The snapshot at {directory} names the environment {quote(environment_id)}; expected an id such as "
            "'gymnasium:CartPole-v1'."
        )
    if not isinstance(metadata["agent_config"], dict):
        raise CheckpointError(
            f"The snapshot at {directory} holds an agent_config of type {type(metadata['agent_config']).__name__}; "
            "expected the config's fields as a mapping."
        )


def _fresh_policy_variables(builder: Any, networks: Any, spec: specs.EnvironmentSpec) -> Any:
    """The "policy" variables of an untrained learner: what a snapshot of this agent must match in shape."""
    learner = builder.make_learner(
        jax.random.PRNGKey(0), networks, iter(()), lambda label, steps_key=None: loggers.NoOpLogger(), spec
    )
    return jax.device_get(learner.get_variables(["policy"])[0])


class _StaticVariableSource:
    """Serves the same parameters under every name (a learner stand-in for evaluation)."""

    def __init__(self, params: Any):
        self._params = params

    def get_variables(self, names):
        return [self._params for _ in names]


def evaluate_snapshot(directory: str, episodes: int, seed: int = 0) -> list[float]:
    """Runs ``episodes`` greedy episodes of the snapshot's policy; returns each episode's return."""
    from acme.environment_loop import EnvironmentLoop

    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"episodes must be an integer >= 1, got {episodes!r}.")
    policy, environment, params, builder = _load(directory, seed)
    spec = specs.make_environment_spec(environment)
    # The agent's own actor: a recurrent policy needs one that carries its state across steps.
    actor = builder.make_actor([jax.random.PRNGKey(seed)], policy, spec, _StaticVariableSource(params))
    loop = EnvironmentLoop(environment, actor, logger=loggers.NoOpLogger(), should_update=False)
    returns = loop.episode_returns(episodes)
    for value in returns:
        if not math.isfinite(value):
            raise FloatingPointError(f"Episode return became {value}; the snapshot's parameters may hold NaNs.")
    return returns
