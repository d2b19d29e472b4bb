"""``python -m baselines run ... --dataset DIR`` and ``--record DIR``: what the options object cannot check itself
(it knows no ``--record``, which sets the experiment's ``record_dataset``, nor ``--actor-device``), checked before
the run folder is made."""

from __future__ import annotations

import argparse
from typing import Any


def check_flags(args: argparse.Namespace, options: Any) -> None:
    """Refuses the flags a run from a dataset (or a recording run) cannot honour, before anything starts;
    ``options`` (``RunOptions``) has checked its own fields."""
    launcher = options.launcher or "local"
    if args.record is not None and launcher not in ("local", "threads", "ray"):
        raise ValueError(
            f"--record records the actors of a local, threads or ray run; the {launcher} launcher has no actor "
            "process to record (record its policy snapshot with python -m baselines record)."
        )
    if options.dataset is None:
        if args.record is not None:
            from acme.datasets.minari_format import holds_dataset

            if holds_dataset(args.record):
                raise ValueError(
                    f"--record {args.record} already holds a dataset, which is never overwritten: name a new directory."
                )
        return
    from acme.datasets.minari_format import read_metadata

    read_metadata(options.dataset)  # a DatasetError (no dataset there, or a damaged one) before the run folder is made
    if args.record is not None:
        raise ValueError("--record writes what actors do, and a --dataset run has no actors: give one of the two.")
    if args.actor_device is not None:
        raise ValueError("--actor-device sets up actors, and a --dataset run has none: leave --actor-device out.")
