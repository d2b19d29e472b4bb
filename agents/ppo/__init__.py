"""PPO: proximal policy optimisation with a clipped surrogate objective and GAE (discrete or continuous actions).

``AGENT`` describes it to the command line and the baselines (``acme.agents.definition``).
"""

from acme.agents.definition import AgentDefinition
from agents.ppo.builder import PPOBuilder
from agents.ppo.config import PPOConfig
from agents.ppo.learning import PPO_LEARNER
from agents.ppo.networks import PPONetworks, make_networks

AGENT = AgentDefinition(
    name="ppo",
    description="PPO: clipped surrogate objective, GAE, epochs of minibatches over queued rollouts (any actions).",
    make_config=PPOConfig,
    make_builder=PPOBuilder,
    make_networks=lambda spec, config: make_networks(
        spec, config.hidden_sizes, config.initial_log_std, config.torso, config.lstm_size, config.shared_torso
    ),
    action_space="any",
)

__all__ = ["AGENT", "PPO_LEARNER", "PPOBuilder", "PPOConfig", "PPONetworks", "make_networks"]
