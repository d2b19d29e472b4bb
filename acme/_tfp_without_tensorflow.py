"""TensorFlow Probability's JAX substrate, imported without TensorFlow.

distrax and rlax import ``tensorflow_probability.substrates.jax``. Where
TensorFlow is installed (the ``reverb`` extra needs it), that substrate imports
TensorFlow only to copy TensorFlow's docstrings onto its own functions: 3-4 s of
CPU at the start of every process (a CLI run, a Ray node), for nothing a run
uses. ``install()``, called when ``acme`` is imported, adds an import hook that
hides TensorFlow from that one import, in the importing thread only, when
TensorFlow is not loaded already. The substrate then takes the path it takes
where TensorFlow is not installed (the core stack); TensorFlow imports as usual
afterwards (reverb, the TensorBoard logger).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
from types import ModuleType
from typing import Any, Sequence

SUBSTRATE = "tensorflow_probability.substrates.jax"


def _is_tensorflow(name: str) -> bool:
    return name == "tensorflow" or name.startswith("tensorflow.")


class _HideTensorFlow(importlib.abc.MetaPathFinder):
    """Finds nothing itself: refuses ``tensorflow`` to a thread while that thread imports the substrate."""

    def __init__(self) -> None:
        self.importing: set[int] = set()  # threads inside the substrate's import

    def find_spec(self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None) -> Any:
        thread = threading.get_ident()
        if thread in self.importing:
            if _is_tensorflow(name):
                raise ModuleNotFoundError(f"No module named {name!r} (hidden from TFP's JAX substrate)", name=name)
            return None
        if name != SUBSTRATE or "tensorflow" in sys.modules:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _LoaderHidingTensorFlow(spec.loader, self)
        return spec


class _LoaderHidingTensorFlow(importlib.abc.Loader):
    """The substrate's own loader, run with TensorFlow hidden from the importing thread."""

    def __init__(self, loader: Any, finder: _HideTensorFlow) -> None:
        self._loader = loader
        self._finder = finder

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        thread = threading.get_ident()
        self._finder.importing.add(thread)
        try:
            self._loader.exec_module(module)
        finally:
            self._finder.importing.discard(thread)


def install() -> None:
    """Adds the hook once (first on ``sys.meta_path``); later calls do nothing."""
    if not any(isinstance(finder, _HideTensorFlow) for finder in sys.meta_path):
        sys.meta_path.insert(0, _HideTensorFlow())
