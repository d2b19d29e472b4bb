"""dm_env wrappers."""

from acme.wrappers.base import EnvironmentWrapper
from acme.wrappers.canonical_action import CanonicalActionSpecWrapper
from acme.wrappers.gymnasium_adapter import GymnasiumToDmEnv, space_to_spec
from acme.wrappers.observation_subset import ObservationSubsetWrapper
from acme.wrappers.single_precision import SinglePrecisionWrapper
from acme.wrappers.step_limit import StepLimitWrapper

__all__ = [
    "CanonicalActionSpecWrapper",
    "EnvironmentWrapper",
    "GymnasiumToDmEnv",
    "ObservationSubsetWrapper",
    "SinglePrecisionWrapper",
    "StepLimitWrapper",
    "space_to_spec",
]
