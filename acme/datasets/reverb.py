"""Sampling a reverb table into batches of numpy arrays."""

from __future__ import annotations

from typing import Iterator

import reverb

ReplaySample = reverb.ReplaySample


def make_reverb_dataset(
    server_address: str,
    table: str,
    batch_size: int,
    num_parallel_calls: int = 1,
    max_in_flight_samples_per_worker: int | None = None,
    prefetch_size: int = 2,
):
    """A ``tf.data.Dataset`` of batched ``ReplaySample(info, data)`` from ``table``.

    The table must have a signature (every table a builder makes has one).
    """
    import tensorflow as tf

    if batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size}.")
    in_flight = max_in_flight_samples_per_worker or 2 * batch_size

    def make_one(_):
        return reverb.TrajectoryDataset.from_table_signature(
            server_address=server_address,
            table=table,
            max_in_flight_samples_per_worker=in_flight,
        )

    if num_parallel_calls > 1:
        dataset = tf.data.Dataset.range(num_parallel_calls).interleave(
            make_one, cycle_length=num_parallel_calls, num_parallel_calls=num_parallel_calls, deterministic=False
        )
    else:
        dataset = make_one(0)
    dataset = dataset.batch(batch_size, drop_remainder=True)
    return dataset.prefetch(prefetch_size)


def make_reverb_iterator(server_address: str, table: str, batch_size: int, **kwargs) -> Iterator[ReplaySample]:
    """Batches of ``ReplaySample`` as numpy arrays, sampled from ``table``."""
    return make_reverb_dataset(server_address, table, batch_size, **kwargs).as_numpy_iterator()


def server_address_of(client: reverb.Client) -> str:
    """The ``host:port`` a reverb client talks to (reverb keeps it for pickling)."""
    address = getattr(client, "server_address", None) or getattr(client, "_server_address", None)
    if not address:
        raise ValueError(f"Cannot tell the server address of {client!r}; pass a reverb.Client.")
    return address
