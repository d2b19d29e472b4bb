"""Serving ``TableSpec``\\ s with reverb: the one place a backend-free table description becomes a ``reverb.Table``."""

from __future__ import annotations

from typing import Sequence

import reverb
import tree

from acme.replay import tables


def _selector(selector: tables.Sampler):
    if isinstance(selector, tables.Prioritized):
        return reverb.selectors.Prioritized(selector.exponent)
    if isinstance(selector, tables.Fifo):
        return reverb.selectors.Fifo()
    return reverb.selectors.Uniform()


def _rate_limiter(limiter: tables.RateLimiter):
    if isinstance(limiter, tables.SampleToInsertRatio):
        return reverb.rate_limiters.SampleToInsertRatio(
            samples_per_insert=limiter.samples_per_insert,
            min_size_to_sample=limiter.min_size_to_sample,
            error_buffer=limiter.error_buffer,
        )
    if isinstance(limiter, tables.Queue):
        return reverb.rate_limiters.Queue(limiter.size)
    return reverb.rate_limiters.MinSize(limiter.min_size)


def _tensor_spec(spec):
    import tensorflow as tf

    if isinstance(spec, tf.TensorSpec):
        return spec
    return tf.TensorSpec(shape=tuple(spec.shape), dtype=tf.as_dtype(spec.dtype))


def to_reverb_tables(table_specs: Sequence[tables.TableSpec]) -> list:
    """``to_reverb_table`` of each spec."""
    return [to_reverb_table(spec) for spec in table_specs]


def to_reverb_table(spec: tables.TableSpec) -> reverb.Table:
    """The ``reverb.Table`` that serves ``spec`` with the same sampling, removal, limits and signature."""
    signature = None if spec.signature is None else tree.map_structure(_tensor_spec, spec.signature)
    return reverb.Table(
        name=spec.name,
        sampler=_selector(spec.sampler),
        remover=_selector(spec.remover),
        max_size=spec.max_size,
        rate_limiter=_rate_limiter(spec.rate_limiter),
        max_times_sampled=spec.max_times_sampled,
        signature=signature,
    )
