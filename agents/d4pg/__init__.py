"""D4PG: distributional deterministic policy gradients with n-step returns (continuous actions).

``AGENT`` describes it to the command line and the baselines (``acme.agents.definition``).
"""

from acme.agents.definition import AgentDefinition
from agents.d4pg.builder import D4PGBuilder
from agents.d4pg.config import D4PGConfig
from agents.d4pg.learning import D4PG_LEARNER
from agents.d4pg.networks import D4PGNetworks, make_networks

AGENT = AgentDefinition(
    name="d4pg",
    description="D4PG: categorical distributional critic, n-step returns, deterministic policy (continuous).",
    make_config=D4PGConfig,
    make_builder=D4PGBuilder,
    make_networks=lambda spec, config: make_networks(
        spec, config.policy_hidden_sizes, config.critic_hidden_sizes, config.num_atoms, config.vmin, config.vmax
    ),
    action_space="continuous",
)

__all__ = ["AGENT", "D4PG_LEARNER", "D4PGBuilder", "D4PGConfig", "D4PGNetworks", "make_networks"]
