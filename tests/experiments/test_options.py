"""RunOptions and LaunchOptions: each option described and checked once, for Python callers and the command line."""

from __future__ import annotations

import dataclasses

import pytest

import launch
from acme.experiments import RunOptions, make_distributed_experiment
from acme.experiments.options import from_flags
from baselines import cli, registry


@pytest.mark.parametrize(
    "fields, python_message, flags_message",
    [
        (
            {"launcher": "local", "num_actors": 3},
            "num_actors is for the threads or ray launchers; the local launcher runs the actor and learner",
            "--num-actors is for the threads or ray launchers",
        ),
        (
            {"launcher": "ray", "replay": "local"},
            "replay='local' keeps the tables inside one process",
            "--replay local keeps the tables inside one process",
        ),
        (
            {"launcher": "local", "replay": "server"},
            "replay='server' is for distributed runs",
            "--replay server is for distributed runs",
        ),
        (
            {"launcher": "threads", "bind_address": "127.0.0.1"},
            "bind_address is for the ray launcher; the threads launcher runs every node as a thread",
            "Use --launcher ray, or leave --bind-address out",
        ),
        (
            {"launcher": "anakin", "inference": "server"},
            "inference is for the threads or ray launchers; the anakin launcher keeps the environments",
            "--inference is for the threads or ray launchers",
        ),
        (
            {"launcher": "ray", "ray_address": "10.0.0.5:6379", "dashboard": True},
            "dashboard applies to a Ray instance that this run starts; a cluster joined with "
            "ray_address='10.0.0.5:6379'",
            "--dashboard applies to a Ray instance that this run starts; a cluster joined with "
            "--ray-address 10.0.0.5:6379",
        ),
        (
            {"inference_batch_size": 0},
            "inference_batch_size must be an integer >= 1 and at most 1,048,576, got 0",
            "--inference-batch-size",
        ),
        ({"num_actors": 10**30}, "num_actors must be an integer >= 1 and at most 65,536, got 10", "--num-actors"),
        ({"variable_poll_seconds": float("inf")}, "at most 86,400 (a day), got inf", "--variable-poll"),
        ({"variable_poll_seconds": -1.0}, "variable_poll_seconds must be a number of seconds >= 0", "--variable-poll"),
        ({"launcher": "cluster"}, "launcher must be one of local, threads, ray, anakin", "--launcher must be"),
        (
            {"launcher": "local", "num_seeds": 2},
            "num_seeds is for the anakin launcher; the local launcher runs the actor and learner",
            "--num-seeds is for the anakin launcher",
        ),
        (
            {"launcher": "anakin", "dataset": "episodes"},
            "dataset is for the local or threads or ray launchers; the anakin launcher keeps",
            "--dataset is for the local or threads or ray launchers",
        ),
        ({"stream_buffer": 10}, "stream_buffer streams a dataset; give dataset='DIR'", "give --dataset DIR"),
        ({"dataset": "d", "num_envs": 4}, "num_envs sets up actors", "--num-envs sets up actors"),
        ({"sweep": ("learning_rate", ())}, "sweep must be a config field and finite numbers", "--sweep must be"),
        ({"num_envs": 0}, "num_envs must be an integer >= 1 and at most 1,048,576, got 0", "--num-envs must be"),
    ],
)
def test_a_refusal_names_the_options_as_the_caller_wrote_them(fields, python_message, flags_message):
    with pytest.raises(ValueError, match="") as python:
        RunOptions(**fields)
    assert python_message in str(python.value)
    with pytest.raises(ValueError) as flags:
        from_flags(**fields)
    assert flags_message in str(flags.value)


def test_every_option_is_a_flag_of_run_and_a_keyword_of_make_distributed_experiment(capsys):
    """Adding an option is adding a field: the command line's flags and the program's keywords come from the
    fields, each with its description."""
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    config = registry.make_experiment_config("dqn", "gymnasium:CartPole-v1", seed=0, max_steps=100, eval_every=0)
    for field in dataclasses.fields(RunOptions):
        assert "--" + field.name.replace("_", "-") in help_text
        assert " ".join(field.metadata["help"].split()[:4]) in help_text
        if field.name not in ("launcher", "ray_address", "bind_address", "placement", "dashboard"):
            program = make_distributed_experiment(config, **{field.name: field.default})
            assert isinstance(program, launch.Program)


def test_options_are_given_once():
    config = registry.make_experiment_config("dqn", "gymnasium:CartPole-v1", seed=0, max_steps=100, eval_every=0)
    with pytest.raises(TypeError, match="not both"):
        make_distributed_experiment(config, RunOptions(num_actors=1), replay="learner")
    with pytest.raises(ValueError, match="threads or ray launcher, not 'local'"):
        make_distributed_experiment(config, RunOptions(launcher="local"))
    with pytest.raises(TypeError, match="not both"):
        launch.launch(launch.Program("p"), launch.LaunchOptions(), timeout=1.0)


def test_run_options_give_the_launchers_own_options_with_the_placement_parsed():
    options = RunOptions(launcher="ray", placement='{"learner": {"num_gpus": 1}}', num_actors=4)
    launch_options = options.launch_options()
    assert launch_options.launcher == "ray" and launch_options.placement["learner"] == launch.Resources(num_gpus=1)
    assert options.actors == 4 and RunOptions().actors == 2
    assert RunOptions(launcher="local").replay_backend == "local"
    with pytest.raises(ValueError, match="for the threads and ray launchers, not 'local'"):
        RunOptions(launcher="local").launch_options()


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"launcher": "cluster"}, "unknown launcher 'cluster'"),
        ({"bind_address": "127.0.0.1"}, "bind_address is only used by the ray launcher, not the threads launcher"),
        ({"launcher": "ray", "address": "10.0.0.5:6379", "dashboard": True}, "a cluster joined with address="),
        ({"launcher": "ray", "bind_address": "my-host"}, "bind_address: bind address must be an IP address"),
        ({"timeout": -1}, "timeout must be a number of seconds >= 0 or None"),
        ({"grace_period": float("nan")}, "grace_period must be a number of seconds >= 0, got nan"),
    ],
)
def test_launch_options_are_checked_on_construction(fields, message):
    with pytest.raises(ValueError, match=""):
        launch.LaunchOptions(**fields)
    with pytest.raises(ValueError) as error:
        launch.launch(launch.Program("p"), **fields)
    assert message in str(error.value)
