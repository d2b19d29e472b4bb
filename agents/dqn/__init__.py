"""DQN: double Q-learning with n-step returns and optional prioritized replay."""

from agents.dqn.builder import DQNBuilder
from agents.dqn.config import DQNConfig
from agents.dqn.learning import DQNLearner
from agents.dqn.networks import DQNNetworks, make_networks

__all__ = ["DQNBuilder", "DQNConfig", "DQNLearner", "DQNNetworks", "make_networks"]
