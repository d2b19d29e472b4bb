# One command each: `make run` trains DQN on CartPole, `make test` runs the test suite.
# Both create .venv (Python 3.11, the core and the reverb extra) and install everything on first use.
# `make test-current` tests the core stack (no reverb, no TensorFlow) in .venv-current on the
# newest Python it installs on (3.12: dm-control has no 3.13 build); reverb tests are skipped there.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTHON_CURRENT ?= $(lastword $(sort $(wildcard $(HOME)/.pyenv/versions/3.12.*/bin/python3.12)))
VENV_CURRENT ?= .venv-current
STAMP_CURRENT := $(VENV_CURRENT)/.installed

VENV_PEERS ?= .venv-peers
STAMP_PEERS := $(VENV_PEERS)/.installed

.PHONY: install install-current install-peers run test test-current test-current-unit test-fast lint format bench bench-peers clean

install: $(STAMP)

$(STAMP): setup.py constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "Python 3.11 is required (dm-reverb has no build for newer Pythons); set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip<25"
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[test,reverb]"
	@touch $(STAMP)

install-current: $(STAMP_CURRENT)

$(STAMP_CURRENT): setup.py constraints-current.txt
	@test -n "$(PYTHON_CURRENT)" || { echo "No Python 3.12 under $(HOME)/.pyenv/versions; set PYTHON_CURRENT=/path/to/python3.12 (or 3.11)"; exit 1; }
	@$(PYTHON_CURRENT) -c 'import sys; sys.exit(0 if sys.version_info[:2] >= (3, 11) else "PYTHON_CURRENT must be Python 3.11 or newer")'
	$(PYTHON_CURRENT) -m venv $(VENV_CURRENT)
	$(VENV_CURRENT)/bin/python -m pip install --quiet --upgrade pip
	$(VENV_CURRENT)/bin/python -m pip install --quiet -c constraints-current.txt -e ".[test]"
	@touch $(STAMP_CURRENT)

# SBX (and the Stable-Baselines3 and PyTorch it depends on, ~6 GB with PyTorch's CUDA wheels) in its own venv,
# for the peer protocol's same-run reference; nothing in the library or its tests needs it.
install-peers: $(STAMP_PEERS)

$(STAMP_PEERS): constraints-peers.txt
	@test -n "$(PYTHON_CURRENT)" || { echo "No Python 3.12 under $(HOME)/.pyenv/versions; set PYTHON_CURRENT"; exit 1; }
	$(PYTHON_CURRENT) -m venv $(VENV_PEERS)
	$(VENV_PEERS)/bin/python -m pip install --quiet --upgrade pip
	$(VENV_PEERS)/bin/python -m pip install --quiet -c constraints-peers.txt sbx-rl stable-baselines3 gymnasium
	@touch $(STAMP_PEERS)

run: install
	$(BIN)/python -m baselines run dqn --env gymnasium:CartPole-v1 --seed 0 --max-steps 100000

# Two workers (this machine has 2 cores; many tests wait on subprocesses and Ray start-up); the Ray tests run
# one after another on one worker (tests/conftest.py puts them in one xdist group).
PYTEST_PARALLEL = -n 2 --dist loadgroup

# The on-device loop's tests (tests/anakin/, marker anakin) need only the core stack and run there, in test-current-unit.
test: install
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) -m "not anakin" tests

# Every test that does not need reverb or TensorFlow, on the core stack (those that do are skipped, with the reason).
test-current: install-current
	$(VENV_CURRENT)/bin/python -m pytest $(PYTEST_PARALLEL) tests

# What CI runs on the core stack: what can differ there (numpy 2, current jax, Python 3.12). The learning runs, Ray,
# and the command-line / subprocess / launcher plumbing behave the same on both stacks, and run once, in `make test`.
test-current-unit: install-current
	$(VENV_CURRENT)/bin/python -m pytest $(PYTEST_PARALLEL) -m "(not slow and not ray and not plumbing) or anakin" tests

# House style (pyproject.toml): ruff lint and format check; `make format` rewrites the files.
lint: install-current
	$(VENV_CURRENT)/bin/python -m ruff check .
	$(VENV_CURRENT)/bin/python -m ruff format --check .

format: install-current
	$(VENV_CURRENT)/bin/python -m ruff check --fix .
	$(VENV_CURRENT)/bin/python -m ruff format .

test-fast: install
	$(BIN)/python -m pytest tests -m "not slow"

# The speed benchmarks of issue #14 (each pins itself to one core): the pieces on the full stack (it has reverb,
# one of the feeds compared), the on-device loop (issue #30, ~6 min) and the peer protocol on the core stack, current
# jax (~25 min here in all).
bench: install install-current
	$(BIN)/python benchmarks/components.py
	$(VENV_CURRENT)/bin/python benchmarks/anakin.py
	$(VENV_CURRENT)/bin/python benchmarks/peer_protocol.py $(if $(wildcard $(STAMP_PEERS)),--peer-python $(VENV_PEERS)/bin/python)

# make bench with SBX timed in the same run (installs .venv-peers first).
bench-peers: install-peers
	$(MAKE) bench

clean:
	rm -rf $(VENV) $(VENV_CURRENT) $(VENV_PEERS) runs .pytest_cache
