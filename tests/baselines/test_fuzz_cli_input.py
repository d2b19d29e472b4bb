"""Generated bad ``--set`` values and ``--config`` files for every agent: each ends in exit status 2 with one
error paragraph, never a traceback, a hang, a run or a run folder.

A seeded generator picks an agent, one of its config fields and a value that no field of that type accepts
(non-finite or unparsable numbers, integers past any bound, malformed sizes, unknown fields), or writes a
``--config`` file of the kind a hostile or broken file would be (noise, YAML tags that would build objects,
anchors, deep nesting, wrong types). Most cases go through ``config AGENT`` (the effective config, checked as a
run checks it, nothing built); every fourth through ``run`` for a one-step run, whose folder must not appear.
The cases are the same on every run.
"""

from __future__ import annotations

import dataclasses
import random
import typing

import pytest

from baselines import registry
from baselines.cli import main

NUM_SET_CASES = 90
NUM_CONFIG_CASES = 40

BAD_NUMBERS = ["nan", "inf", "-inf", "1e999", "-1e999", "abc", "1.2.3", "", "[]", "{}", "0x", "1e", "--1", "NaN"]
BAD_INTEGERS = ["99999999999999999999999", "1e30", "2.5", "nan", "inf", "abc", "", "-99999999999999999999", "1,2"]
BAD_BOOLEANS = ["maybe", "2", "nan", "", "[]", "yes please"]
BAD_SIZES = ["abc", "1,,2", "nan", "99999999999999999999", "[[[", "", "0", "-1,2", "2.5,3", "1e30"]


def _kind(annotation: typing.Any) -> str | None:
    """The kind of value a config field holds, by its annotation; None for strings and anything else."""
    text = str(annotation).replace("typing.", "")
    if "tuple" in text or "Sequence" in text or "list" in text:
        return "sizes"
    if text.startswith("bool") or annotation is bool:
        return "boolean"
    if "float" in text:
        return "number"
    if text.startswith("int") or annotation is int:
        return "integer"
    return None


def _fields(agent: str) -> list[tuple[str, str]]:
    config_class = registry.get_agent(agent).make_config
    hints = typing.get_type_hints(config_class)
    fields = [(f.name, _kind(hints.get(f.name, f.type))) for f in dataclasses.fields(config_class)]
    return [(name, kind) for name, kind in fields if kind is not None]


def _set_cases() -> list[tuple[str, list[str]]]:
    rng = random.Random(45)
    agents = sorted(registry.AGENT_LOADERS)
    bad = {"number": BAD_NUMBERS, "integer": BAD_INTEGERS, "boolean": BAD_BOOLEANS, "sizes": BAD_SIZES}
    cases = []
    for index in range(NUM_SET_CASES):
        agent = rng.choice(agents)
        if index % 10 == 9:  # a field the agent does not have
            name = "".join(rng.choice("abcdefghij_") for _ in range(rng.randint(1, 30))) + "_zz"
            assignments = [f"{name}=1"]
        else:
            name, kind = rng.choice(_fields(agent))
            assignments = [f"{name}={rng.choice(bad[kind])}"]
            if index % 10 == 4:  # the same field twice: refused even when each value would do
                assignments = [f"{name}=1", f"{name}=2"]
        cases.append((agent, [flag for a in assignments for flag in ("--set", a)]))
    return cases


def _config_files(rng: random.Random) -> list[bytes]:
    return [
        bytes(rng.randrange(256) for _ in range(rng.randint(1, 300))),
        b"config:\n  learning_rate: !!python/object/apply:os.system ['touch owned']\n",
        b"!!python/name:os.system\n",
        b"config: &a\n  hidden_sizes: *a\n",
        b"[" * rng.randint(1_000, 30_000) + b"]" * 30_000,
        b"config:\n  learning_rate: .nan\n",
        b"config:\n  batch_size: " + str(rng.randint(2**40, 2**80)).encode() + b"\n",
        b"config:\n  hidden_sizes: {a: 1}\n",
        b"config: [1, 2, 3]\n",
        b"- just\n- a\n- list\n",
        b"config:\n  no_such_field_" + str(rng.randrange(1000)).encode() + b": 1\n",
        b"agent: not-an-agent\nconfig: {}\n",
        b"config:\n  discount: 1e999\n",
        b"\t\tbad: [indent\n",
    ]


def _refused(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as done:
        main(argv)
    captured = capsys.readouterr()
    assert done.value.code == 2, (argv, captured.err[-500:])
    assert "Traceback" not in captured.err + captured.out, argv
    message = captured.err[captured.err.index("error: ") :].strip()
    assert message and "\n\n" not in message and len(message) < 2_000, (argv, message[:300])
    return message


@pytest.mark.timeout(600)
def test_generated_bad_set_values_are_refused_for_every_agent(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for index, (agent, flags) in enumerate(_set_cases()):
        if index % 4 == 3:
            _refused(["run", agent, "--no-progress", "--max-steps", "1", "--eval-every", "0", *flags], capsys)
            assert list(tmp_path.iterdir()) == [], (agent, flags)
        else:
            _refused(["config", agent, *flags], capsys)


@pytest.mark.timeout(600)
def test_generated_bad_config_files_are_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rng = random.Random(45)
    agents = sorted(registry.AGENT_LOADERS)
    index = 0
    while index < NUM_CONFIG_CASES:
        for text in _config_files(rng):
            if index == NUM_CONFIG_CASES:
                break
            path = tmp_path / f"case-{index}.yaml"
            path.write_bytes(text)
            agent = rng.choice(agents)
            if index % 4 == 3:
                _refused(["run", agent, "--no-progress", "--max-steps", "1", "--config", path.name], capsys)
            else:
                _refused(["config", agent, "--config", path.name], capsys)
            path.unlink()
            assert list(tmp_path.iterdir()) == [], (agent, text[:80])
            index += 1
    assert not (tmp_path / "owned").exists()
