"""Experiment checkpoints: resume after SIGKILL, replay restored, clear errors for bad directories."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from acme import specs
from acme.experiments import CheckpointingConfig, ExperimentCheckpointer, ExperimentConfig, run_experiment
from acme.experiments.checkpointing import REPLAY, experiment_identity, reverb_checkpointer
from acme.experiments.interrupt import StopAtNextCheck
from acme.utils.checkpoint_files import CheckpointError, CheckpointMismatchError, CorruptCheckpointWarning
from tests.experiments.resumable_run import make_config

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module", params=["local", pytest.param("reverb", marks=pytest.mark.reverb)])
def finished_run(request, tmp_path_factory):
    """``(directory, result, replay backend)`` of a finished 1,200-step run (several checkpoints kept)."""
    directory = str(tmp_path_factory.mktemp("finished") / "ckpt")
    result = run_experiment(make_config(directory, 1_200), progress=False, replay=request.param)
    return directory, result, request.param


def _copy(finished_run, tmp_path) -> str:
    target = str(tmp_path / "ckpt")
    shutil.copytree(finished_run[0], target)
    return target


def _replay_sizes(restored, replay: str) -> dict:
    """What the checkpoint's replay itself holds (not its metadata): local tables' items, or a reverb server's."""
    if replay == "local":
        return {name: len(table["keys"]) for name, table in restored.replay_state.items()}
    import reverb

    from acme.replay.reverb_tables import to_reverb_tables

    config = make_config(os.path.dirname(restored.path), 1)
    checkpointer = ExperimentCheckpointer(config.checkpointing, experiment_identity(config))
    tables = to_reverb_tables(config.builder.make_replay_tables(_spec(config), None))
    server = reverb.Server(tables, checkpointer=reverb_checkpointer(*checkpointer.prepare_replay(restored)))
    try:
        client = reverb.Client(f"localhost:{server.port}")
        return {name: info.current_size for name, info in client.server_info().items()}
    finally:
        server.stop()


def _checkpoints(directory: str) -> list[int]:
    return sorted(int(n.split("-")[1]) for n in os.listdir(directory) if n.startswith("ckpt-"))


def test_checkpointing_config_rejects_bad_values(tmp_path):
    with pytest.raises(ValueError, match="every_minutes, every_learner_steps or both"):
        CheckpointingConfig(str(tmp_path), every_minutes=None)
    with pytest.raises(ValueError, match="every_minutes must be a positive number"):
        CheckpointingConfig(str(tmp_path), every_minutes=0)
    with pytest.raises(ValueError, match="every_learner_steps must be a positive integer"):
        CheckpointingConfig(str(tmp_path), every_learner_steps=2.5)
    with pytest.raises(ValueError, match="keep must be an integer >= 1"):
        CheckpointingConfig(str(tmp_path), keep=0)
    with pytest.raises(ValueError, match="directory must be a non-empty path"):
        CheckpointingConfig("")
    config = make_config(str(tmp_path), 100)
    with pytest.raises(TypeError, match="checkpointing must be an acme.experiments.CheckpointingConfig"):
        dataclasses.replace(config, checkpointing=str(tmp_path))
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.checkpointing.keep = 5


def test_a_finished_run_left_consistent_checkpoints(finished_run):
    directory, result, replay = finished_run
    steps = _checkpoints(directory)
    assert len(steps) == 3  # keep=3 by default; older ones were pruned
    assert steps[-1] == result.learner_steps
    restored = ExperimentCheckpointer(
        make_config(directory, 1).checkpointing, experiment_identity(make_config(directory, 1))
    ).restore()
    assert restored.loop["actor_steps"] == result.actor_steps == 1_200
    assert restored.replay_items["priority_table"] > 1_000
    assert restored.replay_backend == replay
    assert os.path.isdir(os.path.join(restored.path, REPLAY)) == (replay == "reverb")
    assert _replay_sizes(restored, replay) == restored.replay_items


def test_a_checkpoint_resumes_only_with_the_backend_that_saved_its_replay(finished_run, tmp_path):
    directory = _copy(finished_run, tmp_path)
    other = "reverb" if finished_run[2] == "local" else "local"
    with pytest.raises(
        CheckpointMismatchError, match=f"saved by the '{finished_run[2]}' backend.*--replay {finished_run[2]}"
    ):
        run_experiment(make_config(directory, 1_300), progress=False, replay=other)


