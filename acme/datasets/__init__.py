"""Replay datasets: sampling reverb tables into batches (``acme.datasets.reverb``, imported on use).

The local backend's batches come from ``acme.replay.local_client.LocalBatches``.
``ReplaySample(info, data)`` is the same shape on both backends.
"""

from acme.replay.local import ReplaySample

__all__ = ["ReplaySample"]
