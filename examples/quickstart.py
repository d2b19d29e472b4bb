"""Train DQN on CartPole in this process, in about twenty lines.

python examples/quickstart.py [MAX_STEPS]

This is DQN with its default config. The registered CartPole baseline, whose learning is tested
(tests/agents/test_dqn_learning.py) and whose results are recorded in
baselines/results/discrete_control.json, is the same agent with 20-step returns (n_step=20) for
100,000 steps: `python -m baselines run dqn --env gymnasium:CartPole-v1`.
"""

import sys

from acme.environments import make_environment
from acme.experiments import ExperimentConfig, run
from agents import dqn

config = dqn.DQNConfig()  # the defaults; the baseline adds n_step=20 (baselines/registry.py)
experiment = ExperimentConfig(
    builder=dqn.DQNBuilder(config),
    environment_factory=lambda seed: make_environment("gymnasium:CartPole-v1", seed=seed),
    network_factory=lambda spec: dqn.make_networks(spec, config.hidden_sizes),
    seed=0,
    max_num_actor_steps=int(sys.argv[1]) if len(sys.argv) > 1 else 50_000,
    eval_every=5_000,
)
result = run(experiment)
print(f"best evaluation return {result.best.mean_return:.1f} at step {result.best.actor_steps}")