@pytest.mark.parametrize("replay", ["local", pytest.param("reverb", marks=pytest.mark.reverb)])
def test_sigkill_mid_run_then_resume_continues_from_the_checkpoint(tmp_path, capsys, replay):
    """A subprocess run is SIGKILLed; the resumed run restores learner steps, actor steps and replay."""
    directory = str(tmp_path / "ckpt")
    env = {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.experiments.resumable_run", directory, "100000", "50", replay],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        while len(_checkpoints(directory) if os.path.isdir(directory) else []) < 3 or _checkpoints(directory)[-1] < 150:
            assert process.poll() is None, "the run ended before it was killed"
            assert time.monotonic() < deadline, "no checkpoints within 300 s"
            time.sleep(0.2)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == -signal.SIGKILL

    config = make_config(directory, 100_000)
    before = ExperimentCheckpointer(config.checkpointing, experiment_identity(config)).restore()
    saved_actor_steps = before.loop["actor_steps"]
    saved_items = before.replay_items["priority_table"]
    assert before.learner_steps >= 150 and saved_actor_steps > 0 and saved_items > 0
    assert before.actor_state["num_steps"] == saved_actor_steps  # the actor's exploration schedule step

    # The replay checkpoint saved with that state holds exactly its items.
    assert _replay_sizes(before, replay) == {"priority_table": saved_items}

    # Resume with a budget 400 steps past the checkpoint.
    capsys.readouterr()
    result = run_experiment(make_config(directory, saved_actor_steps + 400), progress=False, replay=replay)
    out = capsys.readouterr().out
    assert (
        f"Resuming from checkpoint {before.path}: actor steps {saved_actor_steps}, learner steps "
        f"{before.learner_steps}, replay items: priority_table {saved_items}."
    ) in out
    assert result.actor_steps == saved_actor_steps + 400
    assert result.learner_steps > before.learner_steps + 10  # learning went on from the restored step
    # Evaluations from before the kill are kept, and counting went on from the checkpoint.
    assert [e.actor_steps for e in result.evaluations][: len(before.loop["evaluations"])] == [
        e[0] for e in before.loop["evaluations"]
    ]
    assert result.evaluations[-1].actor_steps == saved_actor_steps + 400
    after = ExperimentCheckpointer(config.checkpointing, experiment_identity(config)).restore()
    assert after.loop["actor_steps"] == saved_actor_steps + 400 and after.loop["resumes"] == 1
    assert after.actor_state["num_steps"] == saved_actor_steps + 400  # counted on from the restored step
    assert after.replay_items["priority_table"] > saved_items


def test_stop_at_next_check_handlers_are_installed_only_when_enabled_and_restored_after():
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    with StopAtNextCheck(enabled=False) as disabled:
        assert signal.getsignal(signal.SIGINT) is before[signal.SIGINT]
    assert not disabled.requested
    messages = []
    with StopAtNextCheck(announce=messages.append) as interrupt:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.1)
        assert interrupt.requested and messages[0].startswith("Ctrl-C: saving a checkpoint")
        with pytest.raises(KeyboardInterrupt):  # a second signal stops at once
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.5)
    assert {signum: signal.getsignal(signum) for signum in before} == before


def test_sigterm_saves_like_ctrl_c_then_exits_with_status_143(capsys):
    messages = []
    with StopAtNextCheck(announce=messages.append) as interrupt:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.1)
        assert interrupt.requested and messages == [
            "SIGTERM: saving a checkpoint at the next check, then stopping (SIGTERM again stops now, "
            "losing the steps since the last checkpoint)."
        ]
        with pytest.raises(SystemExit) as stopped:
            interrupt.stop("at actor step 7, after a checkpoint")
    assert stopped.value.code == 143
    assert capsys.readouterr().err.strip() == "Stopped by SIGTERM at actor step 7, after a checkpoint."


_SWALLOWS_SYSTEM_EXIT = """
import time
from acme.experiments import interrupt
interrupt._UNWIND_SECONDS = 1.0
with interrupt.StopAtNextCheck(enabled=False):
    print("ready", flush=True)
    while True:  # code that swallows the SystemExit the handler raises (a callback that C++ code made, say)
        try:
            time.sleep(0.05)
        except SystemExit:
            pass
"""


def test_sigterm_without_checkpoints_ends_the_run_with_143_even_when_its_exit_is_swallowed():
    process = subprocess.Popen(
        [sys.executable, "-c", _SWALLOWS_SYSTEM_EXIT], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout.readline().strip() == "ready"
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)  # ends about 1 s later; the timeout only guards against a hang
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 143
    assert "Stopped by SIGTERM; nothing was saved" in err


def _spec(config: ExperimentConfig) -> specs.EnvironmentSpec:
    return specs.make_environment_spec(config.environment_factory(0))


def test_a_finished_run_resumed_with_its_budget_does_nothing_more(finished_run, tmp_path, capsys):
    directory = _copy(finished_run, tmp_path)
    latest = _checkpoints(directory)[-1]
    result = run_experiment(make_config(directory, 1_200), progress=False, replay=finished_run[2])
    assert "Resuming from checkpoint" in capsys.readouterr().out
    assert result.actor_steps == 1_200 and result.learner_steps == latest
    assert len(result.evaluations) == len(finished_run[1].evaluations)


