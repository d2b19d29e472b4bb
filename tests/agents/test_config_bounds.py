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


class _Fields:
    """A plain object (not a dataclass: no type check runs first), so each check meets the value itself."""

    def __init__(self, **values):
        self.__dict__.update(values)


CHECKS = {
    "finite": lambda check, target: check.finite(target, "x"),
    "positive": lambda check, target: check.positive(target, "x"),
    "non_negative": lambda check, target: check.non_negative(target, "x"),
    "in_unit_interval": lambda check, target: check.in_unit_interval(target, "x"),
    "probability": lambda check, target: check.probability(target, "x"),
    "in_range": lambda check, target: check.in_range(target, "x", -1e9, 1e9),
    "positive_int": lambda check, target: check.positive_int(target, "x"),
    "layer_width": lambda check, target: check.layer_width(target, "x"),
}


@pytest.mark.parametrize("value", NON_FINITE)
@pytest.mark.parametrize("name", list(CHECKS))
def test_every_number_check_refuses_nan_and_infinities(name, value):
    target = _Fields(x=value)
    with pytest.raises(ValueError, match=r"Invalid _Fields: x must be"):
        CHECKS[name](config_checks.ConfigChecker(target), target)
    target = _Fields(x=(8, value))
    with pytest.raises(ValueError, match=r"Invalid _Fields: x must be .* layer 1 of \(8, (nan|inf|-inf)\) is"):
        config_checks.ConfigChecker(target).layer_sizes(target, "x")
    with pytest.raises(ValueError, match="max_abs_reward must be None"):
        config_checks.check_max_abs_reward(_Fields(max_abs_reward=value))


class _Unprintable(tuple):
    def __repr__(self):
        raise AssertionError("a value was formatted although its check passed")


def test_a_value_is_formatted_only_once_its_check_failed_and_then_cut_short():
    @dataclasses.dataclass(frozen=True)
    class Sizes:
        hidden: typing.Sequence[int] = (8, 8)

    checker = config_checks.ConfigChecker(Sizes())
    checker.layer_sizes(Sizes(hidden=_Unprintable((8, 8))), "hidden")  # passes without printing it
    nested: list = [1] * 9
    for _ in range(12):  # 9**13 leaves, shared as a YAML alias bomb shares them
        nested = [nested] * 9
    with pytest.raises(ValueError, match=r"layer 0 of \[\[\[\[\.\.\.\], \[\.\.\.\],") as refused:
        checker.layer_sizes(Sizes(hidden=nested), "hidden")
    assert len(str(refused.value)) < 400
