"""A reverb feature asked for without the 'reverb' extra is one clear error that names the extra."""

from __future__ import annotations

import pytest

from acme.utils import extras
from baselines.cli import main


@pytest.fixture
def without_reverb(monkeypatch):
    """As on the core stack: neither reverb nor TensorFlow can be found."""
    monkeypatch.setattr(extras, "available", lambda module: False)


def test_require_names_the_extra_and_its_install_line(without_reverb):
    with pytest.raises(extras.MissingExtraError) as error:
        extras.require("reverb", "--replay reverb")
    assert str(error.value) == (
        "--replay reverb needs reverb, which comes with the 'reverb' extra and is not installed: "
        'pip install -e ".[reverb]" -c constraints.txt (Python 3.11 only). The core install has no reverb.'
    )


def test_an_unknown_optional_module_is_refused():
    known = r"\['mlflow', 'reverb', 'tensorflow', 'wandb'\]"
    with pytest.raises(ValueError, match=r"No extra provides 'torch'; known optional modules: " + known):
        extras.available("torch")


def test_cli_reverb_replay_without_the_extra_exits_2_naming_it(without_reverb, tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        main(["run", "dqn", "--no-progress", "--run-dir", str(tmp_path / "run"), "--replay", "reverb"])
    assert done.value.code == 2
    assert "error: --replay reverb needs reverb, which comes with the 'reverb' extra" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
