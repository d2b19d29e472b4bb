"""Converts checkpoints and policy snapshots of format version 1 (pickled structure) to version 2 (JSON).

Version 1 stored the tree structure as a pickled ``jax`` ``PyTreeDef``
(``structure.pkl``). Unpickling runs whatever the file asks for, so the
library no longer reads it. This converter unpickles it once, with an
unpickler that accepts only what a tree structure is made of (jax's
``PyTreeDef`` and NamedTuple classes of the library and its dependencies) and
refuses everything else, writes ``structure.json`` and a version-2 manifest,
and removes ``structure.pkl``. The leaves are not touched.

A NamedTuple class is taken from its module if the module is already imported;
otherwise the module's source is read first (not run) and it is imported only
if the source defines a NamedTuple of that name at its top level, so a name
such as ``baselines.__main__`` is refused before anything is imported.

Usage::

    python -m acme.utils.legacy_checkpoints PATH [PATH ...]

where each PATH is a checkpoint (``ckpt-<step>``), a policy snapshot, or a
checkpoint directory holding ``ckpt-*`` subdirectories.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.machinery
import importlib.util
import io
import json
import os
import pickle
import sys
from typing import Sequence

import jax

from acme.utils import checkpoint_files, tree_structure
from acme.utils.checkpoint_files import CheckpointError

# Where a pickled ``PyTreeDef`` says its class lives: ``jaxlib.xla_extension(.pytree)`` up to jax 0.4.x (the reverb
# stack), ``jaxlib._jax(.pytree)`` in current jax. A pickle written by one version names a module the other may not
# have; the class is the same, and so is its pickled state.
_PYTREEDEF_PICKLE_NAMES = frozenset(
    {
        ("jaxlib.xla_extension.pytree", "PyTreeDef"),
        ("jaxlib.xla_extension", "PyTreeDef"),
        ("jaxlib._jax.pytree", "PyTreeDef"),
        ("jaxlib._jax", "PyTreeDef"),
    }
)
# The globals a pickled PyTreeDef refers to besides its class and the NamedTuple classes in it.
_TREEDEF_GLOBALS = {
    ("jax._src.tree_util", "default_registry"),
    ("collections", "OrderedDict"),  # dm_control's observations (a container jax registers)
}
# Packages whose NamedTuple classes a learner state may hold; only these are ever imported.
_TRUSTED_PACKAGES = ("acme", "agents", "baselines", "optax", "haiku", "chex", "rlax", "distrax")


class _TreeDefUnpickler(pickle.Unpickler):
    """Unpickles a ``PyTreeDef`` and refuses every other global (``os.system`` and the like)."""

    def find_class(self, module: str, name: str):  # noqa: D102 - pickle's hook
        if (module, name) in _PYTREEDEF_PICKLE_NAMES:  # written by this jax or by another version
            return type(jax.tree.structure(None))  # this jax's PyTreeDef class, whichever module defines it
        if (module, name) in _TREEDEF_GLOBALS:
            return super().find_class(module, name)
        if module.split(".")[0] in _TRUSTED_PACKAGES and name.isidentifier():
            loaded = sys.modules.get(module)
            if loaded is None and _source_defines_namedtuple(module, name):
                loaded = importlib.import_module(module)
            cls = getattr(loaded, name, None)
            if isinstance(cls, type) and issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple):
                return cls
        raise pickle.UnpicklingError(
            f"the pickled structure refers to {module}.{name}, which is not a NamedTuple class of "
            f"{', '.join(_TRUSTED_PACKAGES)}; refusing it"
        )


# How ``import`` finds a module in a directory: compiled extensions first, then source, then bytecode.
_LOADERS = (
    (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES),
    (importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES),
    (importlib.machinery.SourcelessFileLoader, importlib.machinery.BYTECODE_SUFFIXES),
)


def _locate(fullname: str, roots: Sequence[str]) -> tuple[str | None, list[str] | None]:
    """``(file, search path)`` of ``fullname`` in the directories ``roots``, as ``import`` would find them
    (a namespace package has no file); found, never run."""
    namespace: list[str] = []
    for root in roots:
        if not isinstance(root, str) or not os.path.isdir(root or "."):
            continue
        spec = importlib.machinery.FileFinder(root or ".", *_LOADERS).find_spec(fullname)
        if spec is None:
            continue
        if spec.loader is not None:
            locations = spec.submodule_search_locations
            return spec.origin, None if locations is None else list(locations)
        namespace += list(spec.submodule_search_locations or [])
    return None, namespace or None


def _locate_top_level(name: str) -> tuple[str | None, list[str] | None]:
    """``(file, search path)`` of the top-level module ``name`` as ``import`` would find it, through every finder
    (an editable install finds the library's packages through an import hook, not ``sys.path``); nothing runs:
    finding a top-level module imports nothing."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None, None
    if spec is None:
        return None, None
    locations = spec.submodule_search_locations
    return spec.origin, None if locations is None else list(locations)


def _without_the_working_directory() -> None:
    """``python -m`` puts the working directory first on ``sys.path``: an ``agents/`` folder there would stand in
    for the library's own package. It is taken off the path, unless the library itself runs from there."""
    library_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    here = os.getcwd()
    sys.path[:] = [
        entry
        for entry in sys.path
        if not isinstance(entry, str) or os.path.abspath(entry or ".") != here or here == library_root
    ]
    importlib.invalidate_caches()


def _module_source(module: str) -> str | None:
    """The source of ``module``, read from the file ``import`` would run, without importing anything; None for
    a module that is compiled, missing, or inside a module that is not a package (``baselines.__main__.x``)."""
    parts = module.split(".")
    roots: list[str] | None = list(sys.path)
    origin = None
    for i in range(len(parts)):
        prefix, last = ".".join(parts[: i + 1]), i == len(parts) - 1
        if not last and prefix in sys.modules:
            roots = list(getattr(sys.modules[prefix], "__path__", None) or []) or None
        elif i == 0:
            origin, roots = _locate_top_level(prefix)
        else:
            origin, roots = _locate(prefix, roots)
        if roots is None and not last:
            return None
    if not isinstance(origin, str) or not origin.endswith(".py"):
        return None
    with open(origin, encoding="utf-8") as f:
        return f.read()


def _named(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def _source_defines_namedtuple(module: str, name: str) -> bool:
    """Whether ``module``'s source defines ``name`` at its top level as ``class name(NamedTuple)``,
    ``name = namedtuple(...)`` / ``NamedTuple(...)`` or an alias ``name = OtherState`` (the name older
    checkpoints stored); read, parsed and never run. What the name holds is checked after the import."""
    try:
        source = _module_source(module)
        tree = ast.parse(source) if source is not None else None
    except (OSError, SyntaxError, ValueError):
        return False
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.ClassDef) and node.name == name:
            return any(_named(base) == "NamedTuple" for base in node.bases)
        if isinstance(node, ast.Assign) and any(_named(target) == name for target in node.targets):
            value = node.value
            if isinstance(value, ast.Call):
                return _named(value.func) in ("namedtuple", "NamedTuple")
            return _named(value) is not None
    return False


def _read_legacy(directory: str, manifest: dict) -> tuple[object, list]:
    contents = {
        name: checkpoint_files.read_verified(directory, name, manifest)
        for name in (checkpoint_files.LEAVES, checkpoint_files.LEGACY_STRUCTURE)
    }
    try:
        treedef = _TreeDefUnpickler(io.BytesIO(contents[checkpoint_files.LEGACY_STRUCTURE])).load()
    except Exception as error:  # noqa: BLE001 - whatever the pickle holds, it is refused the same way
        raise CheckpointError(f"{directory}/{checkpoint_files.LEGACY_STRUCTURE} was not converted: {error}.") from error
    if type(treedef).__name__ != "PyTreeDef":
        raise CheckpointError(
            f"{directory}/{checkpoint_files.LEGACY_STRUCTURE} holds a {type(treedef).__name__}, not a tree structure."
        )
    num_leaves = manifest.get("num_leaves")
    if isinstance(num_leaves, bool) or not isinstance(num_leaves, int) or num_leaves < 0:
        raise CheckpointError(f"{directory}/{checkpoint_files.MANIFEST} lists {num_leaves!r} leaves.")
    return treedef, checkpoint_files.load_leaves(directory, contents[checkpoint_files.LEAVES], num_leaves)


def convert(directory: str) -> bool:
    """Converts the version-1 checkpoint or snapshot in ``directory`` in place; False if it is already version 2.

    Crash-safe: the new manifest replaces the old one atomically, and
    ``structure.pkl`` is removed only afterwards.
    """
    import jax  # the structure is rebuilt with jax's own tree functions

    manifest = checkpoint_files.read_manifest(directory)
    if manifest.get("version") == checkpoint_files.VERSION:
        return False
    if manifest.get("version") != checkpoint_files.LEGACY_VERSION:
        raise CheckpointError(
            f"{directory} has format version {manifest.get('version')!r}; only version "
            f"{checkpoint_files.LEGACY_VERSION} is converted."
        )
    treedef, leaves = _read_legacy(directory, manifest)
    try:
        if treedef.num_leaves != len(leaves):
            raise ValueError(f"the structure has {treedef.num_leaves} leaves but {len(leaves)} are stored")
        # Leaves keep their order: encode() visits containers as jax flattens them (dicts by sorted key).
        tree = jax.tree_util.tree_unflatten(treedef, list(range(len(leaves))))
        structure, order = tree_structure.encode(tree)
    except Exception as error:  # noqa: BLE001 - a malformed PyTreeDef fails in jax's own code, in any way
        raise CheckpointError(
            f"{directory}/{checkpoint_files.LEGACY_STRUCTURE} is not a tree structure jax can rebuild "
            f"({type(error).__name__}: {str(error)[:200].rstrip('.')}); it was not converted."
        ) from None
    if order != list(range(len(leaves))):
        raise CheckpointError(f"{directory}: the structure's leaves could not be kept in their stored order.")
    structure_bytes = json.dumps(structure, separators=(",", ":")).encode()
    manifest = dict(manifest, version=checkpoint_files.VERSION)
    manifest["sha256"] = {
        checkpoint_files.LEAVES: manifest["sha256"][checkpoint_files.LEAVES],
        checkpoint_files.STRUCTURE: checkpoint_files._sha256(structure_bytes),
    }
    checkpoint_files._write_file(os.path.join(directory, checkpoint_files.STRUCTURE), structure_bytes)
    staged = os.path.join(directory, checkpoint_files.MANIFEST + ".new")
    checkpoint_files._write_file(staged, checkpoint_files._json_dumps(manifest, "Checkpoint metadata").encode())
    os.replace(staged, os.path.join(directory, checkpoint_files.MANIFEST))
    os.remove(os.path.join(directory, checkpoint_files.LEGACY_STRUCTURE))
    checkpoint_files._fsync_dir(directory)
    return True


def _targets(path: str) -> list[str]:
    if os.path.isfile(os.path.join(path, checkpoint_files.MANIFEST)):
        return [path]
    found = sorted(
        os.path.join(path, name)
        for name in os.listdir(path)
        if name.startswith("ckpt-") and os.path.isfile(os.path.join(path, name, checkpoint_files.MANIFEST))
    )
    if not found:
        raise CheckpointError(
            f"{path} is neither a checkpoint or snapshot (no {checkpoint_files.MANIFEST}) nor a "
            "directory of ckpt-* checkpoints."
        )
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m acme.utils.legacy_checkpoints",
        description="Convert checkpoints and policy snapshots of format version 1 (pickled structure) in place.",
    )
    parser.add_argument("paths", nargs="+", help="checkpoints, snapshots or checkpoint directories")
    args = parser.parse_args(argv)
    _without_the_working_directory()
    try:
        for path in args.paths:
            if not os.path.isdir(path):
                raise CheckpointError(f"{path} is not a directory.")
            for target in _targets(path):
                print(f"{target}: {'converted' if convert(target) else 'already version 2'}", flush=True)
    except CheckpointError as error:
        parser.exit(2, f"error: {error}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
