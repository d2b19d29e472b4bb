"""QR-DQN: distributional Q-learning by quantile regression, with n-step returns and optional prioritized replay
(discrete actions).

``AGENT`` describes it to the command line and the baselines (``acme.agents.definition``).
"""

from acme.agents.definition import AgentDefinition
from agents.qrdqn.builder import QRDQNBuilder
from agents.qrdqn.config import QRDQNConfig
from agents.qrdqn.learning import QRDQN_LEARNER
from agents.qrdqn.networks import make_networks

AGENT = AgentDefinition(
    name="qrdqn",
    description="QR-DQN: quantile regression distributional Q-learning (discrete actions).",
    make_config=QRDQNConfig,
    make_builder=QRDQNBuilder,
    make_networks=lambda spec, config: make_networks(spec, config.hidden_sizes, config.torso, config.num_quantiles),
    action_space="discrete",
)

__all__ = ["AGENT", "QRDQN_LEARNER", "QRDQNBuilder", "QRDQNConfig", "make_networks"]
