"""Train DQN on CartPole in this process, in about twenty lines.

python examples/quickstart.py [MAX_STEPS]
"""

import sys

from acme.environments import make_environment
from acme.experiments import ExperimentConfig, run_experiment
from agents import dqn

config = dqn.DQNConfig()  # the defaults solve CartPole
experiment = ExperimentConfig(
    builder=dqn.DQNBuilder(config),
    environment_factory=lambda seed: make_environment("gymnasium:CartPole-v1", seed=seed),
    network_factory=lambda spec: dqn.make_networks(spec, config.hidden_sizes),
    seed=0,
    max_num_actor_steps=int(sys.argv[1]) if len(sys.argv) > 1 else 50_000,
    eval_every=5_000,
)
result = run_experiment(experiment)
print(f"best evaluation return {result.best.mean_return:.1f} at step {result.best.actor_steps}")
