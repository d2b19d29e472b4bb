"""C51: distributional Q-learning over a categorical support, with n-step returns and optional prioritized replay
(discrete actions); ``RAINBOW`` holds Rainbow's combination of those as C51's fields.

``AGENT`` describes it to the command line and the baselines (``acme.agents.definition``).
"""

from acme.agents.definition import AgentDefinition
from agents.c51.builder import C51Builder
from agents.c51.config import RAINBOW, C51Config
from agents.c51.learning import C51_LEARNER
from agents.c51.networks import make_networks

AGENT = AgentDefinition(
    name="c51",
    description="C51: categorical distributional double Q-learning; Rainbow's combination as a config.",
    make_config=C51Config,
    make_builder=C51Builder,
    make_networks=lambda spec, config: make_networks(spec, config.hidden_sizes, config.torso, config.num_atoms),
    action_space="discrete",
)

__all__ = ["AGENT", "C51_LEARNER", "C51Builder", "C51Config", "RAINBOW", "make_networks"]
