"""acme: interfaces and building blocks for reinforcement-learning agents in JAX.

Importing the package quietens TensorFlow's and XLA's C++ start-up logging (the
replay server is built on TensorFlow); set ``TF_CPP_MIN_LOG_LEVEL`` yourself to
see it again. It also keeps distrax's and rlax's TensorFlow Probability from
importing TensorFlow only for docstrings (``acme._tfp_without_tensorflow``).
"""

import os as _os

_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from acme import _tfp_without_tensorflow  # noqa: E402

_tfp_without_tensorflow.install()  # before distrax or rlax is first imported: see that module

from acme import core, specs, types  # noqa: E402
from acme.core import Actor, Learner, Saveable, VariableSource, Worker  # noqa: E402
from acme.environment_loop import EnvironmentLoop  # noqa: E402
from acme.specs import EnvironmentSpec, make_environment_spec  # noqa: E402
from acme.types import Transition  # noqa: E402

__all__ = [
    "Actor",
    "EnvironmentLoop",
    "EnvironmentSpec",
    "Learner",
    "Saveable",
    "Transition",
    "VariableSource",
    "Worker",
    "core",
    "make_environment_spec",
    "specs",
    "types",
]
