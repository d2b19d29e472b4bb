"""One declarative description per agent: what the command line, the baselines and the examples build it from."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from acme import specs
from acme.agents import builders

ACTION_SPACES = ("discrete", "continuous", "any")


@dataclasses.dataclass(frozen=True)
class AgentDefinition:
    """An agent: its name, a one-line description, its config class, builder and networks.

    ``make_builder(config)`` and ``make_networks(environment_spec, config)``
    build the parts an ``ExperimentConfig`` needs; ``action_space`` is
    ``"discrete"``, ``"continuous"`` or ``"any"`` (both).
    """

    name: str
    description: str
    make_config: Callable[..., Any]
    make_builder: Callable[[Any], builders.AgentBuilder]
    make_networks: Callable[[specs.EnvironmentSpec, Any], Any]
    action_space: str

    def __post_init__(self):
        if self.action_space not in ACTION_SPACES:
            raise ValueError(f"action_space must be one of {ACTION_SPACES}, got {self.action_space!r}.")
