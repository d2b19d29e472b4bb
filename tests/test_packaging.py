"""Import hygiene: quiet imports and the one-way layering of the packages."""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_importing_the_library_prints_nothing():
    code = "import acme, acme.experiments, acme.adders, acme.datasets, agents.dqn, launch, baselines.registry"
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert done.stderr == "", f"import printed:\n{done.stderr}"


def _imports(package: str) -> set[str]:
    found = set()
    for directory, _, files in os.walk(os.path.join(ROOT, package)):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(directory, name)) as f:
                    for line in f:
                        match = re.match(r"\s*(?:from|import)\s+([a-zA-Z_]+)", line)
                        if match:
                            found.add(match.group(1))
    return found


def test_layering_points_one_way():
    assert not _imports("launch") & {"acme", "agents", "baselines"}
    assert not _imports("acme") & {"agents", "baselines"}
    assert "baselines" not in _imports("agents")


def test_launch_does_not_import_reverb_or_ray_eagerly():
    code = "import sys, launch; print('reverb' in sys.modules, 'ray' in sys.modules, 'tensorflow' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.stdout.split() == ["False", "False", "False"], done.stderr


def test_learner_side_code_does_not_import_reverb():
    code = (
        "import sys, agents.dqn.learning, agents.dqn.networks, acme.jax.utils, acme.jax.variable_client; "
        "print('reverb' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "False", done.stderr
