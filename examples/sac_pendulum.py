"""Train SAC on Pendulum in this process; swap in td3, d4pg or mpo the same way.

python examples/sac_pendulum.py [MAX_STEPS]
"""

import sys

from acme.environments import make_environment
from acme.experiments import ExperimentConfig, run
from agents import sac

config = sac.SACConfig()
experiment = ExperimentConfig(
    builder=sac.SACBuilder(config),
    # Continuous agents act in [-1, 1]; the wrapper rescales to Pendulum's [-2, 2] torque.
    environment_factory=lambda seed: make_environment("gymnasium:Pendulum-v1", seed=seed, canonical_actions=True),
    network_factory=lambda spec: sac.make_networks(spec, config.policy_hidden_sizes, config.critic_hidden_sizes),
    seed=0,
    max_num_actor_steps=int(sys.argv[1]) if len(sys.argv) > 1 else 20_000,
    eval_every=2_000,
)
result = run(experiment)
print(f"best evaluation return {result.best.mean_return:.1f} at step {result.best.actor_steps}")
