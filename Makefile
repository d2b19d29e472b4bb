# One command each: `make run` trains DQN on CartPole, `make test` runs the test suite.
# Both create .venv and install everything on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test test-fast bench clean

install: $(STAMP)

$(STAMP): setup.py constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "Python 3.11 is required (dm-reverb has no build for newer Pythons); set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip<25"
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[test]"
	@touch $(STAMP)

run: install
	$(BIN)/python -m baselines run dqn --env gymnasium:CartPole-v1 --seed 0 --max-steps 100000

test: install
	$(BIN)/python -m pytest tests

test-fast: install
	$(BIN)/python -m pytest tests -m "not slow"

# The speed benchmarks of issue #14 (each pins itself to one core): pieces, then the peer protocol (~25 min here).
bench: install
	$(BIN)/python benchmarks/components.py
	$(BIN)/python benchmarks/peer_protocol.py

clean:
	rm -rf $(VENV) runs .pytest_cache
