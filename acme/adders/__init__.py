"""Adders: turn an actor's stream of timesteps into replay items.

* ``NStepTransitionAdder``: one n-step ``acme.types.Transition`` per step.
* ``SequenceAdder``: fixed-length ``Step`` sequences, every ``period`` steps.
* ``EpisodeAdder``: one ``Step`` sequence per whole episode.
"""

from acme.adders.base import Adder, PriorityFn, PriorityFns, Step
from acme.adders.episode import EpisodeAdder
from acme.adders.sequence import EndBehavior, SequenceAdder
from acme.adders.transition import NStepTransitionAdder
from acme.adders.writer import ReverbAdder

__all__ = [
    "Adder",
    "EndBehavior",
    "EpisodeAdder",
    "NStepTransitionAdder",
    "PriorityFn",
    "PriorityFns",
    "ReverbAdder",
    "SequenceAdder",
    "Step",
]
