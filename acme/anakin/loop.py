"""One agent's on-device training iteration: act in N JAX environments, store, and learn, all traceable.

The pieces are the agent's own: ``builder.make_policy`` acts (vmapped over the
environments), the ``LearnerDefinition``'s ``make_update`` and
``make_initial_state`` learn (the updates fused as ``SGDLearner`` fuses them,
with its non-finite tracking), and its ``make_batch_fn`` turns a sample into
the update's batch. Only storage differs from the host loop, and it stores what
the host adders write:

* rollout agents (``RolloutBuilder``: PPO, PQN): each iteration steps every
  environment ``unroll_length`` times and learns from the ``[N, T + 1]``
  rollouts (the stream of ``acme.adders.Step`` rows the ``SequenceAdder``
  writes, the last row the next rollout's first), ``N / batch_size`` updates of
  ``batch_size`` rollouts each;
* n-step-transition agents (``NStepTransitionBuilder``: DQN, SAC, ...): each
  iteration steps the environments until ``U * batch_size / samples_per_insert``
  items were inserted into the device replay (``acme.anakin.replay``), then
  runs the ``U = num_sgd_steps_per_step`` updates on ``[U, batch_size]`` samples,
  once the replay holds ``min_replay_size`` items (the host rate limiter's
  ratio, kept exactly);
* sequence agents (R2D2: ``zero_padded_sequences()`` is not None) likewise, with
  the zero-padded sequences the ``SequenceAdder`` writes (``acme.anakin.sequences``)
  as items: an iteration steps each environment ``period`` times per item it is
  due (the host's ratio on average: an episode's end stores its padded items at
  once).

A recurrent policy's state (``RecurrentPolicy``: IMPALA with an LSTM, R2D2) is
carried per environment, reset at its episodes' starts and stored with each
step as ``extras["core_state"]``, as the host's ``RecurrentVectorActor`` does.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from acme import specs
from acme.adders.base import Step
from acme.agents.rollout_builder import RolloutBuilder
from acme.agents.transition_builder import NStepTransitionBuilder
from acme.anakin import sequences as sequence_items
from acme.anakin import transitions as nstep
from acme.anakin.replay import DeviceReplay
from acme.environments.jax_native import FIRST, LAST, JaxEnvironment
from acme.jax.actors import ExtrasPolicy, RecurrentPolicy, recurrent_select_with_reset
from acme.jax.learner import PRIORITIES, fuse_updates

SUPPORTED = (
    "ppo",
    "pqn",
    "impala",
    "dqn",
    "mdqn",
    "c51",
    "qrdqn",
    "sac",
    "td3",
    "d4pg",
    "mpo",
    "r2d2",
)  # agents whose builders are supported, for error messages


class AgentCarry(NamedTuple):
    """Everything one agent carries from one iteration to the next."""

    learner: Any  # the LearnerDefinition's state
    first_bad: Any  # per watched metric: (learner step, value) of its first non-finite value
    environments: Any  # the environments' State, leaves [N, ...]
    timesteps: Any  # their last TimeStep, leaves [N, ...]
    storage: Any  # rollout agents: (); replay agents: (each environment's window of its last steps, replay state)
    core: Any  # a recurrent policy's state in each environment, leaves [N, ...]; () for a feed-forward one
    actor_steps: jax.Array  # [N]: steps each environment took (a LAST timestep's restart is none, as on the host)
    key: jax.Array


def canonical_spec(environment: JaxEnvironment) -> specs.EnvironmentSpec:
    """The environment's spec with bounded continuous actions as the box [-1, 1], as the host runs present them."""
    spec = environment.spec()
    actions = spec.actions
    if isinstance(actions, specs.DiscreteArray) or not np.issubdtype(actions.dtype, np.floating):
        return spec
    box = specs.BoundedArray(actions.shape, actions.dtype, -np.ones(actions.shape), np.ones(actions.shape), "action")
    return spec._replace(actions=box)


def _to_environment_action(environment: JaxEnvironment):
    """Rescales [-1, 1] actions to the environment's bounds (as ``CanonicalActionSpecWrapper``), clipping first."""
    spec = environment.spec().actions
    if isinstance(spec, specs.DiscreteArray) or not np.issubdtype(spec.dtype, np.floating):
        return lambda action: action
    low, high = jnp.asarray(spec.minimum, spec.dtype), jnp.asarray(spec.maximum, spec.dtype)
    return lambda action: (low + (jnp.clip(action, -1.0, 1.0) + 1.0) * (high - low) / 2.0).astype(spec.dtype)


