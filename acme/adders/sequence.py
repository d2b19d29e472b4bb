"""An adder that writes fixed-length sequences of steps to Reverb."""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from acme import specs
from acme.adders import base, writer


class EndBehavior(str, enum.Enum):
    """What ``SequenceAdder`` writes when an episode ends (its docstring says what each does).

    Acme's ``EndBehavior`` names, plus ``DROP``; each member may also be given
    as its string value.
    """

    ZERO_PAD = "zero_pad"
    TRUNCATE = "truncate"
    DROP = "drop"
    WRITE = "write"
    CONTINUE = "continue"


def _end_behavior(value: Any) -> EndBehavior:
    try:
        return EndBehavior(value)
    except (ValueError, TypeError):
        accepted = ", ".join(repr(b.value) for b in EndBehavior)
        raise ValueError(
            f"end_of_episode_behavior must be an EndBehavior or one of {accepted}, got {value!r}."
        ) from None


class SequenceAdder(writer.StepwiseReverbAdder):
    """Writes overlapping or adjacent sequences of ``sequence_length`` steps.

    Each item is an ``acme.adders.Step`` whose every leaf has a leading time
    dimension of exactly ``sequence_length`` (shorter only for the last items
    of an episode with ``TRUNCATE``, which need a table signature of open
    length, ``signature(spec, None)``). Step ``t`` of an episode holds
    ``o_t``, the action ``a_t`` taken at ``o_t``, the reward ``r_{t+1}`` and
    environment discount ``d_{t+1}`` that followed, ``start_of_episode``
    (true for ``t == 0`` only) and the extras passed with ``a_t``. The last
    timestep of an episode (of ``T`` environment steps) becomes step ``T``:
    its observation with zero action, reward, discount and extras. An episode
    thus has ``T + 1`` steps, numbered ``0 .. T``.

    Items start at steps ``0, period, 2 * period, ...``; with ``period <
    sequence_length`` consecutive items overlap by ``sequence_length - period``
    steps, with ``period > sequence_length`` some steps are in no item. An item
    is written as soon as its last step is known.

    The end of an episode is set by ``end_of_episode_behavior`` (see
    ``EndBehavior``), or by the two flags it replaces (pass one or the other).
    Except with ``CONTINUE``, items never cross an episode boundary and the
    final step ``T`` never starts an item (it has no action, so every item
    begins with a real step). At the end of an episode, for each start ``s <
    T`` whose window ``[s, s + sequence_length)`` runs past step ``T``:

    * ``ZERO_PAD`` (the default; the flags' ``pad_end_of_episode=True``): the
      item is written, its steps after ``T`` filled with zeros (zero
      observation, action, reward, discount, extras and ``start_of_episode``
      false);
    * ``TRUNCATE``: the item is written with the steps up to ``T`` only;
    * ``DROP`` (``pad_end_of_episode=False``): the item is not written. In
      particular an episode with fewer than ``sequence_length`` steps
      (counting step ``T``) produces no item at all;
    * ``WRITE``: the item is not written; instead the window of the last
      ``sequence_length`` steps ``[T + 1 - sequence_length, T]`` is, unless it
      is already an item (its start is a multiple of ``period``), the episode
      is shorter, or it would start at ``T`` (``sequence_length=1``).

    With ``CONTINUE`` (``break_end_of_episode=False``, which needs
    ``pad_end_of_episode=False``) the steps of successive episodes form one
    stream (each episode still ends with its final step, and the next begins
    with ``start_of_episode`` true); items start every ``period`` steps of
    that stream and may span episodes, and nothing is padded. ``reset()``
    restarts the stream.

    Args:
      client: a ``reverb.Client`` or a ``LocalReplay`` (the same items either way).
      sequence_length: steps per item (>= 1).
      period: steps between the starts of consecutive items (>= 1).
      priority_fns: replay table name -> priority function of the item (a
        ``Step`` of numpy arrays with the time dimension) or None for 1.0.
      pad_end_of_episode: True (default) pads, False drops the windows that
        run past an episode's end (``ZERO_PAD`` / ``DROP``).
      break_end_of_episode: False lets items span episodes (``CONTINUE``).
      end_of_episode_behavior: an ``EndBehavior`` or its value (``"zero_pad"``,
        ``"truncate"``, ``"drop"``, ``"write"``, ``"continue"``), instead of
        the two flags.
      max_in_flight_items: items that may await the server before ``add``
        blocks.
      validate_items: check items against the tables' signatures.
    """

    def __init__(
        self,
        client,
        sequence_length: int,
        period: int,
        priority_fns: base.PriorityFns,
        pad_end_of_episode: bool | None = None,
        break_end_of_episode: bool | None = None,
        max_in_flight_items: int = 2,
        validate_items: bool = True,
        end_of_episode_behavior: EndBehavior | str | None = None,
    ):
        sequence_length = base.check_positive_int("sequence_length", sequence_length)
        period = base.check_positive_int("period", period)
        behavior = _behavior_of(pad_end_of_episode, break_end_of_episode, end_of_episode_behavior)
        super().__init__(
            client,
            priority_fns=priority_fns,
            max_in_flight_items=max_in_flight_items,
            num_keep_alive_refs=sequence_length,
            validate_items=validate_items,
        )
        self._sequence_length = sequence_length
        self._period = period
        self._end_behavior = behavior
        self._break_end_of_episode = behavior is not EndBehavior.CONTINUE
        self._reset_state()

    @property
    def sequence_length(self) -> int:
        return self._sequence_length

    @property
    def period(self) -> int:
        return self._period

    @property
    def end_of_episode_behavior(self) -> EndBehavior:
        return self._end_behavior

    @staticmethod
    def signature(
        environment_spec: specs.EnvironmentSpec,
        sequence_length: int | None = None,
        extras_spec: Any = (),
    ) -> base.Step:
        """The backend-free signature of the items (``Step`` of ``LeafSpec`` with a leading time dimension).

        ``sequence_length=None`` leaves the time dimension unspecified.
        """
        return step_signature(environment_spec, sequence_length, extras_spec)

    def _clear_buffers_at_episode_end(self) -> bool:
        return self._break_end_of_episode

    def _after_append(self, is_final: bool) -> None:
        length, rows = self._sequence_length, self._rows
        if rows < length or (rows - length) % self._period:
            return
        start = rows - length
        if self._break_end_of_episode and is_final and start == rows - 1:
            return  # The final step does not start an item.
        self._create_item(self._window(start, length))

    def _on_last(self) -> None:
        behavior = self._end_behavior
        if behavior in (EndBehavior.CONTINUE, EndBehavior.DROP):
            return
        final_row = self._rows - 1
        length = self._sequence_length
        if behavior is EndBehavior.WRITE:
            start = final_row + 1 - length  # the last `length` steps
            if 0 <= start < final_row and start % self._period:
                self._create_item(self._window(start, length))
            return
        pending = [start for start in range(0, final_row, self._period) if start + length > final_row + 1]
        if behavior is EndBehavior.TRUNCATE:
            for start in pending:
                self._create_item(self._window(start, final_row + 1 - start))
            return
        padding = writer.zeros_like(self._final_step) if pending else None
        for start in pending:
            # Pad just enough for this window, so it is within the last
            # `sequence_length` rows that the writer keeps.
            while self._rows < start + length:
                self._append_row(padding, is_final=False, notify=False)
            self._create_item(self._window(start, length))


