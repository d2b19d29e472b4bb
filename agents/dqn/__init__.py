"""DQN: double Q-learning with n-step returns and optional prioritized replay.

The builder (which needs reverb) is imported on first use, so the learner side
(config, networks, learning) can be imported without reverb and TensorFlow.
"""

from agents.dqn.config import DQNConfig
from agents.dqn.learning import DQNLearner
from agents.dqn.networks import DQNNetworks, make_networks

__all__ = ["DQNBuilder", "DQNConfig", "DQNLearner", "DQNNetworks", "make_networks"]


def __getattr__(name: str):
    if name == "DQNBuilder":
        from agents.dqn.builder import DQNBuilder

        return DQNBuilder
    raise AttributeError(f"module 'agents.dqn' has no attribute {name!r}")
