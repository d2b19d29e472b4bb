"""An agent's hyper-parameters from the command line: ``--set FIELD=VALUE``, ``--config FILE``, and the
effective config a run writes to its directory (``config.yaml``), which ``--config`` reads back.

A ``--set`` value is parsed by the field's type: ``true``/``false`` for booleans, numbers (``3e-4``,
``100_000``), comma-separated integers for layer sizes (``256,256``), ``none`` where a field may be None. A
config file is YAML or JSON: a mapping of fields, or what a run wrote (``agent``, ``environment`` and
``config``). Every value then goes through the config class's own checks, so a bad one is refused with the
config's message; an unknown field is refused with the list of known ones, and a field given twice by ``--set``
is refused with both values. A config file is small and plain: at most ``MAX_CONFIG_BYTES``, read by
``yaml.safe_load`` (which builds only plain data) with anchors and aliases refused (they let a few lines stand for
a structure too large to print or check); a string where a field takes a number (YAML reads ``1e-3`` as one) is
read as ``--set`` reads it. Errors show at most ``acme.utils.quoting.ECHO_LIMIT`` characters of what was given.
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

from acme.utils import regular_files
from acme.utils.quoting import quote, shorten

CONFIG_FILE = "config.yaml"  # what a run writes to its directory

_TRUE, _FALSE, _NONE = ("true", "yes", "1"), ("false", "no", "0"), ("none", "null")
MAX_CONFIG_BYTES = 1 << 20  # a run's config.yaml is a few KB; 1 MiB leaves room for comments, not for a payload


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
    close = difflib.get_close_matches(name, known, n=1) if len(name) <= 100 else []
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return ValueError(
        f"{source}: {config_class.__name__} has no field {quote(name)}.{hint} Its fields: {', '.join(known)}."
    )


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
        raise ValueError(f"{where} takes true or false, got {quote(text)}.")
    if kind is int:
        try:
            return int(text.strip())
        except ValueError:
            value = _float(text, where, "an integer")
            if not value.is_integer():
                raise ValueError(f"{where} takes an integer, got {quote(text)}.") from None
            return int(value)
    if kind is float:
        return _float(text, where, "a number")
    if kind is str:
        return text
    if origin in (tuple, list, collections.abc.Sequence):
        item = arguments[0] if arguments else Any
        inner = text.strip().strip("()[]")
        parts = inner.split(",") if inner.strip() else []
        if len(parts) > 1 and not parts[-1].strip():
            parts = parts[:-1]  # one trailing comma, as in (64,)
        if any(not part.strip() for part in parts):
            raise ValueError(f"{where} takes comma-separated items, got {quote(text)} (an empty item).")
        return tuple(_parse(item, part, where) for part in parts)
    if kind is Any:
        return text
    raise ValueError(f"{where} is of type {kind}, which --set cannot parse; use --config FILE.")


def _float(text: str, where: str, what: str) -> float:
    try:
        return float(text.strip())
    except ValueError:
        raise ValueError(f"{where} takes {what}, got {quote(text)}.") from None


def _from_file_value(kind: Any, value: Any, where: str) -> Any:
    """A value read from YAML/JSON as the field wants it: lists become tuples for sequence fields, and a string
    where the field takes something else (YAML reads ``1e-3`` as a string) is read as ``--set`` reads it."""
    if isinstance(value, str) and _takes_more_than_text(kind):
        return _parse(kind, value, where)
    if isinstance(value, list):
        return tuple(value)
    if kind is float and isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**1023:
        return float(value)  # a larger one stays an int, which the config refuses as no finite number
    return value


def _takes_more_than_text(kind: Any) -> bool:
    """Whether a field of type ``kind`` takes a value that is not a string (a number, a bool, a sequence)."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        return str not in typing.get_args(kind)
    return kind not in (str, Any)


def overrides_from_data(config_class: type, data: Mapping[str, Any], source: str) -> dict[str, Any]:
    """Overrides of ``config_class``'s fields from plain data (a config file's mapping, a snapshot's stored
    config), each as the field wants it (``_from_file_value``); an unknown field is refused naming ``source``."""
    fields = config_fields(config_class)
    overrides = {}
    for name, value in data.items():
        if name not in fields:
            raise _unknown(config_class, str(name), source)
        overrides[name] = _from_file_value(fields[name], value, f"{source}: {name}")
    return overrides


def parse_assignments(config_class: type, assignments: Iterable[str]) -> dict[str, Any]:
    """``--set FIELD=VALUE`` arguments as overrides of ``config_class``'s fields; a field given twice is refused
    (which of two values was meant is not for the command line to guess)."""
    fields = config_fields(config_class)
    overrides: dict[str, Any] = {}
    given: dict[str, str] = {}
    for assignment in assignments:
        name, equals, text = assignment.partition("=")
        name = name.strip()
        if not equals or not name:
            raise ValueError(f"--set takes FIELD=VALUE, e.g. --set learning_rate=3e-4; got {quote(assignment)}.")
        if name not in fields:
            raise _unknown(config_class, name, "--set")
        if name in given:
            raise ValueError(
                f"--set {name} is given twice ({quote(given[name])} and {quote(text)}); give each field once."
            )
        given[name] = text
        overrides[name] = _parse(fields[name], text, f"--set {name}")
    return overrides


