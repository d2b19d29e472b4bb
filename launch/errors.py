"""Exceptions raised by the launch package."""

from __future__ import annotations


class LaunchError(Exception):
    """Base class of every error raised by ``launch``."""


class GraphError(LaunchError):
    """The program graph is invalid (unknown handle, cycle, bad reference...)."""


class NodeError(LaunchError):
    """A node failed (constructor, ``run()``, function, ``stop()`` or process death).

    Attributes:
      label: label of the node that failed.
      details: the original traceback text (or a description of the failure).
    """

    def __init__(self, label: str, details: str) -> None:
        self.label = label
        self.details = details
        super().__init__(f"node {label!r} failed:\n{details}")

    def __reduce__(self):
        return (type(self), (self.label, self.details))


class ClusterConnectionError(LaunchError, ConnectionError):
    """The requested cluster address could not be reached or joined."""


class RayStartError(ClusterConnectionError):
    """A local Ray instance did not start (in time, or at all); the message says what Ray said and what to do."""


class LaunchTimeout(LaunchError, TimeoutError):
    """The program did not finish within the ``timeout`` given to ``launch()``."""
