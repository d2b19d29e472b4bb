"""PQN: parallelised Q-learning, Q(lambda) on rollouts from many environments, no replay and no target network.

``AGENT`` describes it to the command line and the baselines (``acme.agents.definition``).
"""

from acme.agents.definition import AgentDefinition
from agents.pqn.builder import PQNBuilder
from agents.pqn.config import PQNConfig
from agents.pqn.learning import PQN_LEARNER
from agents.pqn.networks import PQNNetworks, make_networks

AGENT = AgentDefinition(
    name="pqn",
    description="PQN: Q(lambda) on rollouts of many environments, layer norm, no replay or target network.",
    make_config=PQNConfig,
    make_builder=PQNBuilder,
    make_networks=lambda spec, config: make_networks(spec, config.hidden_sizes, config.torso, config.layer_norm),
    action_space="discrete",
)

__all__ = ["AGENT", "PQN_LEARNER", "PQNBuilder", "PQNConfig", "PQNNetworks", "make_networks"]
