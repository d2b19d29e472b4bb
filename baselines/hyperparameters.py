"""An agent's hyper-parameters from the command line: ``--set FIELD=VALUE``, ``--config FILE``, and the
effective config a run writes to its directory (``config.yaml``), which ``--config`` reads back.

A ``--set`` value is parsed by the field's type: ``true``/``false`` for booleans, numbers (``3e-4``,
``100_000``), comma-separated integers for layer sizes (``256,256``), ``none`` where a field may be None. A
config file is YAML or JSON: a mapping of fields, or what a run wrote (``agent``, ``environment`` and
``config``). Every value then goes through the config class's own checks, so a bad one is refused with the
config's message; an unknown field is refused with the list of known ones. Files are read with
``yaml.safe_load``, which builds only plain data.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import difflib
import inspect
import io
import json
import os
import re
import tokenize
import types
import typing
from typing import Any, Iterable, Mapping

import yaml

CONFIG_FILE = "config.yaml"  # what a run writes to its directory

_TRUE, _FALSE, _NONE = ("true", "yes", "1"), ("false", "no", "0"), ("none", "null")


def config_fields(config_class: type) -> dict[str, Any]:
    """The config's fields and their resolved types, in declaration order."""
    if not dataclasses.is_dataclass(config_class):
        raise TypeError(f"{config_class!r} is not a dataclass config.")
    hints = typing.get_type_hints(config_class)
    return {field.name: hints.get(field.name, Any) for field in dataclasses.fields(config_class) if field.init}


