"""Adders: turn an actor's stream of timesteps into replay items.

* ``NStepTransitionAdder``: one n-step ``acme.types.Transition`` per step.
* ``SequenceAdder``: fixed-length ``Step`` sequences, every ``period`` steps.
* ``EpisodeAdder``: one ``Step`` sequence per whole episode.

Porting an Acme agent: where the items differ from those of Acme's adders
(``acme.adders.reverb``). An episode has ``T`` environment steps (for the
sequence adders, steps ``0 .. T``, ``T`` the final one), ``m`` is a
transition's number of steps, ``d`` the environment discounts, ``gamma`` the
agent's discount. Anything not listed (the ``Step`` layout and its final step,
regular sequence items, ``CONTINUE``, whole episodes) is as in Acme.

===================================  ====================================  =============================================
adder: case                          Acme                                  here, and why
===================================  ====================================  =============================================
n-step: items per episode            T + min(n, T) - 1: also n - 1         T, one from each o_t: no state starts more
                                     shorter "warm-up" transitions from    than one transition
                                     o_0
n-step: discount                     gamma^(m-1) * prod(d); the learner    gamma^m * prod(d): the target is reward +
                                     multiplies by gamma                   discount * V(next_observation)
n-step: one discount, nested reward  the discount copied per reward leaf   one discount, stored once
n-step: nested discount, one reward  the reward copied per discount leaf   refused: pass a reward of the discount's
                                                                           structure (leaves pair up)
sequence: ZERO_PAD, TRUNCATE         one last item, at the next multiple   each window that starts before T and runs
                                     of period (it may start at T)         past it: every real step starts the items it
                                                                           would mid-episode
sequence: pad_end_of_episode=False   TRUNCATE                              DROP, its meaning here so far; Acme's is
                                                                           end_of_episode_behavior="truncate"
sequence: WRITE, sequence_length 1   the final step alone                  nothing: no item starts at the final step (it
                                                                           has no action)
===================================  ====================================  =============================================
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
