"""BC: behaviour cloning from a recorded dataset (discrete and continuous actions).

``AGENT`` describes it to the command line and the baselines (``acme.agents.definition``).
"""

from acme.agents.definition import AgentDefinition
from agents.bc.builder import BCBuilder
from agents.bc.config import BCConfig
from agents.bc.learning import BC_LEARNER
from agents.bc.networks import BCNetworks, make_networks

AGENT = AgentDefinition(
    name="bc",
    description="Behaviour cloning: log-likelihood (or squared error) of a dataset's actions (offline; any actions).",
    make_config=BCConfig,
    make_builder=BCBuilder,
    make_networks=lambda spec, config: make_networks(spec, config.hidden_sizes, config.torso),
    action_space="any",
)

__all__ = ["AGENT", "BC_LEARNER", "BCBuilder", "BCConfig", "BCNetworks", "make_networks"]
