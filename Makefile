# One command each: `make run` trains DQN on CartPole, `make test` runs the test suite.
# Both create .venv on first use: the default stack (the core, no reverb, no TensorFlow) on the newest Python the
# whole suite installs on (3.12: dm-control's labmaze has no 3.13 wheel), pinned by constraints-current.txt.
# `make test-reverb` builds .venv-reverb (Python 3.11, the core plus the reverb extra, pinned by constraints.txt)
# and runs the tests that need reverb or TensorFlow, which the default stack skips with the reason.
# On Python 3.13: make test PYTHON=python3.13 VENV=.venv-313 (dm_control's tests are skipped there, with the reason).
PYTHON ?= $(or $(lastword $(sort $(wildcard $(HOME)/.pyenv/versions/3.12.*/bin/python3.12))),python3.12)
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTHON_REVERB ?= $(or $(lastword $(sort $(wildcard $(HOME)/.pyenv/versions/3.11.*/bin/python3.11))),python3.11)
VENV_REVERB ?= .venv-reverb
STAMP_REVERB := $(VENV_REVERB)/.installed

VENV_PEERS ?= .venv-peers
STAMP_PEERS := $(VENV_PEERS)/.installed
VENV_PUREJAXRL ?= .venv-purejaxrl
STAMP_PUREJAXRL := $(VENV_PUREJAXRL)/.installed
PUREJAXRL_COMMIT := 31756b1
PUREJAXRL_SOURCE := .peers/purejaxrl-$(PUREJAXRL_COMMIT)

.PHONY: install install-reverb install-peers install-purejaxrl run test test-reverb test-fast lint format docs bench bench-revision bench-peers clean

install: $(STAMP)

$(STAMP): setup.py constraints-current.txt
	@command -v $(PYTHON) > /dev/null || { echo "No $(PYTHON): install Python 3.12 (or set PYTHON=/path/to/python3.12 or python3.13)"; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] >= (3, 11) else "Python 3.11 or newer is required; set PYTHON=/path/to/python3.12")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints-current.txt -e ".[test,atari,tracking,jax-envs]"
	@touch $(STAMP)

install-reverb: $(STAMP_REVERB)

$(STAMP_REVERB): setup.py constraints.txt
	@command -v $(PYTHON_REVERB) > /dev/null || { echo "No $(PYTHON_REVERB): the reverb stack needs Python 3.11 (set PYTHON_REVERB=/path/to/python3.11)"; exit 1; }
	@$(PYTHON_REVERB) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "Python 3.11 is required (dm-reverb has no build for newer Pythons); set PYTHON_REVERB=python3.11")'
	$(PYTHON_REVERB) -m venv $(VENV_REVERB)
	$(VENV_REVERB)/bin/python -m pip install --quiet --upgrade "pip<25"
	$(VENV_REVERB)/bin/python -m pip install --quiet -c constraints.txt -e ".[test,reverb,atari]"
	@touch $(STAMP_REVERB)

# SBX (and the Stable-Baselines3 and PyTorch it depends on, ~6 GB with PyTorch's CUDA wheels) in its own venv,
# for the peer protocol's same-run reference; nothing in the library or its tests needs it.
install-peers: $(STAMP_PEERS)

$(STAMP_PEERS): constraints-peers.txt
	$(PYTHON) -m venv $(VENV_PEERS)
	$(VENV_PEERS)/bin/python -m pip install --quiet --upgrade pip
	$(VENV_PEERS)/bin/python -m pip install --quiet -c constraints-peers.txt sbx-rl stable-baselines3 gymnasium
	@touch $(STAMP_PEERS)

# PureJaxRL's PPO as a same-run peer (benchmarks/purejaxrl_peer.py): its venv (our jax, gymnax, flax, distrax) and
# its source at commit $(PUREJAXRL_COMMIT), cloned from GitHub (or exported from PUREJAXRL_MIRROR, a local git
# directory of it); nothing in the library or its tests needs either.
install-purejaxrl: $(STAMP_PUREJAXRL)

$(STAMP_PUREJAXRL): constraints-purejaxrl.txt
	$(PYTHON) -m venv $(VENV_PUREJAXRL)
	$(VENV_PUREJAXRL)/bin/python -m pip install --quiet --upgrade pip
	$(VENV_PUREJAXRL)/bin/python -m pip install --quiet -c constraints-purejaxrl.txt jax jaxlib flax optax chex distrax gymnax
	rm -rf $(PUREJAXRL_SOURCE) && mkdir -p $(PUREJAXRL_SOURCE)
	if [ -n "$(PUREJAXRL_MIRROR)" ]; then git --git-dir=$(PUREJAXRL_MIRROR) archive $(PUREJAXRL_COMMIT) | tar -x -C $(PUREJAXRL_SOURCE); \
	else git clone --quiet https://github.com/luchris429/purejaxrl $(PUREJAXRL_SOURCE) && git -C $(PUREJAXRL_SOURCE) checkout --quiet $(PUREJAXRL_COMMIT); fi
	@touch $(STAMP_PUREJAXRL)

run: install
	$(BIN)/python -m baselines run dqn --env gymnasium:CartPole-v1 --seed 0 --max-steps 100000

