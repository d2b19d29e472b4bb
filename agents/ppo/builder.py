"""PPO on the shared rollout builder (fixed-length rollouts through a queue, a policy that stores its
log-probabilities)."""

from __future__ import annotations

from acme.agents.rollout_builder import RolloutBuilder
from agents.ppo.config import PPOConfig
from agents.ppo.learning import PPO_LEARNER


class PPOBuilder(RolloutBuilder):
    """PPO: epochs of clipped-surrogate minibatch steps on each batch of rollouts."""

    config_class = PPOConfig
    learner = PPO_LEARNER

    def lstm_size(self) -> int | None:
        return self.config.lstm_size
