"""Anakin (Podracer): the whole training loop on the device, for the library's own agents.

``run_anakin`` trains on a JAX-native environment (``jax:<id>``) with acting,
storage and learning in one jitted loop, vmapped over environments and over
agents (seeds, and values of one swept config field); see ``acme.anakin.loop``
for what one iteration does and ``acme.anakin.runner`` for the run around it.
"""

from __future__ import annotations

import importlib

_LAZY = {
    "run_anakin": "acme.anakin.runner",
    "AnakinAgent": "acme.anakin.loop",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'acme.anakin' has no attribute {name!r}")
