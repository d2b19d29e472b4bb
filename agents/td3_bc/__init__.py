"""TD3+BC: TD3 with a behaviour-cloning term in the policy's loss, for offline learning (continuous actions).

``AGENT`` describes it to the command line and the baselines (``acme.agents.definition``).
"""

from acme.agents.definition import AgentDefinition
from agents.td3.networks import make_networks
from agents.td3_bc.builder import TD3BCBuilder
from agents.td3_bc.config import TD3BCConfig
from agents.td3_bc.learning import TD3_BC_LEARNER

AGENT = AgentDefinition(
    name="td3_bc",
    description="TD3+BC: TD3 whose policy also regresses on the dataset's actions (offline; continuous).",
    make_config=TD3BCConfig,
    make_builder=TD3BCBuilder,
    make_networks=lambda spec, config: make_networks(spec, config.policy_hidden_sizes, config.critic_hidden_sizes),
    action_space="continuous",
)

__all__ = ["AGENT", "TD3_BC_LEARNER", "TD3BCBuilder", "TD3BCConfig"]
