"""MPO: maximum a posteriori policy optimisation with decoupled KL constraints (continuous actions).

``AGENT`` describes it to the command line and the baselines (``acme.agents.definition``).
"""

from acme.agents.definition import AgentDefinition
from agents.mpo.builder import MPOBuilder
from agents.mpo.config import MPOConfig
from agents.mpo.learning import MPO_LEARNER
from agents.mpo.networks import MPONetworks, make_networks

AGENT = AgentDefinition(
    name="mpo",
    description="MPO: E-step over sampled actions, decoupled KL-constrained Gaussian policy, Q critic (continuous).",
    make_config=MPOConfig,
    make_builder=MPOBuilder,
    make_networks=lambda spec, config: make_networks(
        spec,
        config.policy_hidden_sizes,
        config.critic_hidden_sizes,
        config.num_critics,
        config.init_std,
        config.min_std,
    ),
    action_space="continuous",
)

__all__ = ["AGENT", "MPO_LEARNER", "MPOBuilder", "MPOConfig", "MPONetworks", "make_networks"]
