"""Import hygiene: quiet imports and the one-way layering of the packages."""

import os
import re
import subprocess
import sys
import threading

import pytest

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


def _baselines_import_graph() -> dict[str, set[str]]:
    graph = {}
    directory = os.path.join(ROOT, "baselines")
    for name in os.listdir(directory):
        if name.endswith(".py"):
            with open(os.path.join(directory, name)) as f:
                text = f.read()
            found = set(re.findall(r"^\s*from baselines\.(\w+) import", text, flags=re.MULTILINE))
            for group in re.findall(r"^\s*from baselines import \(?([\w, ]+)", text, flags=re.MULTILINE):
                found |= {part.split(" as ")[0].strip() for part in group.split(",") if part.strip()}
            graph[name[:-3]] = found
    return graph


def test_baselines_has_no_import_circle_and_only_its_entry_points_import_the_command_line():
    """The run path lives in the library (``acme.experiments.run``) and ``baselines.run_outputs``; the command line
    only parses, runs and writes, so no other module needs it."""
    graph = _baselines_import_graph()
    assert {module for module, imported in graph.items() if "cli" in imported} <= {"__main__"}

    def reaches(start: str, seen: set[str]) -> set[str]:
        for module in graph.get(start, ()):
            if module not in seen:
                seen.add(module)
                reaches(module, seen)
        return seen

    circles = sorted(module for module in graph if module in reaches(module, set()))
    assert not circles, circles


# The offline variants that extend an online agent through its loss hook (CONTRIBUTING.md); no other agent imports
# another.
AGENT_EXTENDS = {"cql": {"sac"}, "td3_bc": {"td3"}}


def test_an_agent_imports_no_other_agent_but_the_online_agent_its_offline_variant_extends():
    for package in sorted(os.listdir(os.path.join(ROOT, "agents"))):
        directory = os.path.join(ROOT, "agents", package)
        if not os.path.isdir(directory) or package.startswith("_"):
            continue
        imported = set()
        for name in os.listdir(directory):
            if name.endswith(".py"):
                with open(os.path.join(directory, name)) as f:
                    imported |= set(re.findall(r"^\s*(?:from|import)\s+agents\.(\w+)", f.read(), flags=re.MULTILINE))
        assert imported - {package} <= AGENT_EXTENDS.get(package, set()), (package, imported)


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


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.mark.tensorflow
def test_the_agents_import_without_tensorflow_where_it_is_installed():
    """distrax's and rlax's TensorFlow Probability would import TensorFlow for docstrings alone (seconds of start-up
    in every process); TensorFlow still imports afterwards, and the distributions work either side of it."""
    code = (
        "import sys, agents.dqn, agents.sac, agents.mpo, agents.r2d2, agents.ppo, rlax, distrax; "
        "print('tensorflow' in sys.modules); "
        "print(float(distrax.Transformed(distrax.Normal(0.0, 1.0), distrax.Tanh()).log_prob(0.3))); "
        "import tensorflow, reverb; print(tensorflow.constant(2).numpy())"
    )
    done = _run(code)
    assert done.returncode == 0, done.stderr[-3000:]
    loaded_first, log_prob, two = done.stdout.split()
    assert loaded_first == "False" and abs(float(log_prob) + 0.8725) < 1e-3 and two == "2", done.stdout


@pytest.mark.tensorflow
def test_a_process_that_loaded_tensorflow_first_imports_the_agents_as_before():
    code = "import tensorflow, sys, acme, agents.sac, distrax; print(float(distrax.Normal(0.0, 1.0).log_prob(0.0)))"
    done = _run(code)
    assert done.returncode == 0, done.stderr[-3000:]
    assert abs(float(done.stdout.split()[-1]) + 0.9189) < 1e-3, done.stdout


def test_tensorflow_is_hidden_only_from_the_thread_importing_the_substrate():
    from acme import _tfp_without_tensorflow

    finder = _tfp_without_tensorflow._HideTensorFlow()
    assert finder.find_spec("tensorflow") is None  # no import of the substrate under way: nothing hidden
    finder.importing.add(threading.get_ident())
    with pytest.raises(ModuleNotFoundError, match="hidden from TFP's JAX substrate"):
        finder.find_spec("tensorflow.python.ops")
    assert finder.find_spec("numpy") is None
    seen = []
    other = threading.Thread(target=lambda: seen.append(finder.find_spec("tensorflow")))
    other.start()
    other.join()
    assert seen == [None]
