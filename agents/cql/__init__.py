"""CQL: conservative Q-learning on SAC with the automatic conservative weight, for offline learning (continuous).

``AGENT`` describes it to the command line and the baselines (``acme.agents.definition``).
"""

from acme.agents.definition import AgentDefinition
from agents.cql.builder import CQLBuilder
from agents.cql.config import CQLConfig
from agents.cql.learning import CQL_LEARNER
from agents.sac.networks import make_networks

AGENT = AgentDefinition(
    name="cql",
    description="CQL: SAC whose critics push down the values of actions outside the dataset (offline; continuous).",
    make_config=CQLConfig,
    make_builder=CQLBuilder,
    make_networks=lambda spec, config: make_networks(spec, config.policy_hidden_sizes, config.critic_hidden_sizes),
    action_space="continuous",
)

__all__ = ["AGENT", "CQL_LEARNER", "CQLBuilder", "CQLConfig"]