def test_a_truncated_newest_checkpoint_falls_back_to_the_previous_one(finished_run, tmp_path, capsys):
    directory = _copy(finished_run, tmp_path)
    steps = _checkpoints(directory)
    replay = finished_run[2]  # the local tables are in leaves.npz, reverb's in replay/chunks.tfrecord
    damaged = os.path.join(
        directory, f"ckpt-{steps[-1]}", *((REPLAY, "chunks.tfrecord") if replay == "reverb" else ("leaves.npz",))
    )
    with open(damaged, "r+b") as f:
        f.truncate(os.path.getsize(damaged) // 2)
    config = make_config(directory, 1_200)
    with pytest.warns(CorruptCheckpointWarning, match=f"ckpt-{steps[-1]}.*corrupt or truncated"):
        restored = ExperimentCheckpointer(config.checkpointing, experiment_identity(config)).restore()
    assert restored.learner_steps == steps[-2]
    # A resumed run starts from the older checkpoint, with its replay.
    with pytest.warns(CorruptCheckpointWarning):
        run_experiment(config, progress=False, replay=replay)
    assert f"Resuming from checkpoint {directory}/ckpt-{steps[-2]}" in capsys.readouterr().out


def test_only_corrupt_checkpoints_are_an_error_not_a_fresh_start(finished_run, tmp_path):
    directory = _copy(finished_run, tmp_path)
    for step in _checkpoints(directory):
        with open(os.path.join(directory, f"ckpt-{step}", "leaves.npz"), "r+b") as f:
            f.truncate(100)
    before = sorted(os.listdir(directory))
    with pytest.warns(CorruptCheckpointWarning), pytest.raises(CheckpointError, match="is unreadable"):
        run_experiment(make_config(directory, 1_200), progress=False)
    assert sorted(os.listdir(directory)) == before  # nothing was overwritten


def test_a_checkpoint_of_another_network_shape_or_environment_is_refused(finished_run, tmp_path):
    directory = _copy(finished_run, tmp_path)
    with pytest.raises(CheckpointMismatchError, match="learner state of other shapes"):
        run_experiment(make_config(directory, 1_500, hidden_sizes=(16,)), progress=False, replay=finished_run[2])
    other_env = dataclasses.replace(make_config(directory, 1_500), environment_id="gymnasium:Acrobot-v1")
    with pytest.raises(CheckpointMismatchError, match="Acrobot"):
        run_experiment(other_env, progress=False, replay=finished_run[2])


def test_a_directory_that_is_not_a_checkpoint_directory_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("my results")
    with pytest.raises(CheckpointError, match=r"not an experiment checkpoint directory.*notes.txt"):
        run_experiment(make_config(str(tmp_path), 500), progress=False)
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    with pytest.raises(CheckpointError, match="Cannot use .* as the experiment checkpoint directory"):
        run_experiment(make_config(str(blocker / "ckpt"), 500), progress=False)


def test_resume_puts_a_checkpoint_into_the_built_pieces_it_is_given(tmp_path):
    """One step after building, for every runner: learner state, counts, replay tables and actor state."""
    import jax
    import numpy as np

    from acme.experiments.checkpointing import open_resume
    from acme.replay.local_client import LocalReplay
    from acme.utils import counting, loggers

    config = make_config(str(tmp_path / "ckpt"), 600)
    run_experiment(config, progress=False)
    spec = _spec(config)
    builder = config.builder

    def built():
        networks = config.network_factory(spec)
        policy = builder.make_policy(networks, spec)
        replay = LocalReplay(builder.make_replay_tables(spec, policy), seed=0)
        quiet = lambda *a, **k: loggers.NoOpLogger()  # noqa: E731
        learner = builder.make_learner(jax.random.PRNGKey(0), networks, iter(()), quiet, spec, replay)
        actor = builder.make_actor([jax.random.PRNGKey(1)], policy, spec, learner, [builder.make_adder(replay, spec)])
        return learner, counting.Counter(), replay, actor

    resume = open_resume(config, "local")
    restored = resume.restored
    learner, counter, replay, actor = built()
    assert resume.restore(learner, counter, replay, actor)
    assert int(learner.save().steps) == restored.learner_steps
    assert counter.get_counts() == {**restored.counts, "learner_steps": restored.learner_steps}
    assert {name: info.current_size for name, info in replay.server_info().items()} == restored.replay_items
    np.testing.assert_array_equal(actor.save()["num_steps"], restored.actor_state["num_steps"])
    assert resume.resumes == 1 and resume.loop["actor_steps"] == 600

    # A replay node loaded its tables when it was built: without load_replay they are left as they are.
    learner, counter, replay, actor = built()
    resume.restore(learner, replay=replay, load_replay=False, check_replay=False)
    assert all(info.current_size == 0 for info in replay.server_info().values())
    with pytest.raises(CheckpointError, match="The replay restored"):
        resume.restore(replay=replay, load_replay=False)

    nothing = open_resume(dataclasses.replace(config, checkpointing=None))
    assert not nothing.restore(learner, counter, replay, actor)
    assert (nothing.counts, nothing.loop, nothing.replay_state, nothing.reverb_paths(), nothing.resumes) == (
        {},
        {},
        None,
        None,
        0,
    )
