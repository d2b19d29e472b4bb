"""The DQN learner: double Q-learning on n-step transitions with a jitted update."""

from __future__ import annotations

import time
from typing import Any, Iterator, NamedTuple, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import optax
import rlax

from acme import core, types
from acme.jax import utils as jax_utils
from acme.utils import counting, loggers
from agents.dqn.config import DQNConfig
from agents.dqn.networks import DQNNetworks

# A reverb.ReplaySample(info, data) with Transition data; named here without importing reverb.
ReplaySample = Any


class TrainingState(NamedTuple):
    params: Any
    target_params: Any
    opt_state: Any
    steps: jnp.ndarray
    random_key: jax.Array


class DQNLearner(core.Learner):
    """Minimises the Huber TD error of double Q-learning.

    Targets use the adder's n-step reward and discount (the discount already
    holds gamma^n and any termination), the online network to choose the next
    action and the target network to value it. With prioritized replay the
    loss is importance-weighted and new priorities ``|td|^alpha`` are written
    back to the table.
    """

    def __init__(
        self,
        networks: DQNNetworks,
        config: DQNConfig,
        random_key: jax.Array,
        iterator: Iterator[ReplaySample],
        replay_client: Any = None,
        counter: Optional[counting.Counter] = None,
        logger: Optional[loggers.Logger] = None,
        log_every_seconds: float = 1.0,
    ):
        self._config = config
        self._iterator = iterator
        self._replay_client = replay_client
        self._counter = counter if counter is not None else counting.Counter(prefix="learner")
        self._logger = logger if logger is not None else loggers.NoOpLogger()
        self._log_every = log_every_seconds
        self._last_log = 0.0
        self._optimizer = optax.chain(
            optax.clip_by_global_norm(config.max_gradient_norm),
            optax.adam(config.learning_rate, eps=config.adam_eps),
        )
        q_apply = networks.q_network.apply

        def loss_fn(params, target_params, transitions: types.Transition, probabilities):
            q_tm1 = q_apply(params, transitions.observation)
            q_t_value = q_apply(target_params, transitions.next_observation)
            q_t_selector = q_apply(params, transitions.next_observation)
            td_error = jax.vmap(rlax.double_q_learning)(
                q_tm1,
                transitions.action.astype(jnp.int32),
                transitions.reward.astype(jnp.float32),
                transitions.discount.astype(jnp.float32),
                q_t_value,
                q_t_selector,
            )
            losses = rlax.huber_loss(td_error, config.huber_loss_delta)
            if config.prioritized_replay:
                probabilities = probabilities.astype(jnp.float32)
                weights = (1.0 / jnp.maximum(probabilities, 1e-12)) ** config.importance_sampling_exponent
                weights = weights / jnp.max(weights)
                losses = losses * jax.lax.stop_gradient(weights)
            loss = jnp.mean(losses)
            return loss, (td_error, jnp.mean(q_tm1))

        def update(state: TrainingState, transitions: types.Transition, probabilities):
            (loss, (td_error, mean_q)), grads = jax.value_and_grad(loss_fn, has_aux=True)(
                state.params, state.target_params, transitions, probabilities
            )
            updates, opt_state = self._optimizer.update(grads, state.opt_state, state.params)
            params = optax.apply_updates(state.params, updates)
            steps = state.steps + 1
            target_params = optax.periodic_update(params, state.target_params, steps, config.target_update_period)
            priorities = jnp.abs(td_error)  # the prioritized sampler raises these to priority_exponent
            metrics = {"loss": loss, "mean_q": mean_q, "gradient_norm": optax.global_norm(grads)}
            new_state = TrainingState(params, target_params, opt_state, steps, state.random_key)
            return new_state, metrics, priorities

        self._update = jax.jit(update)  # no donation: actors may hold the previous parameters
        params = networks.init(random_key)
        self._state = TrainingState(
            params=params,
            target_params=params,
            opt_state=self._optimizer.init(params),
            steps=jnp.zeros((), jnp.int32),
            random_key=random_key,
        )
        self._num_steps = 0
        self._num_counted_steps = 0  # learner steps already added to the shared counter

    @property
    def num_steps(self) -> int:
        return self._num_steps

    def step(self) -> None:
        sample = next(self._iterator)
        # Only the data (and, for prioritized replay, the probabilities) go to the device.
        probabilities = sample.info.probability if self._config.prioritized_replay else None
        self._state, metrics, priorities = self._update(self._state, sample.data, probabilities)
        self._num_steps += 1
        if self._config.prioritized_replay and self._replay_client is not None:
            keys = np.asarray(sample.info.key).tolist()
            self._replay_client.mutate_priorities(
                self._config.replay_table_name, updates=dict(zip(keys, np.asarray(priorities, np.float64).tolist()))
            )
        jax_utils.check_finite(
            "DQN loss", metrics["loss"], self._num_steps,
            hint=f"Lower learning_rate (now {self._config.learning_rate}) or max_gradient_norm, "
            "or check the rewards for NaNs.",
        )
        now = time.monotonic()
        if now - self._last_log >= self._log_every:
            counts = self._counter.increment(steps=self._num_steps - self._num_counted_steps)
            self._num_counted_steps = self._num_steps
            self._last_log = now
            self._logger.write({**jax_utils.to_numpy(metrics), **counts})

    def get_variables(self, names: Sequence[str]) -> list:
        available = {"policy": self._state.params, "params": self._state.params, "target_params": self._state.target_params}
        unknown = [n for n in names if n not in available]
        if unknown:
            raise KeyError(f"DQNLearner has no variables {unknown}; available: {sorted(available)}.")
        return [available[name] for name in names]

    def save(self) -> TrainingState:
        return jax.device_get(self._state)

    def restore(self, state: TrainingState) -> None:
        self._state = jax.device_put(TrainingState(*state))
        self._num_steps = self._num_counted_steps = int(state.steps)
