"""TD3: twin delayed deep deterministic policy gradient (continuous actions).

``AGENT`` describes it to the command line and the baselines (``acme.agents.definition``).
"""

from acme.agents.definition import AgentDefinition
from agents.td3.builder import TD3Builder
from agents.td3.config import TD3Config
from agents.td3.learning import TD3_LEARNER
from agents.td3.networks import TD3Networks, make_networks

AGENT = AgentDefinition(
    name="td3",
    description="TD3: twin critics, target-policy smoothing, delayed deterministic policy updates (continuous).",
    make_config=TD3Config,
    make_builder=TD3Builder,
    make_networks=lambda spec, config: make_networks(spec, config.policy_hidden_sizes, config.critic_hidden_sizes),
    action_space="continuous",
)

__all__ = ["AGENT", "TD3_LEARNER", "TD3Builder", "TD3Config", "TD3Networks", "make_networks"]
