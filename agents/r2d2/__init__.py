"""R2D2: a recurrent (LSTM) double Q-network on prioritized sequence replay, with burn-in and value rescaling.

``AGENT`` describes it to the command line and the baselines (``acme.agents.definition``).
"""

from acme.agents.definition import AgentDefinition
from agents.r2d2.builder import R2D2Builder
from agents.r2d2.config import R2D2Config
from agents.r2d2.learning import R2D2_LEARNER
from agents.r2d2.networks import R2D2Networks, make_networks

AGENT = AgentDefinition(
    name="r2d2",
    description="R2D2: LSTM double Q-network, stored recurrent state and burn-in, prioritized sequences (discrete).",
    make_config=R2D2Config,
    make_builder=R2D2Builder,
    make_networks=lambda spec, config: make_networks(spec, config.torso_sizes, config.lstm_size, config.torso),
    action_space="discrete",
)

__all__ = ["AGENT", "R2D2_LEARNER", "R2D2Builder", "R2D2Config", "R2D2Networks", "make_networks"]