class _PlainLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses anchors and aliases: in a config file they only serve to let a few lines
    stand for a structure too large to print or check (an alias bomb)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise yaml.composer.ComposerError(
                None, None, "anchors and aliases (&name, *name) are not read in a config file", event.start_mark
            )
        return super().compose_node(parent, index)


def _shown(path: str) -> str:
    """A config path for an error message: whole, as the user typed it, up to the system's path limit."""
    return shorten(path, _PATH_LIMIT)


_PATH_LIMIT = 4096  # PATH_MAX on Linux: a longer "path" cannot name a file, and is cut


def _read_text(path: str) -> str:
    """The text of the config file at ``path``: at most ``MAX_CONFIG_BYTES`` of UTF-8."""
    try:  # a FIFO or device in its place is refused, not waited on; an over-large file is not read
        raw = regular_files.read_regular_file(path, MAX_CONFIG_BYTES, deadline_seconds=60.0, follow_links=True)
    except regular_files.FileTooLargeError:
        raise ValueError(
            f"--config {_shown(path)}: the file is over {MAX_CONFIG_BYTES:,} bytes; a config file is a mapping of "
            "config fields (a run's config.yaml is a few KB)."
        ) from None
    except regular_files.FileRefusedError as error:
        raise ValueError(
            f"--config {_shown(path)}: {str(error).removeprefix(path).strip()} A config file is YAML or JSON."
        ) from None
    except OSError as error:
        raise ValueError(f"--config {_shown(path)}: cannot read it ({error.strerror}).") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"--config {_shown(path)}: not UTF-8 text; a config file is YAML or JSON.") from None


def _load_document(path: str, text: str) -> Any:
    """``text`` as JSON (a ``.json`` path) or plain YAML; ValueError saying why it is neither."""
    kind = "JSON" if path.endswith(".json") else "YAML"
    try:
        return json.loads(text) if kind == "JSON" else yaml.load(text, Loader=_PlainLoader)  # noqa: S506 - safe
    except RecursionError:
        raise ValueError(f"--config {_shown(path)}: nested too deeply for a mapping of config fields.") from None
    except (json.JSONDecodeError, yaml.YAMLError, ValueError) as error:
        raise ValueError(f"--config {_shown(path)}: not valid {kind} ({_one_line(error)}).") from None


def _one_line(error: Exception) -> str:
    """A parser's error in one line: YAML's problem and where it is (not its multi-line excerpt of the file)."""
    if isinstance(error, yaml.MarkedYAMLError) and error.problem_mark is not None:
        context = f"{error.context}: " if error.context else ""
        mark = error.problem_mark
        return f"{context}{error.problem} at line {mark.line + 1}, column {mark.column + 1}"
    return " ".join(str(error).split())


def read_config_file(config_class: type, path: str, agent: str) -> dict[str, Any]:
    """Overrides from a YAML or JSON file (a mapping of fields, or a run's ``config.yaml``), or from a run
    directory's ``config.yaml``."""
    if os.path.isdir(path):
        path = os.path.join(path, CONFIG_FILE)
    data = _load_document(path, _read_text(path))
    if not isinstance(data, Mapping):
        raise ValueError(f"--config {_shown(path)}: expected a mapping of config fields, got {type(data).__name__}.")
    if "config" in data and isinstance(data["config"], Mapping):  # what a run wrote
        if data.get("agent") not in (None, agent):
            raise ValueError(f"--config {_shown(path)} is {shorten(data['agent'])}'s config; this run trains {agent}.")
        data = data["config"]
    return overrides_from_data(config_class, data, f"--config {_shown(path)}")


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


def describe(agent: str, environment: str, agent_config: Any, run: Mapping[str, Any] | None = None) -> str:
    """The effective config as the YAML a run writes and ``--config`` reads."""
    header = (
        f"# {agent} on {environment}: the effective config (the registered baseline's values, then --config, then "
        f"--set).\n# Re-run it with: python -m baselines run {agent} --env {environment} --config <this file>\n"
    )
    body = yaml.safe_dump({"agent": agent, "environment": environment, **(run or {})}, sort_keys=False) + "config:\n"
    descriptions = field_descriptions(type(agent_config))
    for name, value in as_data(agent_config).items():
        line = f"  {name}: {_flow(value)}"
        body += f"{line}  # {descriptions[name]}\n" if name in descriptions else line + "\n"
    return header + body


def write_config(
    run_dir: str, agent: str, environment: str, agent_config: Any, run: Mapping[str, Any] | None = None
) -> str:
    """Writes ``describe(...)`` to ``run_dir/config.yaml``, with ``run``'s entries (how the run was logged) beside
    the agent and environment; returns the path."""
    path = os.path.join(run_dir, CONFIG_FILE)
    with open(path, "w") as f:
        f.write(describe(agent, environment, agent_config, run))
    return path
