"""Bad command-line and config input (issue #45): each is refused with exit status 2 and one message that names
what was wrong and what is accepted, with no traceback, nothing built and no run folder left behind.

Each test runs the entry point in this process (``baselines.cli.main``) from an empty working directory, so a
default run folder (``runs/...``) would show up in it. None of them trains.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np
import pytest

from acme.environments import factory
from acme.snapshots import save_policy_snapshot
from acme.utils.checkpoint_files import tree_signature
from agents.dqn import DQNConfig
from baselines import parser as baselines_parser
from baselines import registry
from baselines.cli import main

ENV = "gymnasium:CartPole-v1"
LONG = 100_000  # characters of a hostile string
# A run of one step without evaluation: were a bad value let through, the test fails at once instead of training.
RUN = ["run", "dqn", "--env", ENV, "--no-progress", "--max-steps", "1", "--eval-every", "0"]


@pytest.fixture
def empty_cwd(tmp_path, monkeypatch):
    """An empty working directory (a run's default folder, runs/<...>, would be made here)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _refused(argv: list[str], capsys) -> str:
    """Runs ``argv``, asserts exit status 2 with one error paragraph and no traceback; returns the message."""
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    captured = capsys.readouterr()
    err = captured.err
    assert "Traceback" not in err and "Traceback" not in captured.out
    message = err[err.index("error: ") :].strip()
    assert "\n" not in message
    assert len(message) < 2_000, message[:300]  # user input is echoed cut short
    return message


def _left_nothing(directory, *kept: str) -> None:
    assert sorted(p.name for p in directory.iterdir()) == sorted(kept)


@pytest.mark.parametrize(
    "assignment, field, shown",
    [
        ("learning_rate=inf", "learning_rate", "inf"),
        ("learning_rate=nan", "learning_rate", "nan"),
        ("learning_rate=-inf", "learning_rate", "-inf"),
        ("discount=nan", "discount", "nan"),
        ("epsilon_start=nan", "epsilon_start", "nan"),
        ("samples_per_insert=inf", "samples_per_insert", "inf"),
        ("huber_loss_delta=1e400", "huber_loss_delta", "inf"),
        ("learning_rate=" + "1" * 400, "learning_rate", "inf"),
    ],
)
def test_a_non_finite_number_is_refused_before_the_run_folder_is_made(empty_cwd, capsys, assignment, field, shown):
    message = _refused([*RUN, "--set", assignment], capsys)
    assert f"Invalid DQNConfig: {field} must be a finite number, got {shown}." in message
    _left_nothing(empty_cwd)


@pytest.mark.parametrize(
    "assignment, expected",
    [
        (
            "batch_size=99999999999999999999999",
            "batch_size must be an integer >= 1 and at most 1,048,576 (2**20), got 99999999999999999999999.",
        ),
        ("n_step=2000000", "n_step must be an integer >= 1 and at most 1,048,576 (2**20), got 2000000."),
        ("batch_size=" + "7" * 400, "batch_size must be an integer >= 1 and at most 1,048,576 (2**20), got 7777"),
        ("max_replay_size=1e12", "max_replay_size must be an integer >= 1 and at most 1,073,741,824 (2**30)"),
        ("target_update_period=1e10", "target_update_period must be an integer >= 1 and at most 2,147,483,647"),
        ("epsilon_decay_steps=1e10", "epsilon_decay_steps must be an integer >= 0 and at most 2,147,483,647"),
        ("hidden_sizes=64,1000000", "layer 1 of (64, 1000000) is 1000000."),
        ("hidden_sizes=" + ",".join(["8"] * 2_000), "hidden_sizes must be a sequence of at most 1,024 items"),
    ],
)
def test_an_absurd_size_is_refused_naming_the_field_and_its_bound(empty_cwd, capsys, assignment, expected):
    message = _refused([*RUN, "--set", assignment], capsys)
    assert expected in message
    _left_nothing(empty_cwd)


@pytest.mark.parametrize(
    "flag, value, expected",
    [
        (
            "--max-steps",
            "99999999999",
            "argument --max-steps: must be an integer >= 1 and at most 2,147,483,647, got 99999999999.",
        ),
        ("--num-envs", "100000000", "--num-envs must be an integer >= 1 and at most 1,048,576, got 100000000."),
        ("--eval-episodes", str(2**21), "argument --eval-episodes: must be an integer >= 1 and at most 1,048,576"),
        (
            "--checkpoint-every-steps",
            str(2**31),
            "argument --checkpoint-every-steps: must be an integer >= 1 and at most 2,147",
        ),
    ],
)
def test_run_flags_that_count_have_upper_bounds(empty_cwd, capsys, flag, value, expected):
    assert expected in _refused([*RUN, flag, value], capsys)
    _left_nothing(empty_cwd)


def test_a_field_set_twice_is_refused_with_both_values(empty_cwd, capsys):
    argv = [*RUN, "--set", "learning_rate=1e-3", "--set", "learning_rate=5e-4"]
    message = _refused(argv, capsys)
    assert message == "error: --set learning_rate is given twice ('1e-3' and '5e-4'); give each field once."
    _left_nothing(empty_cwd)
    # The same for `config` and `plan`, which read --set the same way.
    for command in ("config", "plan"):
        assert "--set n_step is given twice ('3' and '5')" in _refused(
            [command, "dqn", "--set", "n_step=3", "--set", "n_step=5"], capsys
        )


ALIAS_BOMB = "".join(
    [
        "agent: dqn\n",
        "x0: &a [1, 1, 1, 1, 1, 1, 1, 1, 1]\n",
        *(f"x{i}: &{chr(98 + i - 1)} [{', '.join([f'*{chr(97 + i - 1)}'] * 9)}]\n" for i in range(1, 12)),
        "config:\n  hidden_sizes: *l\n",
    ]
)


def test_a_yaml_alias_bomb_is_refused_at_once(empty_cwd, capsys):
    """9**12 leaves in 14 lines: read whole, printing or checking it would not end."""
    (empty_cwd / "bomb.yaml").write_text(ALIAS_BOMB)
    start = time.perf_counter()
    for command in ("run", "config"):
        argv = [*RUN, "--config", "bomb.yaml"] if command == "run" else ["config", "dqn", "--config", "bomb.yaml"]
        message = _refused(argv, capsys)
        assert "--config bomb.yaml: not valid YAML (anchors and aliases (&name, *name) are not read" in message
        assert message.endswith("are not read in a config file at line 2, column 5).")
    assert time.perf_counter() - start < 30  # a guard against a hang, not a timing
    _left_nothing(empty_cwd, "bomb.yaml")


@pytest.mark.parametrize(
    "name, text, expected",
    [
        ("anchor.yaml", "config:\n  hidden_sizes: &h [64, 64]\n", "anchors and aliases"),
        ("big.yaml", "# " + "x" * (1 << 20) + "\n", "the file is over 1,048,576 bytes"),
        ("deep.yaml", "[" * 50_000 + "]" * 50_000, "nested too deeply"),
        ("deep.json", "[" * 50_000 + "]" * 50_000, "nested too deeply"),
        ("digits.yaml", "learning_rate: " + "9" * 5_000 + "\n", "not valid YAML"),
        ("nan.json", '{"learning_rate": NaN}', "learning_rate must be a finite number, got nan."),
        ("huge.yaml", f"learning_rate: {'9' * 400}\n", "learning_rate must be a finite number"),
        ("huge.json", f'{{"batch_size": {"9" * 400}}}', "batch_size must be an integer >= 1 and at most 1,048,576"),
        ("list.yaml", "hidden_sizes: [[64, 64], 64]\n", "hidden_sizes must be a sequence of at most 1,024 items, each"),
        ("text.yaml", "batch_size: lots\n", "--config text.yaml: batch_size takes an integer, got 'lots'."),
        ("binary.yaml", b"\xff\xfe\x00", "not UTF-8 text"),
    ],
)
def test_a_config_file_is_small_and_plain(empty_cwd, capsys, name, text, expected):
    path = empty_cwd / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    message = _refused([*RUN, "--config", name], capsys)
    assert expected in message
    _left_nothing(empty_cwd, name)


def test_a_config_file_value_yaml_reads_as_a_string_is_read_as_set_reads_it(empty_cwd, capsys):
    (empty_cwd / "plain.yaml").write_text("learning_rate: 3e-4\nhidden_sizes: 32,32\nmax_abs_reward: none\n")
    assert main(["config", "dqn", "--config", "plain.yaml"]) == 0
    out = capsys.readouterr().out
    assert "  learning_rate: 0.0003  #" in out and "  hidden_sizes: [32, 32]  #" in out


def _snapshot(directory, environment: str = ENV, **config_changes) -> str:
    """A policy snapshot of DQN on ``environment`` whose stored config is changed as given (as a hand-made or
    damaged snapshot would hold it), with a parameter signature, so that loading it would build a learner."""
    config = {**dataclasses.asdict(DQNConfig()), **config_changes}
    params = {"w": np.zeros(3, np.float32)}
    metadata = {"agent": "dqn", "environment_id": environment, "agent_config": config}
    return save_policy_snapshot(str(directory), params, {**metadata, "params_signature": tree_signature(params)})


@pytest.mark.parametrize(
    "changes, expected",
    [
        (dict(hidden_sizes=[10**12]), "layer 0 of (1000000000000,) is 1000000000000."),
        (dict(learning_rate=float("nan")), "learning_rate must be a finite number, got nan."),
        (dict(batch_size=2**40), "batch_size must be an integer >= 1 and at most 1,048,576 (2**20)"),
        (dict(hidden_sizes="wide"), "agent_config: hidden_sizes takes an integer, got 'wide'."),
        (dict(no_such_field=1), "agent_config: DQNConfig has no field 'no_such_field'."),
    ],
)
def test_evaluate_checks_a_snapshots_config_before_building_anything(empty_cwd, capsys, monkeypatch, changes, expected):
    snapshot = _snapshot(empty_cwd / "policy", **changes)

    def built(*args, **kwargs):
        raise AssertionError("an environment or network was built from a config no check passed")

    monkeypatch.setattr(registry, "make_agent_environment", built)
    message = _refused(["evaluate", "--snapshot", snapshot], capsys)
    assert f"The snapshot at {snapshot} holds an agent_config that dqn's config refuses:" in message
    assert expected in message
    _left_nothing(empty_cwd, "policy")


def _cut(text: str) -> str:
    """How an error shows a long string: its first 80 characters and its length."""
    return f"{text[:80]!r}... ({len(text):,} characters)"


def test_a_long_environment_id_is_echoed_cut_short(empty_cwd, capsys):
    for environment in (f"gymnasium:{'A' * LONG}", "A" * LONG):
        message = _refused([*RUN, "--env", environment], capsys)
        assert f"Environment id {_cut(environment)} is too long: ids are '<prefix>:<name>' of at most 1,000" in message
    # Under the length limit, each family's own message cuts the name too.
    for environment, shown in (
        (f"gymnasium:{'B' * 900}", f"gymnasium has no environment {_cut('B' * 900)}."),
        (f"nosuch{'C' * 900}:x", f"Unknown environment family {_cut('nosuch' + 'C' * 900)}"),
        (f"{'D' * 900}", f"Environment id {_cut('D' * 900)} has no family prefix."),
        (f"jax:{'E' * 900}", f"There is no JAX-native environment {_cut('E' * 900)}."),
        (f"memory:{'F' * 900}", f"No memory task {_cut('F' * 900)};"),
        (f"bsuite:{'G' * 900}", f"bsuite has no environment {_cut('G' * 900)}."),
    ):
        assert shown in _refused([*RUN, "--env", environment], capsys)
    _left_nothing(empty_cwd)


def test_an_evaluated_snapshots_long_environment_id_is_echoed_cut_short(empty_cwd, capsys):
    environment = f"gymnasium:{'A' * LONG}"
    snapshot = _snapshot(empty_cwd / "policy", environment)
    message = _refused(["evaluate", "--snapshot", snapshot], capsys)
    assert f"names the environment {_cut(environment)}, which the environment factory does not make" in message


@pytest.mark.parametrize(
    "argv, shown",
    [
        (
            ["config", "dqn", "--set", f"learning_rate={'x' * LONG}"],
            f"--set learning_rate takes a number, got {_cut('x' * LONG)}.",
        ),
        (["config", "dqn", "--set", f"{'y' * LONG}=1"], f"--set: DQNConfig has no field {_cut('y' * LONG)}."),
        (
            ["config", "dqn", "--set", f"torso={'z' * LONG}"],
            f"torso must be one of auto, mlp, nature, small, pooled, resnet, got {_cut('z' * LONG)}.",
        ),
        (
            ["config", "dqn", "--set", "q" * LONG],
            f"--set takes FIELD=VALUE, e.g. --set learning_rate=3e-4; got {_cut('q' * LONG)}.",
        ),
        (["run", "w" * LONG], f"argument agent: invalid choice: {_cut('w' * LONG)} (choose from 'bc', "),
        (["v" * LONG], f"argument command: invalid choice: {_cut('v' * LONG)} (choose from 'run', "),
        (
            ["run", "dqn", "--seed", "9" * LONG],
            "argument --seed: must be an integer >= 0 and at most 4,294,967,295, got '9999",
        ),
    ],
)
def test_long_values_and_field_names_are_echoed_cut_short(empty_cwd, capsys, argv, shown):
    assert shown in _refused(argv, capsys)
    _left_nothing(empty_cwd)


def test_help_lists_every_command_and_every_environment_family(capsys):
    """Both are made from what the parser and the environment factory hold, so neither can drift."""
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    usage = "".join(out[: out.index("\n\n")].split())
    parser = baselines_parser.make_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert sorted(commands) == sorted(
        ["run", "config", "plan", "list", "evaluate", "record", "reproduce", "sweep", "report"]
    )
    assert "{" + ",".join(commands) + "}" in usage
    families = {"gymnasium", "bsuite", "dm_control", "atari", "memory", "jax"}
    families |= {"gymnax", "brax", "playground", "jumanji", "craftax", "navix"}  # the JAX libraries
    assert set(factory.KNOWN_PREFIXES) == set(factory._FACTORIES) == families
    for family in factory.FAMILIES:
        assert f"  {family.prefix}:{family.name_form} " in out
        for example in family.examples:
            assert example in out
    from acme.environments.jax_native import ENVIRONMENTS

    jax_examples = next(f.examples for f in factory.FAMILIES if f.prefix == "jax")
    assert all(example.split(":", 1)[1] in ENVIRONMENTS for example in jax_examples)


@pytest.mark.timeout(60)  # a FIFO opened for reading would wait for a writer forever
@pytest.mark.parametrize("kind, shown", [("fifo", "is a FIFO (named pipe)"), ("link", "is a character device")])
def test_a_config_file_that_is_not_a_regular_file_is_refused_without_reading_it(empty_cwd, capsys, kind, shown):
    import os

    if kind == "fifo":
        os.mkfifo(empty_cwd / "odd.yaml")
    else:
        os.symlink("/dev/zero", empty_cwd / "odd.yaml")
    message = _refused([*RUN, "--config", "odd.yaml"], capsys)
    assert f"--config odd.yaml: {shown}; only regular files are read here" in message
    _left_nothing(empty_cwd, "odd.yaml")
