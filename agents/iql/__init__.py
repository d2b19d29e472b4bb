"""IQL: implicit Q-learning, offline learning without querying actions outside the dataset (continuous actions).

``AGENT`` describes it to the command line and the baselines (``acme.agents.definition``).
"""

from acme.agents.definition import AgentDefinition
from agents.iql.builder import IQLBuilder
from agents.iql.config import IQLConfig
from agents.iql.learning import IQL_LEARNER
from agents.iql.networks import IQLNetworks, make_networks

AGENT = AgentDefinition(
    name="iql",
    description="IQL: expectile value, critics on it, advantage-weighted policy regression (offline; continuous).",
    make_config=IQLConfig,
    make_builder=IQLBuilder,
    make_networks=lambda spec, config: make_networks(spec, config.policy_hidden_sizes, config.critic_hidden_sizes),
    action_space="continuous",
)

__all__ = ["AGENT", "IQL_LEARNER", "IQLBuilder", "IQLConfig", "IQLNetworks", "make_networks"]
