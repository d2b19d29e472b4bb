"""Runs an experiment in one process: actor and learner interleaved under the replay's rate limiter."""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Mapping, Optional

import jax
import numpy as np

from acme import core, specs
from acme.environment_loop import EnvironmentLoop
from acme.experiments.checkpointing import (
    ExperimentCheckpointer,
    Restored,
    experiment_identity,
    learner_steps_of,
    reverb_checkpointer,
)
from acme.experiments.config import ENV_SEED_STRIDE, ExperimentConfig
from acme.experiments.interrupt import StopAtEpisodeEnd
from acme.replay.local_client import LocalReplay
from acme.utils import counting, extras
from acme.vector_environment_loop import VectorEnvironmentLoop

REPLAY_BACKENDS = ("local", "reverb")


class InsertPressure:
    """Says when an actor's inserts are about to be blocked by a table's rate limiter.

    In one process the actor and learner share a thread. If the learner falls
    behind (its prefetched batches arrive late on a busy machine) the actor
    runs ahead until the samples-per-insert limiter blocks its inserts, and a
    blocked actor can never step the learner that would release it. The
    learner must therefore catch up *before* inserts block: ``too_high`` turns
    true as soon as acting is ahead of the limiter's centre (the configured
    ratio), and ``relieved`` once it is back there, where sampling is still
    allowed. The writer inserts items in small asynchronous bursts, so the
    limiter needs headroom of a few dozen inserts above its centre. Reading a
    table's info costs ~0.1 ms, so it is read every few steps when the headroom
    allows.
    """

    def __init__(self, read_infos: Callable[[], Mapping[str, Any]]):
        """``read_infos`` returns ``{table name: reverb TableInfo}`` (``table_infos`` builds one)."""
        self._read_infos = read_infos
        self._limited = []
        for name, info in read_infos().items():
            limiter = info.rate_limiter_info
            spi = float(limiter.samples_per_insert)
            if not (np.isfinite(limiter.max_diff) and np.isfinite(limiter.min_diff)) or spi <= 0:
                continue  # not a samples-per-insert limiter: inserts never wait for samples
            centre = 0.5 * (limiter.max_diff + limiter.min_diff)
            headroom_items = (limiter.max_diff - centre) / spi
            check_every = max(1, int(headroom_items // 8))
            self._limited.append((name, centre, check_every))
        self._calls = 0

    def _diffs(self) -> dict[str, float]:
        diffs = {}
        for name, info in self._read_infos().items():
            limiter = info.rate_limiter_info
            diffs[name] = limiter.insert_stats.completed * float(limiter.samples_per_insert) - limiter.sample_stats.completed
        return diffs

    def too_high(self) -> bool:
        self._calls += 1
        due = [(name, centre) for name, centre, every in self._limited if self._calls % every == 0]
        if not due:
            return False
        diffs = self._diffs()
        return any(diffs[name] > centre for name, centre in due)

    def relieved(self) -> bool:
        diffs = self._diffs()
        return all(diffs[name] <= centre for name, centre, _ in self._limited)


def table_infos(tables: list, replay_client: Any, restored: bool) -> Callable[[], Mapping[str, Any]]:
    """Reads the tables' infos: from the table objects (~10 us), or from the server (~0.2 ms) once a
    checkpoint was loaded, because reverb then serves tables rebuilt from the checkpoint."""
    if restored:
        return replay_client.server_info
    return lambda: {table.name: table.info for table in tables}


class LearningActor(core.Actor):
    """An actor whose ``update`` also steps the learner as often as replay allows.

    The replay table's samples-per-insert rate limiter decides: every batch the
    dataset has ready is one learner step, so learning keeps the configured
    ratio to acting. With local replay that is all (inserts never wait, and
    the learner catches up after every actor step). With reverb, when the
    learner has fallen so far behind that the next inserts would block (see
    ``InsertPressure``), it steps until it has caught up.
    """

    def __init__(self, actor: core.Actor, learner: core.Learner, iterator: core.PrefetchingIterator,
                 pressure: Optional[InsertPressure] = None, max_learner_steps_per_update: int = 64):
        self._actor = actor
        self._step_learner = LearnerStepper(learner, iterator, pressure, max_learner_steps_per_update)

    def select_action(self, observation):
        return self._actor.select_action(observation)

    def observe_first(self, timestep) -> None:
        self._actor.observe_first(timestep)

    def observe(self, action, next_timestep) -> None:
        self._actor.observe(action, next_timestep)

    def update(self, wait: bool = False) -> None:
        if self._step_learner():
            self._actor.update(wait)


class LearnerStepper:
    """Steps the learner as often as replay allows now (see ``LearningActor``); returns the steps taken."""

    def __init__(self, learner: core.Learner, iterator: core.PrefetchingIterator,
                 pressure: Optional[InsertPressure] = None, max_steps: int = 64):
        self._learner = learner
        self._iterator = iterator
        self._pressure = pressure
        self._max_steps = max_steps

    def __call__(self) -> int:
        steps = 0
        while self._iterator.ready() and steps < self._max_steps:
            self._learner.step()
            steps += 1
        if self._pressure is not None and self._pressure.too_high():
            while not self._pressure.relieved():
                self._learner.step()  # sampling is allowed here, so this returns
                steps += 1
        return steps


class LearningVectorActor:
    """A ``VectorActor`` whose ``update`` also steps the learner as often as replay allows (``LearningActor``'s rule)."""

    def __init__(self, actor: Any, step_learner: LearnerStepper):
        self._actor = actor
        self._step_learner = step_learner

    @property
    def num_envs(self) -> int:
        return self._actor.num_envs

    def select_actions(self, observations):
        return self._actor.select_actions(observations)

    def observe_first(self, index: int, timestep) -> None:
        self._actor.observe_first(index, timestep)

    def observe(self, index: int, action, next_timestep) -> None:
        self._actor.observe(index, action, next_timestep)

    def update(self, wait: bool = False) -> None:
        if self._step_learner():
            self._actor.update(wait)


@dataclasses.dataclass
class EvaluationResult:
    actor_steps: int
    mean_return: float
    std_return: float
    wall_seconds: float


@dataclasses.dataclass
class ExperimentResult:
    """What a run reached: every evaluation, and the best one."""

    evaluations: list[EvaluationResult]
    actor_steps: int
    learner_steps: int
    wall_seconds: float
    policy_params: Any = None  # the learner's final "policy" variables (host arrays), for a policy snapshot

    @property
    def best(self) -> Optional[EvaluationResult]:
        return max(self.evaluations, key=lambda e: e.mean_return) if self.evaluations else None

    def first_reaching(self, threshold: float) -> Optional[EvaluationResult]:
        return next((e for e in self.evaluations if e.mean_return >= threshold), None)


def _evaluate(loop: EnvironmentLoop, num_episodes: int) -> tuple[float, float]:
    returns = loop.episode_returns(num_episodes)
    return float(np.mean(returns)), float(np.std(returns))


def run_experiment(
    config: ExperimentConfig, progress: bool = True, stop_at_return: Optional[float] = None, replay: str = "local",
) -> ExperimentResult:
    """Trains ``config.builder``'s agent for ``config.max_num_actor_steps`` steps in this process.

    Evaluation episodes (greedy policy, separate environment) run every
    ``config.eval_every`` actor steps and are logged under the label ``evaluator``.
    With ``stop_at_return`` the run ends at the first evaluation whose mean
    return reaches it (for tests and time-to-solve benchmarks). ``replay`` picks
    the backend: ``"local"`` (tables in this process, the default) or
    ``"reverb"`` (an in-process reverb server).
    """
    if replay not in REPLAY_BACKENDS:
        raise ValueError(f"replay must be one of {REPLAY_BACKENDS}, got {replay!r}.")
    checkpointer, restored = None, None
    if config.checkpointing is not None:
        checkpointer = ExperimentCheckpointer(config.checkpointing, experiment_identity(config))
        restored = checkpointer.restore()
    loop_state = dict(restored.loop) if restored is not None else {}
    resumes = int(loop_state.get("resumes", -1)) + 1 if restored is not None else 0
    start = time.perf_counter() - float(loop_state.get("wall_seconds", 0.0))
    key = jax.random.PRNGKey(config.seed)
    learner_key, actor_key, eval_key = jax.random.split(key, 3)
    if resumes:  # a resumed actor and environment do not replay the random streams of the first start
        actor_key = jax.random.fold_in(actor_key, resumes)
    logger_factory = config.get_logger_factory()

    num_envs = config.num_envs_per_actor
    environments = [config.environment_factory(config.seed + _RESUME_SEED_STRIDE * resumes + ENV_SEED_STRIDE * i)
                    for i in range(num_envs)]
    environment_spec = specs.make_environment_spec(environments[0])
    networks = config.network_factory(environment_spec)
    builder = config.builder

    policy = builder.make_policy(networks, environment_spec, evaluation=False)
    if restored is not None:
        checkpointer.check_replay_backend(restored, replay)
    tables = builder.make_replay_tables(environment_spec, policy)
    if replay == "local":
        replay_client, stop_replay, pressure = LocalReplay(tables, seed=config.seed, wait_on_insert=False), None, None
    else:
        replay_client, stop_replay, pressure = _start_reverb(tables, checkpointer, restored)
    counter = counting.Counter()
    iterator = builder.make_dataset_iterator(replay_client)
    learner = builder.make_learner(
        learner_key, networks, iterator, logger_factory, environment_spec, replay_client,
        counting.Counter(counter, prefix="learner"),
    )
    if restored is not None:
        try:
            _restore(checkpointer, restored, learner, counter, replay_client)
        except BaseException:
            if stop_replay is not None:
                stop_replay()
            raise
        print(restored.describe(), flush=True)
    elif checkpointer is not None:
        print(f"Checkpoints go to {checkpointer.directory} ({_interval(checkpointer)}).", flush=True)
    actor_logger = logger_factory("actor", "actor_steps")
    if num_envs == 1:
        adder = builder.make_adder(replay_client, environment_spec, policy)
        actor = builder.make_actor(actor_key, policy, environment_spec, variable_source=learner, adder=adder)
        train_loop = EnvironmentLoop(environments[0], LearningActor(actor, learner, iterator, pressure),
                                     counter=counting.Counter(counter, prefix="actor"), logger=actor_logger,
                                     label="actor")
    else:
        adders = [builder.make_adder(replay_client, environment_spec, policy) for _ in range(num_envs)]
        actor = builder.make_vector_actor(list(jax.random.split(actor_key, num_envs)), policy, environment_spec,
                                          variable_source=learner, adders=adders)
        train_loop = VectorEnvironmentLoop(
            environments, LearningVectorActor(actor, LearnerStepper(learner, iterator, pressure)),
            counter=counting.Counter(counter, prefix="actor"), logger=actor_logger, label="actor")
    if restored is not None and restored.actor_state is not None and hasattr(actor, "restore"):
        actor.restore(restored.actor_state)  # exploration schedules go on from the saved step

    eval_loop = None
    if config.eval_every:
        eval_policy = builder.make_policy(networks, environment_spec, evaluation=True)
        eval_actor = builder.make_actor(eval_key, eval_policy, environment_spec, variable_source=learner)
        eval_loop = EnvironmentLoop(
            config.environment_factory(config.seed + 1_000_003),
            eval_actor,
            counter=counting.Counter(prefix="evaluator"),
            logger=None,
            label="evaluator",
        )
        eval_logger = logger_factory("evaluator", "actor_steps")

    evaluations = [EvaluationResult(*e) for e in loop_state.get("evaluations", [])]
    actor_steps = int(loop_state.get("actor_steps", 0))
    next_eval = int(loop_state.get("next_eval", config.eval_every))

    def save_checkpoint() -> None:
        path = checkpointer.save(
            learner.save(), learner_steps_of(learner), counter.save(),
            loop={"actor_steps": actor_steps, "next_eval": next_eval, "resumes": resumes,
                  "wall_seconds": time.perf_counter() - start,
                  "evaluations": [dataclasses.astuple(e) for e in evaluations]},
            replay_client=replay_client, actor_state=actor.save() if hasattr(actor, "save") else None,
        )
        say(f"Checkpoint saved: {path} (actor steps {actor_steps}).")

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=config.max_num_actor_steps, initial=min(actor_steps, config.max_num_actor_steps),
                   unit="step", dynamic_ncols=True, mininterval=1.0, desc=config.environment_id or "train")
    say = bar.write if bar is not None else print  # messages that do not break the progress bar
    # With checkpoints, the first Ctrl-C or SIGTERM saves one when the episode ends and then stops the run.
    interrupt = StopAtEpisodeEnd(enabled=checkpointer is not None, announce=say)
    try:
        with interrupt:
            while actor_steps < config.max_num_actor_steps:
                taken, episode_return = _act(train_loop, config.max_num_actor_steps - actor_steps,
                                             next_eval - actor_steps if eval_loop is not None else None, actor_logger)
                actor_steps += taken
                if bar is not None:
                    bar.update(taken)
                    if episode_return is not None:
                        bar.set_postfix(ret=f"{episode_return:.1f}", refresh=False)
                finished = actor_steps >= config.max_num_actor_steps
                if eval_loop is not None and (actor_steps >= next_eval or finished):
                    eval_actor.update(wait=True)
                    mean_return, std_return = _evaluate(eval_loop, config.num_eval_episodes)
                    evaluation = EvaluationResult(actor_steps, mean_return, std_return, time.perf_counter() - start)
                    evaluations.append(evaluation)
                    eval_logger.write({
                        "actor_steps": actor_steps,
                        "evaluation_return": mean_return,
                        "evaluation_return_std": std_return,
                        "learner_steps": counter.get_counts().get("learner_steps", 0),
                        "wall_seconds": evaluation.wall_seconds,
                    })
                    if bar is not None:
                        bar.set_description(f"{config.environment_id or 'train'} eval={mean_return:.1f}")
                    while next_eval <= actor_steps:
                        next_eval += config.eval_every
                    if stop_at_return is not None and mean_return >= stop_at_return:
                        finished = True
                # Between episodes the adder has flushed every item, so replay matches the counts saved with it
                # (with K environments, others are mid-episode: their unwritten n-step items are not saved).
                if checkpointer is not None and (
                        finished or interrupt.requested or checkpointer.due(learner_steps_of(learner))):
                    save_checkpoint()
                if interrupt.requested and not finished:
                    interrupt.stop(f"at actor step {actor_steps}, after a checkpoint")
                if finished:
                    break
    finally:
        if bar is not None:
            bar.close()
        actor_logger.close()
        if eval_loop is not None:
            eval_logger.close()
        if hasattr(iterator, "close"):
            iterator.close()
        if stop_replay is not None:
            stop_replay()
    return ExperimentResult(
        evaluations, actor_steps, learner_steps_of(learner), time.perf_counter() - start,
        policy_params=jax.device_get(learner.get_variables(["policy"])[0]),
    )


_RESUME_SEED_STRIDE = 104_729  # a resumed run's training environment gets seed + stride * resumes
_VECTOR_CHUNK = 1_000  # K environments act this many steps between checks for evaluations and checkpoints


def _act(loop: Any, budget: int, until_eval: Optional[int], logger: Any) -> tuple[int, Optional[float]]:
    """One stretch of acting: an episode (one environment) or up to the next check (K environments).

    Returns the steps taken and the return of the last episode that ended (None if none did).
    """
    if isinstance(loop, EnvironmentLoop):
        result = loop.run_episode(max_steps=budget)
        logger.write(result)
        return result["episode_length"], float(np.sum(result["episode_return"]))
    steps = min(budget, _VECTOR_CHUNK, until_eval if until_eval is not None and until_eval > 0 else budget)
    rows = loop.run(steps)  # the loop logs each finished episode itself
    return steps, float(np.sum(rows[-1]["episode_return"])) if rows else None


def _interval(checkpointer: ExperimentCheckpointer) -> str:
    config = checkpointer.config
    every = []
    if config.every_minutes is not None:
        every.append(f"{config.every_minutes:g} min")
    if config.every_learner_steps is not None:
        every.append(f"{config.every_learner_steps} learner steps")
    return f"every {' or '.join(every)}, between episodes; the newest {config.keep} kept"


def _start_reverb(tables: list, checkpointer: Optional[ExperimentCheckpointer],
                  restored: Optional[Restored]) -> tuple[Any, Callable[[], None], InsertPressure]:
    """An in-process reverb server of ``tables`` (loading ``restored``'s replay): ``(client, stop, pressure)``."""
    extras.require("reverb", "replay='reverb' (--replay reverb)")
    import reverb

    from acme.replay.reverb_tables import to_reverb_tables
    from launch import network
    from launch.reverb_server import start_reverb_server

    replay_checkpointer = None
    if checkpointer is not None and checkpointer.config.replay:
        replay_checkpointer = reverb_checkpointer(*checkpointer.prepare_replay(restored))
    tables = to_reverb_tables(tables)
    server = start_reverb_server(tables, port=None, checkpointer=replay_checkpointer)
    network.confine_server(server)  # reverb listens on every interface; only this process uses it
    client = reverb.Client(f"localhost:{server.port}")
    pressure = InsertPressure(table_infos(tables, client, restored is not None and replay_checkpointer is not None))
    return client, server.stop, pressure


def _restore(checkpointer: ExperimentCheckpointer, restored: Restored, learner: core.Learner,
             counter: counting.Counter, replay_client: Any) -> None:
    """Puts a checkpoint's learner state, counts and replay (reverb's is already loaded) in place, checking each."""
    checkpointer.check_learner_state(restored, learner.save())
    learner.restore(restored.learner_state)
    # The learner adds its steps to the counter once a second; the checkpoint's step is the exact count.
    counter.restore({**restored.counts, "learner_steps": restored.learner_steps})
    if restored.replay_state is not None and checkpointer.config.replay:
        replay_client.restore(restored.replay_state)
    checkpointer.check_replay(restored, replay_client)
