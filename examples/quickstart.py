"""Train DQN on CartPole in this process, in about twenty lines.

    python examples/quickstart.py
"""

from acme.environments import make_environment
from acme.experiments import ExperimentConfig, run_experiment
from agents import dqn

config = dqn.DQNConfig()  # the defaults solve CartPole
experiment = ExperimentConfig(
    builder=dqn.DQNBuilder(config),
    environment_factory=lambda seed: make_environment("gymnasium:CartPole-v1", seed=seed),
    network_factory=lambda spec: dqn.make_networks(spec, config.hidden_sizes),
    seed=0,
    max_num_actor_steps=50_000,
    eval_every=5_000,
)
result = run_experiment(experiment)
print(f"best evaluation return {result.best.mean_return:.1f} at step {result.best.actor_steps}")
