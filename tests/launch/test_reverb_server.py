"""A reverb server leaves no temporary directory behind, and loads a checkpoint without progress chatter."""

from __future__ import annotations

import os
import tempfile

import pytest

import launch
from launch import reverb_server
from tests.launch import testlib


def _client(address: str):
    import reverb

    return reverb.Client(address)


def _fill(address: str, items: int) -> None:
    client = _client(address)
    for i in range(items):  # one chunk per item: reverb reports its progress every 100 chunks read
        client.insert([i], priorities={"items": 1.0})


@pytest.mark.reverb
def test_a_server_without_checkpoint_dir_makes_no_temporary_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where reverb's TempDirCheckpointer would go
    instance = launch.ReverbNode(testlib.reverb_tables).instantiate((), {}, host="127.0.0.1")
    try:
        _fill(instance.address, 3)
        assert _client(instance.address).server_info()["items"].current_size == 3
    finally:
        instance.stop()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.reverb
def test_loading_a_checkpoint_drops_only_reverb_progress_lines(tmp_path, capfd):
    first = launch.ReverbNode(testlib.reverb_tables, checkpoint_dir=str(tmp_path / "a")).instantiate(
        (), {}, host="127.0.0.1"
    )
    try:
        _fill(first.address, 250)
        saved = _client(first.address).checkpoint()
    finally:
        first.stop()
    capfd.readouterr()
    second = launch.ReverbNode(
        testlib.reverb_tables, checkpoint_dir=str(tmp_path / "b"), fallback_checkpoint_path=saved
    ).instantiate((), {}, host="127.0.0.1")
    try:
        assert _client(second.address).server_info()["items"].current_size == 100  # the table's max_size
    finally:
        second.stop()
    err = capfd.readouterr().err
    assert "Still reading compressed trajectory data" not in err
    assert "Completed reading compressed trajectory data" in err  # reverb's other messages still pass


def test_what_else_is_written_to_stderr_while_loading_is_kept_even_on_failure(capfd):
    with pytest.raises(RuntimeError, match="load failed"):
        with reverb_server._without_progress_lines():
            os.write(
                2,
                b"[reverb/cc/platform/tfrecord_checkpointer.cc:1] Still reading compressed trajectory data. "
                b"100 records have been read so far.\nreal problem\n",
            )
            raise RuntimeError("load failed")
    os.write(2, b"after\n")
    assert capfd.readouterr().err == "real problem\nafter\n"
