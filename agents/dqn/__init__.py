"""DQN: double Q-learning with n-step returns and optional prioritized replay (discrete actions).

``AGENT`` describes it to the command line and the baselines (``acme.agents.definition``).
"""

from acme.agents.definition import AgentDefinition
from agents.dqn.builder import DQNBuilder
from agents.dqn.config import DQNConfig
from agents.dqn.learning import DQN_LEARNER
from agents.dqn.networks import DQNNetworks, make_networks

AGENT = AgentDefinition(
    name="dqn",
    description="Double DQN, n-step returns, optional prioritized replay (discrete actions).",
    make_config=DQNConfig,
    make_builder=DQNBuilder,
    make_networks=lambda spec, config: make_networks(spec, config.hidden_sizes, config.torso),
    action_space="discrete",
)

__all__ = ["AGENT", "DQN_LEARNER", "DQNBuilder", "DQNConfig", "DQNNetworks", "make_networks"]
