"""jax's persistent compilation cache as a run uses it: on in a private folder, off on request, refused in a folder
another user could write (jax runs the programs it finds there)."""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import pytest

from acme.experiments import RunOptions
from acme.jax import compile_cache


@pytest.fixture
def every_program_cached():
    """Programs that compile in under ``MIN_COMPILE_SECONDS`` are cached too; the cache is off again afterwards."""
    yield lambda: jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    compile_cache.enable(compile_cache.OFF)


def _compile(seed: float) -> None:
    jax.jit(lambda x: jnp.sin(x * seed) @ x.T)(jnp.ones((8, 8))).block_until_ready()


def test_programs_compiled_while_on_are_kept_and_none_while_off(tmp_path, every_program_cached):
    folder = tmp_path / "cache"
    assert compile_cache.enable(str(folder)) == str(folder)
    every_program_cached()
    _compile(2.0)
    kept = os.listdir(folder)
    assert kept and oct(os.stat(folder).st_mode & 0o777) == "0o700"
    assert compile_cache.size_bytes(str(folder)) > 0
    assert compile_cache.enable(compile_cache.OFF) is None
    _compile(3.0)
    assert os.listdir(folder) == kept


@pytest.mark.parametrize("mode", [0o777, 0o770])
def test_a_folder_others_can_write_is_refused(tmp_path, mode):
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(mode)
    with pytest.raises(ValueError, match="writable by another user .* jax runs the compiled programs"):
        compile_cache.enable(str(folder))


def test_a_file_is_refused(tmp_path):
    path = tmp_path / "file"
    path.write_text("")
    with pytest.raises((ValueError, FileExistsError)):
        compile_cache.enable(str(path))


def test_the_default_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(compile_cache.ENVIRONMENT_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert compile_cache.default_directory() == str(tmp_path / "acme" / "jax-compile")
    monkeypatch.setenv(compile_cache.ENVIRONMENT_VARIABLE, "off")
    assert compile_cache.default_directory() == "off"


def test_every_launcher_takes_the_option_and_an_empty_value_is_refused():
    """A Ray run's nodes keep their programs too: tests/baselines/test_exposure.py's Ray run checks it."""
    for launcher in ("local", "threads", "ray", "anakin"):
        assert RunOptions(launcher=launcher, compile_cache="/tmp/x").compile_cache == "/tmp/x"
    with pytest.raises(ValueError, match="must be a folder or 'off'"):
        RunOptions(launcher="local", compile_cache="")


# A run says where it keeps its programs and keeps them there, and with --compile-cache off keeps none and says
# nothing of it: tests/baselines/test_plan.py (test_an_on_device_run_over_devices_resumes_from_its_checkpoint_...),
# whose two on-device runs are those runs.
