"""Replay tables described once (``tables``) and served in this process (``local``) or by reverb."""

from acme.replay.local import LocalTable, RateLimiterTimeout, ReplaySample, SampleInfo
from acme.replay.tables import Fifo, LeafSpec, MinSize, Prioritized, Queue, SampleToInsertRatio, TableSpec, Uniform

__all__ = [
    "Fifo",
    "LeafSpec",
    "LocalTable",
    "MinSize",
    "Prioritized",
    "Queue",
    "RateLimiterTimeout",
    "ReplaySample",
    "SampleInfo",
    "SampleToInsertRatio",
    "TableSpec",
    "Uniform",
]
