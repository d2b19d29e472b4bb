"""Munchausen DQN: soft Q-learning targets plus the scaled log-policy of the action taken (discrete actions).

``AGENT`` describes it to the command line and the baselines (``acme.agents.definition``).
"""

from acme.agents.definition import AgentDefinition
from agents.mdqn.builder import MunchausenDQNBuilder
from agents.mdqn.config import MunchausenDQNConfig
from agents.mdqn.learning import MDQN_LEARNER
from agents.mdqn.networks import make_networks

AGENT = AgentDefinition(
    name="mdqn",
    description="Munchausen DQN: soft targets and the scaled log-policy added to the reward (discrete actions).",
    make_config=MunchausenDQNConfig,
    make_builder=MunchausenDQNBuilder,
    make_networks=lambda spec, config: make_networks(spec, config.hidden_sizes, config.torso),
    action_space="discrete",
)

__all__ = ["AGENT", "MDQN_LEARNER", "MunchausenDQNBuilder", "MunchausenDQNConfig", "make_networks"]