def _where(condition: jax.Array, tree: Any) -> Any:
    """``tree`` where ``condition`` (per environment), zeros elsewhere."""

    def pick(x):
        mask = condition.reshape(condition.shape + (1,) * (jnp.ndim(x) - condition.ndim))
        return jnp.where(mask, x, jnp.zeros_like(x))

    return jax.tree.map(pick, tree)


class AnakinAgent:
    """The on-device iteration of one agent built from ``builder`` (its config), ``networks`` and ``environment``.

    ``num_envs`` environments step in lockstep. See the module docstring for
    what one iteration does; ``steps_per_iteration`` is the environment steps
    it takes in all (counting the restarts after LAST timesteps, which
    ``actor_steps`` does not). ``layout`` (``acme.anakin.sharding.AnakinLayout``), when given, splits each
    update's batch over its mesh's data axis. ``resets_per_step`` bounds the next episodes' starts computed a
    step (``JaxEnvironment.step_batch``'s ``max_starts``; default one per environment).
    """

    def __init__(
        self,
        builder: Any,
        networks: Any,
        environment: JaxEnvironment,
        num_envs: int,
        layout: Any = None,
        resets_per_step: int | None = None,
    ):
        if resets_per_step is not None and not 1 <= resets_per_step <= num_envs:
            raise ValueError(
                f"resets_per_step must be between 1 and the number of environments ({num_envs}), or left out (one "
                f"per environment), got {resets_per_step!r}."
            )
        self.resets_per_step = resets_per_step
        self.builder = builder
        self.layout = layout
        self.config = config = builder.config
        self.environment = environment
        self.num_envs = num_envs
        self.spec = canonical_spec(environment)
        self.networks = networks
        self.definition = builder.learner
        self._to_action = _to_environment_action(environment)
        bound = getattr(config, "max_abs_reward", None)  # stored rewards clipped, as the host adders clip them
        self._stored_reward = (lambda r: r) if bound is None else (lambda r: jnp.clip(r, -bound, bound))
        policy = builder.make_policy(networks, self.spec)
        self.recurrent = isinstance(policy, RecurrentPolicy)
        if self.recurrent:  # each environment's state, reset at its episodes' starts, stored with every step
            self._select = jax.vmap(recurrent_select_with_reset(policy), in_axes=(None, 0, 0, 0, 0, 0))
            self._initial_state = policy.initial_state
            evaluation = recurrent_select_with_reset(builder.make_policy(networks, self.spec, evaluation=True))
            self._evaluation_select = jax.vmap(evaluation, in_axes=(None, 0, 0, 0, 0, None))
        else:
            self._policy, self._has_extras = (
                (policy.policy, True) if isinstance(policy, ExtrasPolicy) else (policy, False)
            )
            self._evaluation_policy = builder.make_policy(networks, self.spec, evaluation=True)
        self._batch_fn = (
            self.definition.make_batch_fn(config) if self.definition.make_batch_fn else (lambda sample: sample.data)
        )
        self.rollouts = isinstance(builder, RolloutBuilder)
        self.sequences = None if self.rollouts else builder.zero_padded_sequences()  # (length, period) or None
        if self.rollouts:
            if num_envs % config.batch_size:
                raise ValueError(
                    f"{builder.agent_name} on the device learns from batches of batch_size ({config.batch_size}) "
                    f"rollouts, one per environment: the number of environments ({num_envs}) must be a multiple of "
                    "it. Set the number of environments to batch_size (the default) or a multiple."
                )
            self.num_updates = num_envs // config.batch_size
            self.steps_per_environment = config.unroll_length
        else:
            self.num_updates = config.num_sgd_steps_per_step
            inserts = self.num_updates * config.batch_size / config.samples_per_insert
            # An environment step stores a transition; a sequence every sequence_period steps (on average).
            period = 1 if self.sequences is None else self.sequences[1]
            if inserts != int(inserts) or (int(inserts) * period) % num_envs:
                items = "transitions" if self.sequences is None else "sequences"
                each = "" if self.sequences is None else f" (one every sequence_period = {period} steps)"
                raise ValueError(
                    f"{builder.agent_name} on the device inserts num_sgd_steps_per_step * batch_size / "
                    f"samples_per_insert = {self.num_updates} * {config.batch_size} / {config.samples_per_insert} "
                    f"= {inserts:g} {items}{each} between calls of {self.num_updates} updates: a whole number, "
                    f"whose environment steps ({inserts * period:g}) the number of environments ({num_envs}) "
                    "divides. Choose num_envs among their divisors, or change those fields."
                )
            self.steps_per_environment = int(inserts) * period // num_envs
            exponent = config.priority_exponent if getattr(config, "prioritized_replay", False) else None
            self.replay = DeviceReplay(config.max_replay_size, exponent)
        self.steps_per_iteration = self.steps_per_environment * num_envs
        self._fused = fuse_updates(
            self.definition.make_update(networks, config), self.num_updates, self.definition.finite_metrics
        )

    # ------------------------------------------------------------------ acting

    def _policy_params(self, learner_state: Any) -> Any:
        return self.definition.variables(learner_state)["policy"]

    def _act(self, params, key, observations, step):
        keys = jax.random.split(key, self.num_envs)
        out = jax.vmap(self._policy, in_axes=(None, 0, 0, 0))(params, keys, observations, step)
        return out if self._has_extras else (out, {})

    def _initial_states(self, params: Any, count: int) -> Any:
        """``count`` zero recurrent states of the policy's shape (each is reset before its episode's first step)."""
        return jax.tree.map(lambda x: jnp.zeros((count, *x.shape), x.dtype), self._initial_state(params))

    def _choose(self, params: Any, key: jax.Array, timesteps: Any, core: Any, actor_steps: jax.Array):
        """Every environment's action, the policy's extras and the next recurrent states (``()`` if none)."""
        if not self.recurrent:
            return (*self._act(params, key, timesteps.observation, actor_steps), ())
        reset = timesteps.step_type == FIRST
        keys = jax.random.split(key, self.num_envs)
        actions, extras, core, _ = self._select(params, keys, timesteps.observation, core, reset, actor_steps)
        return actions, extras, core

    def _step_environments(self, carry: AgentCarry, params: Any):
        """One step of every environment; returns the carry, the actions and the policy's extras."""
        key, act_key = jax.random.split(carry.key)
        actions, extras, core = self._choose(params, act_key, carry.timesteps, carry.core, carry.actor_steps)
        carry = carry._replace(core=core)
        environments, timesteps = self.environment.step_batch(
            carry.environments, self._to_action(actions), self.resets_per_step
        )
        acted = carry.timesteps.step_type != LAST
        carry = carry._replace(
            environments=environments, timesteps=timesteps, actor_steps=carry.actor_steps + acted, key=key
        )
        return carry, actions, extras

    # ------------------------------------------------------------------ state

    def init(self, key: jax.Array) -> AgentCarry:
        learner_key, environment_key, key = jax.random.split(key, 3)
        learner = self.definition.make_initial_state(self.networks, self.config, learner_key)
        environments, timesteps = jax.vmap(self.environment.reset)(jax.random.split(environment_key, self.num_envs))
        first_bad = {m: (jnp.int32(-1), jnp.float32(0.0)) for m in self.definition.finite_metrics}
        params = self._policy_params(learner)
        core = self._initial_states(params, self.num_envs) if self.recurrent else ()
        actor_steps = jnp.zeros(self.num_envs, jnp.int32)
        if self.rollouts:
            storage = ()
        elif self.sequences is not None:
            storage = self._init_sequences(params, timesteps, core, actor_steps, key)
        else:
            observation = jax.tree.map(lambda x: x[0], timesteps.observation)
            action = jnp.zeros(self.spec.actions.shape, self.spec.actions.dtype)
            windows = jax.vmap(lambda _: nstep.init_window(self.config.n_step, observation, action))(
                jnp.arange(self.num_envs)
            )
            example = nstep.add_step(
                nstep.init_window(self.config.n_step, observation, action),
                jax.tree.map(lambda x: x[0], timesteps),
                action,
                jax.tree.map(lambda x: x[0], timesteps),
                self.config.discount,
            )[1]
            storage = (windows, self.replay.init(jax.tree.map(lambda x: x[0], example)))
        return AgentCarry(learner, first_bad, environments, timesteps, storage, core, actor_steps, key)

    def _init_sequences(self, params: Any, timesteps: Any, core: Any, actor_steps: jax.Array, key: jax.Array):
        """Empty sequence windows ``[N, ...]`` and an empty replay of sequences, shaped after what the policy
        returns for ``timesteps``."""
        actions, extras, _ = jax.eval_shape(self._choose, params, key, timesteps, core, actor_steps)
        one = jax.tree.map(lambda x: x[0], timesteps)

        def zeros(x, leading=()):
            return jnp.zeros((*leading, *x.shape[1:]), x.dtype)

        row = Step(
            observation=jax.tree.map(zeros, timesteps.observation),
            action=jax.tree.map(zeros, actions),
            reward=jnp.zeros_like(one.reward),
            discount=jnp.zeros_like(one.discount),
            start_of_episode=jnp.zeros((), bool),
            extras=jax.tree.map(zeros, extras),
        )
        length = self.sequences[0]
        windows = jax.vmap(lambda _: sequence_items.init_window(length, row))(jnp.arange(self.num_envs))
        item = jax.tree.map(lambda x: jnp.zeros((length, *x.shape), x.dtype), row)
        return windows, self.replay.init(item)

    # ------------------------------------------------------------------ one iteration

    def iterate(self, carry: AgentCarry) -> tuple[AgentCarry, dict]:
        """Acts ``steps_per_environment`` steps in every environment, stores them, and learns."""
        return self._iterate_rollouts(carry) if self.rollouts else self._iterate_transitions(carry)

    def _update(self, learner: Any, first_bad: Any, batches: Any) -> tuple[Any, Any, dict]:
        if self.layout is not None:
            batches = self.layout.split_batch(batches, stacked=self.num_updates > 1)
        return self._fused(learner, first_bad, batches)

    def _learn(self, carry: AgentCarry, batches: Any) -> tuple[AgentCarry, dict]:
        learner, first_bad, metrics = self._update(carry.learner, carry.first_bad, batches)
        return carry._replace(learner=learner, first_bad=first_bad), metrics

    def _iterate_rollouts(self, carry: AgentCarry) -> tuple[AgentCarry, dict]:
        params = self._policy_params(carry.learner)

        def one(carry, _):
            timesteps = carry.timesteps
            carry, actions, extras = self._step_environments(carry, params)
            acted = timesteps.step_type != LAST  # an episode's final step: no action was taken there
            row = Step(
                observation=timesteps.observation,
                action=_where(acted, actions),
                reward=_where(acted, self._stored_reward(carry.timesteps.reward)),
                discount=_where(acted, carry.timesteps.discount),
                start_of_episode=timesteps.step_type == FIRST,
                extras=_where(acted, extras),
            )
            return carry, row

        carry, rows = jax.lax.scan(one, carry, None, length=self.steps_per_environment)  # leaves [T, N, ...]
        # Row T: the observation the next rollout starts from (its action is the next iteration's; unused here).
        last = Step(
            observation=carry.timesteps.observation,
            action=jnp.zeros_like(rows.action[0]),
            reward=jnp.zeros_like(rows.reward[0]),
            discount=jnp.zeros_like(rows.discount[0]),
            start_of_episode=carry.timesteps.step_type == FIRST,
            extras=jax.tree.map(lambda x: jnp.zeros_like(x[0]), rows.extras),
        )
        rollouts = jax.tree.map(lambda r, x: jnp.swapaxes(jnp.concatenate([r, x[None]]), 0, 1), rows, last)
        if self.num_updates > 1:  # [N, T + 1] -> [U, batch_size, T + 1]
            rollouts = jax.tree.map(lambda x: x.reshape((self.num_updates, -1, *x.shape[1:])), rollouts)
        return self._learn(carry, self._batch_fn(_Sample(rollouts)))

    def _iterate_transitions(self, carry: AgentCarry) -> tuple[AgentCarry, dict]:
        params = self._policy_params(carry.learner)
        gamma = self.config.discount

        def one(carry, _):
            timesteps = carry.timesteps
            carry, actions, extras = self._step_environments(carry, params)
            windows, replay = carry.storage
            stored = carry.timesteps._replace(reward=self._stored_reward(carry.timesteps.reward))
            if self.sequences is None:
                windows, candidates, complete = jax.vmap(nstep.add_step, in_axes=(0, 0, 0, 0, None))(
                    windows, timesteps, actions, stored, gamma
                )
            else:
                length, period = self.sequences
                windows, candidates, complete = jax.vmap(
                    lambda w, t, a, e, n: sequence_items.add_step(w, t, a, e, n, length, period)
                )(windows, timesteps, actions, extras, stored)
            flat = jax.tree.map(lambda x: x.reshape((-1, *x.shape[2:])), candidates)
            replay = self.replay.insert(replay, flat, complete.reshape(-1))
            return carry._replace(storage=(windows, replay)), None

        carry, _ = jax.lax.scan(one, carry, None, length=self.steps_per_environment)
        windows, replay = carry.storage
        # The barrier keeps XLA from fusing the insert into the sample's gather, which read the buffer both before
        # and after the write and so copied it whole at every iteration.
        replay = jax.lax.optimization_barrier(replay)
        key, sample_key = jax.random.split(carry.key)
        carry = carry._replace(key=key)
        shape = (self.num_updates, self.config.batch_size) if self.num_updates > 1 else (self.config.batch_size,)

        # Only the learner's state passes through the cond (a select of both branches under vmap over seeds).
        ready = replay.size >= self.config.min_replay_size
        sample = self.replay.sample(replay, sample_key, shape)
        batches = self._batch_fn(sample)

        def learn(state):
            return self._update(*state, batches)

        def wait(state):  # too few items yet: no update (the metrics' shapes, zeros)
            return (*state, jax.tree.map(jnp.zeros_like, metrics_shape))

        state = (carry.learner, carry.first_bad)
        metrics_shape = jax.eval_shape(lambda s: learn(s)[2], state)
        learner, first_bad, metrics = jax.lax.cond(ready, learn, wait, state)
        priorities = metrics.pop(PRIORITIES, None)
        if priorities is not None:  # before learning starts, the sampled items keep theirs
            kept = jnp.where(ready, priorities.reshape(sample.info.priority.shape), sample.info.priority)
            replay = self.replay.update_priorities(replay, sample.info.key, kept)
        carry = carry._replace(learner=learner, first_bad=first_bad, storage=(windows, replay))
        return carry, metrics

    # ------------------------------------------------------------------ evaluation

    def evaluate(self, learner_state: Any, key: jax.Array, num_episodes: int) -> jax.Array:
        """The returns ``[num_episodes]`` of one greedy episode in each of ``num_episodes`` environments."""
        params = self._policy_params(learner_state)
        reset_key, act_key = jax.random.split(key)
        states, timesteps = jax.vmap(self.environment.reset)(jax.random.split(reset_key, num_episodes))

        def act(keys, observations, core, first):
            """Greedy actions, and the policy's next recurrent states (``()`` for a feed-forward policy)."""
            if not self.recurrent:
                policy = jax.vmap(self._evaluation_policy, in_axes=(None, 0, 0, None))
                return policy(params, keys, observations, jnp.int32(0)), core
            actions, _, core, _ = self._evaluation_select(params, keys, observations, core, first, jnp.int32(0))
            return actions, core

        # Up to the episode limit, and no further than the last episode's end: a step's key is the same either way,
        # so the returns are those of a loop over every step (MinAtar's limit is 10,000 steps, and 100 episodes of
        # an early policy end within a few hundred).
        step_keys = jax.random.split(act_key, self.environment.max_episode_steps)

        def unfinished(loop):
            step, (*_, running) = loop
            return (step < step_keys.shape[0]) & running.any()

        def next_step(loop):
            step, (states, timesteps, core, returns, running) = loop
            keys = jax.random.split(step_keys[step], num_episodes)
            actions, core = act(keys, timesteps.observation, core, timesteps.step_type == FIRST)
            # advance, not step: each environment plays one episode, and what follows its end is masked out, so
            # no next episode's start need be computed (under vmap step computes it at every step: Craftax's
            # world generation is 14 times its transition).
            states, timesteps = jax.vmap(self.environment.advance)(states, self._to_action(actions))
            returns = returns + jnp.where(running, timesteps.reward, 0.0)
            running = running & (timesteps.step_type != LAST)
            return step + 1, (states, timesteps, core, returns, running)

        core = self._initial_states(params, num_episodes) if self.recurrent else ()
        start = (states, timesteps, core, jnp.zeros(num_episodes, jnp.float32), jnp.ones(num_episodes, bool))
        _, (_, _, _, returns, _) = jax.lax.while_loop(unfinished, next_step, (jnp.int32(0), start))
        return returns


class _Sample(NamedTuple):
    """A rollout batch in the shape ``batch_fn`` reads (``.data``), as the host queue hands it over."""

    data: Any


def check_supported(builder: Any) -> None:
    """Raises a clear error for an agent the on-device loop cannot run (one with another storage)."""
    name = getattr(builder, "agent_name", type(builder).__name__)
    transition = isinstance(builder, NStepTransitionBuilder) and (
        type(builder).replay_signature is NStepTransitionBuilder.replay_signature
        or builder.zero_padded_sequences() is not None
    )
    if not (isinstance(builder, RolloutBuilder) or transition) or builder.learner is None:
        raise ValueError(
            f"{name} does not run on the on-device loop (--launcher anakin) yet: it supports agents that learn from "
            f"rollouts (recurrent ones too), from n-step transitions or from zero-padded sequences "
            f"({', '.join(SUPPORTED)}); {name} stores other items. Run {name} with --launcher local, threads or ray."
        )
