"""SAC: soft actor-critic with twin critics and automatic entropy tuning (continuous actions).

``AGENT`` describes it to the command line and the baselines (``acme.agents.definition``).
"""

from acme.agents.definition import AgentDefinition
from agents.sac.builder import SACBuilder
from agents.sac.config import SACConfig
from agents.sac.learning import SAC_LEARNER
from agents.sac.networks import SACNetworks, make_networks

AGENT = AgentDefinition(
    name="sac",
    description="Soft actor-critic: twin critics, automatic entropy tuning, tanh-Gaussian policy (continuous).",
    make_config=SACConfig,
    make_builder=SACBuilder,
    make_networks=lambda spec, config: make_networks(
        spec, config.policy_hidden_sizes, config.critic_hidden_sizes, config.critic_layer_norm
    ),
    action_space="continuous",
)

__all__ = ["AGENT", "SAC_LEARNER", "SACBuilder", "SACConfig", "SACNetworks", "make_networks"]
