"""Replay datasets."""

from acme.datasets.reverb import ReplaySample, make_reverb_dataset, make_reverb_iterator, server_address_of

__all__ = ["ReplaySample", "make_reverb_dataset", "make_reverb_iterator", "server_address_of"]
