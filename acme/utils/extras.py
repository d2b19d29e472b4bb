"""Optional dependencies: whether they are installed, and one clear error when a feature needs a missing one.

dm-reverb and TensorFlow come with the ``reverb`` extra, which installs on Python
3.11 only (dm-reverb 0.14, its last release, pins TensorFlow 2.15 and numpy 1.x).
The core install (``pip install -e .``) has neither. Features that need them call
``require`` before importing them, so a user without the extra is told what to
install instead of seeing an ImportError from deep inside the library.
"""

from __future__ import annotations

import importlib.util

INSTALL_REVERB = 'pip install -e ".[reverb]" -c constraints.txt (Python 3.11 only)'

INSTALL_TRACKING = 'pip install -e ".[tracking]"'

# module -> (extra that provides it, how to install it)
_PROVIDERS = {
    "reverb": ("reverb", INSTALL_REVERB),
    "tensorflow": ("reverb", INSTALL_REVERB),
    "wandb": ("tracking", INSTALL_TRACKING),
    "mlflow": ("tracking", INSTALL_TRACKING),
}


class MissingExtraError(ImportError):
    """A feature needs an optional dependency that is not installed; the message names the extra."""


def available(module: str) -> bool:
    """Whether ``module`` (``"reverb"``, ``"tensorflow"``, ``"wandb"`` or ``"mlflow"``) can be imported, without
    importing it."""
    _check_known(module)
    return importlib.util.find_spec(module) is not None


def require(module: str, feature: str) -> None:
    """Raises ``MissingExtraError`` naming the extra to install if ``module`` is missing.

    ``feature`` says what the user asked for, e.g. ``"--replay reverb"``.
    """
    if not available(module):
        extra, install = _PROVIDERS[module]
        raise MissingExtraError(
            f"{feature} needs {module}, which comes with the '{extra}' extra and is not installed: {install}. "
            f"The core install has no {module}."
        )


def _check_known(module: str) -> None:
    if module not in _PROVIDERS:
        raise ValueError(f"No extra provides {module!r}; known optional modules: {sorted(_PROVIDERS)}.")