# Two workers (this machine has 2 cores; many tests wait on subprocesses and Ray start-up); the Ray tests run
# one after another on one worker (tests/conftest.py puts them in one xdist group). Three workers on the 2 cores
# (2026-11-30) took no less (50.9 min, the cores busy 79% of it against 74% with two), and two tests failed: the GPU
# dry run's peer section ran out of its time share, and the threads example aborted at exit (not seen in 6 runs alone).
PYTEST_PARALLEL = -n 2 --dist loadgroup

# Every test, on the default stack: learning runs, Ray (kill and restart included) and the on-device loop; those that
# need reverb or TensorFlow are skipped with the reason.
test: install
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) tests

# The tests that need reverb or TensorFlow (markers reverb, tensorflow), on the Python 3.11 stack that has them.
test-reverb: install-reverb
	$(VENV_REVERB)/bin/python -m pytest $(PYTEST_PARALLEL) -m "reverb or tensorflow" tests

test-fast: install
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) tests -m "not slow"

# House style (pyproject.toml): ruff lint and format check; `make format` rewrites the files.
lint: install
	$(BIN)/python -m ruff check .
	$(BIN)/python -m ruff format --check .

format: install
	$(BIN)/python -m ruff check --fix .
	$(BIN)/python -m ruff format .

# The documentation site (docs/, mkdocs.yml) into site/: warnings (a broken link or anchor, a docstring the API
# reference cannot read) are errors. Its tools go into .venv, pinned with the default stack.
DOCS_STAMP := $(VENV)/.docs-installed

$(DOCS_STAMP): $(STAMP) constraints-docs.txt
	$(BIN)/python -m pip install --quiet -c constraints-current.txt -c constraints-docs.txt mkdocs mkdocs-material mkdocstrings-python
	@touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict

# The speed benchmarks of issue #14 (each pins itself to one core): the pieces on the reverb stack (reverb's feed is
# one of those compared), DQN as a user runs it on each stack (~1 min), the on-device loop (issue #30, ~6 min) and the peer protocol on the default stack
# (~25 min here in all).
bench: install install-reverb
	$(VENV_REVERB)/bin/python benchmarks/components.py
	$(BIN)/python benchmarks/stacks.py
	$(BIN)/python benchmarks/anakin.py $(if $(wildcard $(STAMP_PUREJAXRL)),--peer-python $(VENV_PUREJAXRL)/bin/python)
	$(BIN)/python benchmarks/transition_device.py
	$(BIN)/python benchmarks/sharding.py
	$(BIN)/python benchmarks/learner_scaling.py
	$(BIN)/python benchmarks/replay_node.py
	$(BIN)/python benchmarks/peer_protocol.py $(if $(wildcard $(STAMP_PEERS)),--peer-python $(VENV_PEERS)/bin/python)

# DQN as a user runs it, the working tree against an earlier revision REV, alternating in one window (~8 min):
# make bench-revision REV=HEAD~3
bench-revision: install
	@test -n "$(REV)" || (echo "Give the revision to compare against: make bench-revision REV=<git revision>"; exit 2)
	$(BIN)/python benchmarks/revisions.py $(REV)

# make bench with SBX timed in the same run (installs .venv-peers first).
bench-peers: install-peers
	$(MAKE) bench

# The GPU check (benchmarks/gpu.py, issue #48), within 8 minutes on one GPU: on-device PPO at 2,048 to 65,536
# environments and 1 to 256 seeds, 2,048 seeds at 500k steps, PureJaxRL's PPO in the same run, MinAtar PPO, DQN's
# and SAC's updates/s against one CPU core, and a Sebulba run; writes benchmarks/results/gpu.json. `make gpu-wheels`
# (here, with a network) downloads into .whl/ what a bare GPU machine (Python 3.12 with jax for CUDA, flax, optax,
# chex; no venv) lacks; there, `make bench-gpu` installs them into $(GPU_SITE) and runs it with $(GPU_PYTHON).
# `make bench-gpu DRY=1` runs every section on the CPU at tiny sizes with .venv (about a minute), to $(DRY_OUTPUT).
.PHONY: gpu-wheels bench-gpu
GPU_PYTHON ?= python3
GPU_SITE ?= /tmp/site
DRY_OUTPUT ?= /tmp/gpu-dry-run.json

gpu-wheels:
	benchmarks/gpu_wheels.sh

bench-gpu: $(if $(DRY),install)
ifdef DRY
	$(BIN)/python benchmarks/gpu.py --dry-run --output $(DRY_OUTPUT) $(GPU_ARGS) \
		$(if $(wildcard $(STAMP_PUREJAXRL)),--peer-python $(VENV_PUREJAXRL)/bin/python)
else
	@ls .whl/*.whl > /dev/null 2>&1 || { echo "No wheels in .whl/: run 'make gpu-wheels' where there is a network and carry .whl/ with the tree."; exit 1; }
	$(GPU_PYTHON) -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target $(GPU_SITE) .whl/*.whl
	PYTHONPATH=$(GPU_SITE):. $(GPU_PYTHON) benchmarks/gpu.py $(GPU_ARGS)
endif

clean:
	rm -rf $(VENV) $(VENV_REVERB) $(VENV_PEERS) $(VENV_PUREJAXRL) .peers runs site .pytest_cache
