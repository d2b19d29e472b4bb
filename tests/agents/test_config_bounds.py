"""Every agent's config refuses, naming the field, a NaN or an infinity in each float field and an absurd value in
each integer field (a size, a count, a step period), so nonsense never reaches an allocation or a jitted loss.

The cases are made from the fields of each registered agent's config class: a field added later is covered
without a new test, and fails here until its check bounds it.
"""

from __future__ import annotations

import dataclasses
import re
import typing

import pytest

from acme.agents import config_checks
from baselines import registry

NON_FINITE = (float("nan"), float("inf"), float("-inf"))
ABSURD_INTEGERS = (10**30, 2**63, -(10**30), 2.5, True)


def _declared(kind: typing.Any) -> typing.Any:
    """``X`` of ``X | None``; ``kind`` otherwise."""
    arguments = [a for a in typing.get_args(kind) if a is not type(None)]
    return arguments[0] if typing.get_origin(kind) in (typing.Union, type(int | None)) and len(arguments) == 1 else kind


def _cases() -> list:
    cases = []
    for agent in registry.agent_names():
        config_class = registry.get_agent(agent).make_config
        hints = typing.get_type_hints(config_class)
        for field in dataclasses.fields(config_class):
            kind = _declared(hints[field.name])
            if kind is float:
                values = NON_FINITE
            elif kind is int:
                values = ABSURD_INTEGERS
            elif typing.get_args(kind) == (int,):  # layer sizes
                values = ((10**30,), (2**20,), (64,) * 100_000, (64, float("nan")), ((64,),))
            elif kind is bool:
                values = ("yes", 1.0)
            else:
                continue
            cases += [pytest.param(agent, field.name, v, id=f"{agent}-{field.name}-{str(v)[:12]}") for v in values]
    return cases


CASES = _cases()


def test_every_agent_and_field_kind_is_covered():
    """Counts of what the table tries, so that a registry or config change that empties it is noticed."""
    agents = {case.values[0] for case in CASES}
    assert agents == set(registry.agent_names())
    assert len(CASES) > 500


@pytest.mark.parametrize("agent, field, value", CASES)
def test_a_nonsense_value_is_refused_naming_its_field(agent, field, value):
    with pytest.raises(ValueError, match=rf"\b{field}\b") as refused:
        registry.get_agent(agent).make_config(**{field: value})
    message = str(refused.value)
    assert len(message) < 400, message  # what was given is shown cut short, not whole
    assert re.search(r"must be|must hold|takes", message), message


@pytest.mark.parametrize("agent", registry.agent_names())
def test_the_defaults_pass_and_values_at_the_bounds_are_accepted(agent):
    """The bounds refuse nonsense, not large real runs: a replay of 2**30 items, a batch of 2**20 and
    layers of 2**16 units are accepted (a config is only numbers; nothing is built here)."""
    entry = registry.get_agent(agent)
    defaults = entry.make_config()
    fields = {f.name for f in dataclasses.fields(defaults)}
    large = {"batch_size": config_checks.MAX_BATCH_DIMENSION, "max_replay_size": config_checks.MAX_REPLAY_ITEMS}
    large["queue_size"] = config_checks.MAX_REPLAY_ITEMS
    for name in ("hidden_sizes", "policy_hidden_sizes", "critic_hidden_sizes", "torso_sizes"):
        large[name] = (config_checks.MAX_LAYER_WIDTH, 8)
    entry.make_config(**{name: value for name, value in large.items() if name in fields})
