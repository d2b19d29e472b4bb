"""The one place for what differs between the jax versions the library supports.

The full stack pins jax 0.4.34 (Python 3.11, with reverb); the core stack runs
current jax (``constraints-current.txt``). Everything else in the library is
written against APIs that both have (``jax.tree.map``, ``jax.Array``, ...); what
cannot be, lives here.
"""

from __future__ import annotations

import jax

# Where a pickled ``PyTreeDef`` says its class lives: ``jaxlib.xla_extension(.pytree)`` up to
# jax 0.4.x, ``jaxlib._jax(.pytree)`` in current jax. A pickle written by one version names a
# module the other may not have; the class is the same, and so is its pickled state.
PYTREEDEF_PICKLE_NAMES = frozenset(
    {
        ("jaxlib.xla_extension.pytree", "PyTreeDef"),
        ("jaxlib.xla_extension", "PyTreeDef"),
        ("jaxlib._jax.pytree", "PyTreeDef"),
        ("jaxlib._jax", "PyTreeDef"),
    }
)


def pytreedef_class() -> type:
    """This jax's ``PyTreeDef`` class, whichever module it is defined in."""
    return type(jax.tree.structure(None))
