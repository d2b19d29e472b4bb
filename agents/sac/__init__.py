"""SAC: soft actor-critic with twin critics and automatic entropy tuning (continuous actions).

The builder (which needs reverb) is imported on first use, so the learner side
(config, networks, learning) can be imported without reverb and TensorFlow.
"""

from agents.sac.config import SACConfig
from agents.sac.learning import SACLearner
from agents.sac.networks import SACNetworks, make_networks

__all__ = ["SACBuilder", "SACConfig", "SACLearner", "SACNetworks", "make_networks"]


def __getattr__(name: str):
    if name == "SACBuilder":
        from agents.sac.builder import SACBuilder

        return SACBuilder
    raise AttributeError(f"module 'agents.sac' has no attribute {name!r}")