def _behavior_of(pad: bool | None, break_: bool | None, behavior: EndBehavior | str | None) -> EndBehavior:
    """The ``EndBehavior`` of ``end_of_episode_behavior``, or of the two flags (unset: True)."""
    if behavior is not None:
        if pad is not None or break_ is not None:
            raise ValueError(
                "Pass end_of_episode_behavior or pad_end_of_episode/break_end_of_episode, not both "
                f"(got end_of_episode_behavior={behavior!r}, pad_end_of_episode={pad!r}, "
                f"break_end_of_episode={break_!r})."
            )
        return _end_behavior(behavior)
    pad = True if pad is None else bool(pad)
    break_ = True if break_ is None else bool(break_)
    if not break_ and pad:
        raise ValueError(
            "pad_end_of_episode=True needs break_end_of_episode=True: when sequences "
            "may span episodes there is no episode end to pad. Pass "
            "pad_end_of_episode=False together with break_end_of_episode=False."
        )
    if not break_:
        return EndBehavior.CONTINUE
    return EndBehavior.ZERO_PAD if pad else EndBehavior.DROP


def step_signature(
    environment_spec: specs.EnvironmentSpec,
    sequence_length: int | None,
    extras_spec: Any = (),
) -> base.Step:
    """``Step`` of ``LeafSpec`` with a leading time dimension ``sequence_length`` (None: any length)."""
    leading = (sequence_length,)
    return base.Step(
        observation=base.nested_leaf_spec(environment_spec.observations, leading),
        action=base.nested_leaf_spec(environment_spec.actions, leading),
        reward=base.nested_leaf_spec(environment_spec.rewards, leading),
        discount=base.nested_leaf_spec(environment_spec.discounts, leading),
        start_of_episode=base.LeafSpec(leading, np.dtype(bool)),
        extras=base.nested_leaf_spec(extras_spec, leading),
    )


__all__ = ["EndBehavior", "SequenceAdder", "step_signature"]
