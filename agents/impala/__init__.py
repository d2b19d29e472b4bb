"""IMPALA: an actor-critic with V-trace off-policy correction, learning from queued rollouts (any actions).

``AGENT`` describes it to the command line and the baselines (``acme.agents.definition``).
"""

from acme.agents.definition import AgentDefinition
from agents.impala.builder import IMPALABuilder
from agents.impala.config import IMPALAConfig
from agents.impala.learning import IMPALA_LEARNER
from agents.impala.networks import IMPALANetworks, make_networks

AGENT = AgentDefinition(
    name="impala",
    description="IMPALA: V-trace corrected actor-critic on rollouts consumed once; actors may lag the learner.",
    make_config=IMPALAConfig,
    make_builder=IMPALABuilder,
    make_networks=lambda spec, config: make_networks(
        spec, config.hidden_sizes, config.initial_log_std, config.lstm_size, config.torso
    ),
    action_space="any",
)

__all__ = ["AGENT", "IMPALA_LEARNER", "IMPALABuilder", "IMPALAConfig", "IMPALANetworks", "make_networks"]
