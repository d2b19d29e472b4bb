"""D4PG: distributional deterministic policy gradients with n-step returns (continuous actions).

The builder (which needs reverb) is imported on first use, so the learner side
(config, networks, learning) can be imported without reverb and TensorFlow.
"""

from agents.d4pg.config import D4PGConfig
from agents.d4pg.learning import D4PGLearner
from agents.d4pg.networks import D4PGNetworks, make_networks

__all__ = ["D4PGBuilder", "D4PGConfig", "D4PGLearner", "D4PGNetworks", "make_networks"]


def __getattr__(name: str):
    if name == "D4PGBuilder":
        from agents.d4pg.builder import D4PGBuilder

        return D4PGBuilder
    raise AttributeError(f"module 'agents.d4pg' has no attribute {name!r}")
