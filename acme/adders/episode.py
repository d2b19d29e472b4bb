"""An adder that writes whole episodes to Reverb."""

from __future__ import annotations

from typing import Any, Callable

import dm_env
import numpy as np
import tree

from acme import specs
from acme.adders import base, writer
from acme.adders.sequence import step_signature

# padding_fn(shape, dtype) -> array of that shape and dtype, e.g. np.zeros.
PaddingFn = Callable[[tuple, np.dtype], np.ndarray]


class EpisodeAdder(writer.StepwiseReverbAdder):
    """Writes each complete episode as one item.

    The item is an ``acme.adders.Step`` with a leading time dimension holding
    every step of the episode, in the layout of ``SequenceAdder``: for an
    episode of ``T`` environment steps, steps ``0 .. T - 1`` hold ``o_t``,
    ``a_t``, ``r_{t+1}``, ``d_{t+1}``, ``start_of_episode`` (true at ``t ==
    0``) and the extras of ``a_t``, and step ``T`` holds the last observation
    with zero action, reward, discount and extras. The item is written when
    the last timestep arrives; an episode abandoned with ``reset()`` is not
    written.

    The item has ``T + 1`` steps, which may not exceed ``max_sequence_length``:
    the ``add`` that would make the episode longer raises a ValueError (call
    ``reset()`` before starting the next episode). With ``padding_fn`` the item
    is padded to exactly ``max_sequence_length`` steps with
    ``padding_fn(shape, dtype)`` for every leaf but ``start_of_episode``, which
    is false (``np.zeros`` gives zero steps); without it the item has the
    episode's own length.

    Args:
      client: a ``reverb.Client`` or a ``LocalReplay`` (the same items either way).
      max_sequence_length: the most steps an episode may have, counting its
        final step (>= 2: an episode has at least a first and a last timestep).
      priority_fns: replay table name -> priority function of the episode (a
        ``Step`` of numpy arrays with the time dimension) or None for 1.0.
      padding_fn: optional ``(shape, dtype) -> array`` used to pad items to
        ``max_sequence_length`` steps.
      max_in_flight_items: items that may await the server before ``add``
        blocks.
      validate_items: check items against the tables' signatures.
    """

    def __init__(
        self,
        client,
        max_sequence_length: int,
        priority_fns: base.PriorityFns,
        padding_fn: PaddingFn | None = None,
        max_in_flight_items: int = 1,
        validate_items: bool = True,
    ):
        max_sequence_length = base.check_positive_int("max_sequence_length", max_sequence_length, minimum=2)
        if padding_fn is not None and not callable(padding_fn):
            raise ValueError(
                f"padding_fn must be None or a callable (shape, dtype) -> array such as np.zeros, got {padding_fn!r}."
            )
        super().__init__(
            client,
            priority_fns=priority_fns,
            max_in_flight_items=max_in_flight_items,
            num_keep_alive_refs=max_sequence_length,
            validate_items=validate_items,
        )
        self._max_sequence_length = max_sequence_length
        self._padding_fn = padding_fn
        self._reset_state()

    @property
    def max_sequence_length(self) -> int:
        return self._max_sequence_length

    @staticmethod
    def signature(
        environment_spec: specs.EnvironmentSpec,
        extras_spec: Any = (),
        sequence_length: int | None = None,
    ) -> base.Step:
        """The backend-free signature of the items (``Step`` of ``LeafSpec``).

        The time dimension is unspecified (``None``) unless ``sequence_length``
        is given; pass ``max_sequence_length`` there when using ``padding_fn``.
        """
        return step_signature(environment_spec, sequence_length, extras_spec)

    def _before_append(self, next_timestep: dm_env.TimeStep) -> None:
        # This add() brings the episode to (rows so far) + 2 steps: the step being
        # completed and the one for next_timestep's observation.
        length = self._episode_rows + 2
        if length > self._max_sequence_length:
            raise ValueError(
                f"The episode is longer than max_sequence_length={self._max_sequence_length} "
                f"steps (this add() makes it {length} steps, counting the final timestep "
                "as a step). Increase max_sequence_length or limit the episode length "
                "(e.g. with a step-limit wrapper); call reset() before the next episode."
            )

    def _on_last(self) -> None:
        length = self._rows
        if self._padding_fn is not None and length < self._max_sequence_length:
            fn = self._padding_fn
            padding = tree.map_structure(
                lambda x: np.asarray(fn(np.shape(x), np.asarray(x).dtype), np.asarray(x).dtype),
                self._final_step,
            )._replace(start_of_episode=np.array(False))  # a padding step never starts an episode
            for _ in range(self._max_sequence_length - length):
                self._append_row(padding, is_final=False, notify=False)
            length = self._max_sequence_length
        self._create_item(self._window(0, length))
