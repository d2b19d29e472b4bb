"""TD3: twin delayed deep deterministic policy gradient (continuous actions).

The builder (which needs reverb) is imported on first use, so the learner side
(config, networks, learning) can be imported without reverb and TensorFlow.
"""

from agents.td3.config import TD3Config
from agents.td3.learning import TD3Learner
from agents.td3.networks import TD3Networks, make_networks

__all__ = ["TD3Builder", "TD3Config", "TD3Learner", "TD3Networks", "make_networks"]


def __getattr__(name: str):
    if name == "TD3Builder":
        from agents.td3.builder import TD3Builder

        return TD3Builder
    raise AttributeError(f"module 'agents.td3' has no attribute {name!r}")