def _inline_comments(klass: type) -> dict[str, str]:
    """``name: type = default  # description`` lines of ``klass``'s own body: the descriptions by field name."""
    try:
        source = inspect.getsource(klass)
    except (OSError, TypeError):
        return {}
    found, line_field = {}, {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.NAME and token.start[1] == 4 and token.start[0] not in line_field:
            line_field[token.start[0]] = token.string
        elif token.type == tokenize.COMMENT and token.start[0] in line_field and token.start[1] > 4:
            found[line_field[token.start[0]]] = token.string.lstrip("#").strip()
    return found


def _docstring_attributes(klass: type) -> dict[str, str]:
    """The ``Attributes:`` section of ``klass``'s docstring (Google style): the descriptions by field name."""
    doc = inspect.cleandoc(klass.__dict__.get("__doc__") or "")
    if "Attributes:" not in doc:
        return {}
    found, name = {}, None
    for line in doc.split("Attributes:", 1)[1].splitlines():
        entry = re.match(r"^  (\w+): (.*)$", line)
        if entry:
            name = entry.group(1)
            found[name] = entry.group(2).strip()
        elif name and line.startswith("    ") and line.strip():
            found[name] += " " + line.strip()
        elif line.strip() and not line.startswith(" "):
            break
    return found


def field_descriptions(config_class: type) -> dict[str, str]:
    """Each field's one-line description: its inline comment, or its entry in an ``Attributes:`` docstring section,
    from the most derived class that declares one (a redeclared field may say more)."""
    descriptions: dict[str, str] = {}
    for klass in reversed(config_class.__mro__):
        if dataclasses.is_dataclass(klass):
            descriptions.update(_docstring_attributes(klass))
            descriptions.update(_inline_comments(klass))
    return {name: descriptions[name] for name in config_fields(config_class) if name in descriptions}


def _unknown(config_class: type, name: str, source: str) -> ValueError:
    known = list(config_fields(config_class))
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return ValueError(f"{source}: {config_class.__name__} has no field {name!r}.{hint} Its fields: {', '.join(known)}.")


def _parse(kind: Any, text: str, where: str) -> Any:
    """``text`` as a value of type ``kind``; ValueError naming ``where`` and what it accepts."""
    origin, arguments = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        if type(None) in arguments and text.strip().lower() in _NONE:
            return None
        others = [a for a in arguments if a is not type(None)]
        if len(others) == 1:
            return _parse(others[0], text, where)
    if kind is bool:
        lowered = text.strip().lower()
        if lowered in _TRUE or lowered in _FALSE:
            return lowered in _TRUE
        raise ValueError(f"{where} takes true or false, got {text!r}.")
    if kind is int:
        try:
            return int(text.strip())
        except ValueError:
            value = _float(text, where, "an integer")
            if not value.is_integer():
                raise ValueError(f"{where} takes an integer, got {text!r}.") from None
            return int(value)
    if kind is float:
        return _float(text, where, "a number")
    if kind is str:
        return text
    if origin in (tuple, list, collections.abc.Sequence):
        item = arguments[0] if arguments else Any
        parts = [p for p in text.strip().strip("()[]").split(",") if p.strip()]
        return tuple(_parse(item, part, where) for part in parts)
    if kind is Any:
        return text
    raise ValueError(f"{where} is of type {kind}, which --set cannot parse; use --config FILE.")


def _float(text: str, where: str, what: str) -> float:
    try:
        return float(text.strip())
    except ValueError:
        raise ValueError(f"{where} takes {what}, got {text!r}.") from None


def _from_file_value(kind: Any, value: Any) -> Any:
    """A value read from YAML/JSON as the field wants it: lists become tuples for sequence fields."""
    if isinstance(value, list):
        return tuple(value)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def parse_assignments(config_class: type, assignments: Iterable[str]) -> dict[str, Any]:
    """``--set FIELD=VALUE`` arguments as overrides of ``config_class``'s fields (the last of a field wins)."""
    fields = config_fields(config_class)
    overrides: dict[str, Any] = {}
    for assignment in assignments:
        name, equals, text = assignment.partition("=")
        name = name.strip()
        if not equals or not name:
            raise ValueError(f"--set takes FIELD=VALUE, e.g. --set learning_rate=3e-4; got {assignment!r}.")
        if name not in fields:
            raise _unknown(config_class, name, f"--set {assignment}")
        overrides[name] = _parse(fields[name], text, f"--set {name}")
    return overrides


def read_config_file(config_class: type, path: str, agent: str) -> dict[str, Any]:
    """Overrides from a YAML or JSON file (a mapping of fields, or a run's ``config.yaml``), or from a run
    directory's ``config.yaml``."""
    if os.path.isdir(path):
        path = os.path.join(path, CONFIG_FILE)
    try:
        with open(path) as f:
            text = f.read()
    except OSError as error:
        raise ValueError(f"--config {path}: cannot read it ({error.strerror}).") from None
    try:
        data = json.loads(text) if path.endswith(".json") else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as error:
        raise ValueError(f"--config {path}: not valid {'JSON' if path.endswith('.json') else 'YAML'} ({error}).")
    if not isinstance(data, Mapping):
        raise ValueError(f"--config {path}: expected a mapping of config fields, got {type(data).__name__}.")
    if "config" in data and isinstance(data["config"], Mapping):  # what a run wrote
        if data.get("agent") not in (None, agent):
            raise ValueError(f"--config {path} is {data['agent']}'s config; this run trains {agent}.")
        data = data["config"]
    fields = config_fields(config_class)
    overrides = {}
    for name, value in data.items():
        if name not in fields:
            raise _unknown(config_class, str(name), f"--config {path}")
        overrides[name] = _from_file_value(fields[name], value)
    return overrides


def as_data(agent_config: Any) -> dict[str, Any]:
    """The config's fields as plain data (tuples as lists), for YAML."""
    data = {}
    for name in config_fields(type(agent_config)):
        value = getattr(agent_config, name)
        data[name] = list(value) if isinstance(value, tuple) else value
    return data


def _flow(value: Any) -> str:
    """``value`` as one line of YAML (a list in brackets)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=1_000)
    return text[: -len("\n...\n")] if text.endswith("\n...\n") else text.strip()


def describe(agent: str, environment: str, agent_config: Any) -> str:
    """The effective config as the YAML a run writes and ``--config`` reads."""
    header = (
        f"# {agent} on {environment}: the effective config (the registered baseline's values, then --config, then "
        f"--set).\n# Re-run it with: python -m baselines run {agent} --env {environment} --config <this file>\n"
    )
    body = yaml.safe_dump({"agent": agent, "environment": environment}, sort_keys=False) + "config:\n"
    descriptions = field_descriptions(type(agent_config))
    for name, value in as_data(agent_config).items():
        line = f"  {name}: {_flow(value)}"
        body += f"{line}  # {descriptions[name]}\n" if name in descriptions else line + "\n"
    return header + body


def write_config(run_dir: str, agent: str, environment: str, agent_config: Any) -> str:
    """Writes ``describe(...)`` to ``run_dir/config.yaml``; returns the path."""
    path = os.path.join(run_dir, CONFIG_FILE)
    with open(path, "w") as f:
        f.write(describe(agent, environment, agent_config))
    return path
