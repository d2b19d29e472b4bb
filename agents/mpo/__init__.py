"""MPO: maximum a posteriori policy optimisation with decoupled KL constraints (continuous actions).

The builder (which needs reverb) is imported on first use, so the learner side
(config, networks, learning) can be imported without reverb and TensorFlow.
"""

from agents.mpo.config import MPOConfig
from agents.mpo.learning import MPOLearner
from agents.mpo.networks import MPONetworks, make_networks

__all__ = ["MPOBuilder", "MPOConfig", "MPOLearner", "MPONetworks", "make_networks"]


def __getattr__(name: str):
    if name == "MPOBuilder":
        from agents.mpo.builder import MPOBuilder

        return MPOBuilder
    raise AttributeError(f"module 'agents.mpo' has no attribute {name!r}")
