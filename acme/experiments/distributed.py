"""The same ExperimentConfig as a program of nodes: replay, counter, learner, actors, evaluator."""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
import time
from typing import Any, Callable

import numpy as np

import launch
from acme import specs
from acme.datasets.minari_format import EpisodeRecorder, check_spec, read_metadata
from acme.datasets.recording import RecordingAdder, merge_shards, training_run_metadata, write_shard
from acme.environment_loop import EnvironmentLoop
from acme.experiments.checkpointing import Resume, learner_steps_of, open_resume
from acme.experiments.config import ExperimentConfig
from acme.experiments.evaluation import ACTOR_STEPS, LEARNER_STEPS, Evaluator
from acme.experiments.inference import (
    InferenceServer,
    ServedActor,
    check_servable,
    connect,
)
from acme.experiments.learner_group import (
    GroupMembership,
    GroupRendezvous,
    StateGathers,
    check_learner_group,
    check_same_restore,
    join_group,
    splits_state,
    step_in_lockstep,
)
from acme.experiments.offline import make_offline_learner, open_dataset
from acme.experiments.options import DISTRIBUTED, RunOptions
from acme.experiments.result import SeedRun
from acme.experiments.schedule import Schedule
from acme.experiments.seeding import ExperimentSeeds
from acme.jax import compile_cache
from acme.jax.multiprocess import LearnerGroup
from acme.jax.polling_source import PollingVariableSource, to_host
from acme.jax.sharding import device_of
from acme.replay.local_client import LocalReplay, LocalTablesClient
from acme.utils import counting, extras

LOCAL_REPLAY_NEEDS_THREADS = (
    "its replay is local tables that the learner and actors share inside this process. Use launcher='threads', "
    "or replay='learner' (the learner's tables, fed over direct connections), replay='server' (a replay node of "
    "local tables that the other processes reach over direct connections) or replay='reverb' (a reverb server; it "
    f"needs the 'reverb' extra: {extras.INSTALL_REVERB})."
)


def replay_client(replay: Any) -> Any:
    """What the replay node's handle became: a reverb address (a new client to it), or the ``LocalReplay`` itself."""
    if isinstance(replay, str):
        import reverb

        return reverb.Client(replay)
    return replay


def sampling_client(replay: Any, replay_server: bool) -> Any:
    """What a learner samples: a ``ReplayServerNode``'s tables over a direct connection (``replay_server``), else
    ``replay_client(replay)``."""
    if replay_server:
        from acme.replay.direct import RemoteTables

        return RemoteTables(replay.replay_address())
    return replay_client(replay)


def close_sampling(iterator: Any, client: Any) -> None:
    """Stops a learner's dataset iterator and closes its connection to a replay node (nothing for the learner's own
    tables or a reverb client)."""
    close = getattr(iterator, "close", None)
    if close is not None:
        close()
    if isinstance(client, LocalTablesClient):
        client.close()


def make_local_replay(make_tables, seed: int, state: Any = None) -> LocalReplay:
    """The replay node of a threads program: ``LocalReplay`` tables (with ``state``, a checkpoint's tables).

    Inserts wait for the rate limiter, as reverb's do: actors and the learner run in their own threads.
    """
    replay = LocalReplay(make_tables(), seed=seed, wait_on_insert=True)
    if state is not None:
        replay.restore(state)
    return replay


class ReplayServerNode:
    """A replay node of ``LocalReplay`` tables for every launcher (``replay="server"``): the actors' items come
    over authenticated direct connections (``RemoteReplay``), and the learner samples the tables, updates their
    priorities and checkpoints them over one of its own (``RemoteTables``), all through one ``ReplayListener``.
    The tables outlive a learner restart, as a reverb server's do."""

    def __init__(self, make_tables, seed: int, state: Any = None):
        from acme.replay.direct import ReplayListener

        self._replay = make_local_replay(make_tables, seed, state)
        self._listener = ReplayListener(self._replay)

    def replay_address(self) -> tuple:
        """The ``(host, port, key)`` the actors' ``RemoteReplay`` and the learner's ``RemoteTables`` connect to."""
        return self._listener.address

    def stop(self) -> None:
        self._listener.close()


class LearnerNode:
    """Builds the learner next to a replay client (reverb's, or the local tables) and steps it until the program stops.

    With ``holds_replay`` the learner keeps the builder's tables itself, as
    ``LocalReplay``, fed once with each item the actors write, and samples them
    without crossing the network. ``feed`` says how the items come: ``"reverb"``
    (the replay node is a reverb server of transfer queues, ``acme.replay.feed``)
    or ``"direct"`` (no replay node: the learner listens for the actors'
    ``RemoteReplay`` connections, ``acme.replay.direct``, and tells them its
    address through ``replay_address()``).

    With checkpointing configured it restores the newest checkpoint when it is
    built (at the start of the program, and again when the launcher restarts it
    after a crash) and saves its state, the counts and the replay tables at the
    configured interval.

    With ``options.dataset`` it samples that dataset (``make_offline_learner``; on Ray, the directory must be
    reachable where this node runs) instead of a replay, and stops at ``config``'s budget, in learner steps.
    """

    def __init__(
        self,
        config: ExperimentConfig,
        environment_spec: specs.EnvironmentSpec,
        replay: Any,
        counter: Any,
        holds_replay: bool = False,
        feed: str = "reverb",
        replay_server: bool = False,
        options: RunOptions | None = None,
        membership: GroupMembership | None = None,
    ):
        if membership is not None:  # before anything starts jax's devices
            join_group(membership, 0)
        self._membership = membership
        group = None if membership is None else membership.group
        self._stepping = threading.Event()  # in a group: set while run() steps with the other processes
        self._counter = counter
        self._listener = None
        self._feed = None
        self._budget = None  # from a dataset: the learner steps to take
        resume = open_resume(config, exclusive=False)  # the program's driver holds the directory
        if options is not None and options.dataset is not None:
            dataset = open_dataset(options)
            check_spec(dataset, environment_spec, options.dataset)
            self._budget, self._client, self._iterator = config.max_num_actor_steps, None, None
            _, self._learner = make_offline_learner(config, options, environment_spec, dataset, counter, resume.resumes)
        else:
            builder = config.builder
            networks = config.network_factory(environment_spec)
            if holds_replay:
                policy = builder.make_policy(networks, environment_spec, evaluation=False)
                self._client = LocalReplay(
                    builder.make_replay_tables(environment_spec, policy), seed=config.seed, wait_on_insert=True
                )
            else:
                self._client = sampling_client(replay, replay_server)
            self._iterator = _data_builder(builder, group).make_dataset_iterator(self._client)
            self._learner = builder.make_learner(
                ExperimentSeeds(config.seed).learner_key(),
                networks,
                self._iterator,
                config.get_logger_factory(),
                environment_spec,
                self._client,
                counting.Counter(counter, prefix="learner"),
                sharding=config.learner_sharding if group is None else group.sharding(config.learner_sharding),
            )
        layout = getattr(self._learner, "layout", None)
        if layout is not None:  # where the learner runs: the devices of this node's process (its placement's)
            devices = list(layout.mesh.devices.flat)
            processes = "" if group is None else f" of {group.num_processes} processes"
            print(
                f"learner: on {len(devices)} {devices[0].platform} device(s){processes} (ids "
                f"{', '.join(str(d.id) for d in devices)}), {layout.sharding.strategy}.",
                flush=True,
            )
        first_start = counter.increment(learner_node_starts=1).get("learner_node_starts") == 1
        self._gathers = None  # a state split over the group's processes: gathered with them (learner_group.py)
        if group is not None and splits_state(config.learner_sharding):
            self._gathers = StateGathers(self._learner, keep=True, save=self._write if resume.checkpointer else None)
        self._save_lock = threading.Lock()
        self._step_lock = threading.Lock()  # held while run() steps; finish() takes it to stop stepping
        self._finished = threading.Event()
        self._done = threading.Event()  # from a dataset: the budget is spent and the last checkpoint written
        self._checkpointer = resume.checkpointer
        # Tables held here are lost with the process, so every start loads them; a replay node's were loaded when
        # it was built, and are checked at the first start only (later, actors have added to them).
        if resume.restore(
            self._learner, replay=self._client, load_replay=holds_replay, check_replay=holds_replay or first_start
        ):
            counter.increment(learner_restores=1)
            print(
                f"learner: restored {resume.restored.path} (learner step {resume.restored.learner_steps}).", flush=True
            )
        if group is not None:
            check_same_restore(self.steps())
        if holds_replay and feed == "direct":  # after the restore, which replaces the tables' items
            from acme.replay.direct import ReplayListener

            self._listener = ReplayListener(self._client)
        elif holds_replay:
            from acme.replay.feed import QueueFeed

            tables = sorted(self._client.server_info())
            self._feed = QueueFeed(replay_client(replay), self._client, tables).start()

    def pid(self) -> int:
        return os.getpid()

    def get_variables(self, names):
        if self._gathers is not None:
            return self._gathers.variables(names)
        return to_host(self._learner.get_variables(names))

    def steps(self) -> int:
        """The learner's own step count (its updates)."""
        return learner_steps_of(self._learner)

    def done(self) -> bool:
        """From a dataset: whether the budget is spent (and the last checkpoint, if any, written)."""
        return self._done.is_set()

    def replay_address(self) -> tuple | None:
        """With the direct feed: the ``(host, port, key)`` actors' ``RemoteReplay`` connect to; else None."""
        return None if self._listener is None else self._listener.address

    def held_replay_info(self) -> dict:
        """When the learner holds the replay: the items its feed brought (``items_received``) and its tables'
        sizes and counters by name (``tables``); else an empty dict."""
        if self._feed is None and self._listener is None:
            return {}
        info = {name: dataclasses.asdict(table) for name, table in self._client.server_info().items()}
        received = self._feed.moved() if self._feed is not None else self._listener.received
        return {"items_received": received, "tables": info}

    def run(self) -> None:
        if self._membership is not None:
            self._stepping.set()
            try:
                step_in_lockstep(
                    self._learner,
                    self._iterator,
                    lambda: launch.stop_requested() or self._finished.is_set(),
                    self._step_lock,
                    self._membership,
                    0,
                    self._save_if_due,
                    self._gathers,
                )
            finally:
                self._stepping.clear()
            return
        ready = getattr(self._iterator, "ready", None)
        while not launch.stop_requested() and not self._finished.is_set():
            if self._budget is not None and self.steps() >= self._budget:
                if self._checkpointer is not None:
                    self.finish()
                self._done.set()
                return
            if self._feed is not None:
                self._feed.check()
            if ready is None or ready():
                with self._step_lock:
                    if self._finished.is_set():
                        break
                    self._learner.step()
                    if self._checkpointer is not None and self._checkpointer.clock.due(self.steps()):
                        self.save()
            else:
                time.sleep(0.001)

    def _save_if_due(self) -> None:
        if self._checkpointer is not None and self._checkpointer.clock.due(self.steps()):
            if self._gathers is not None:
                self._gathers.want_save()  # gathered and written in the group's next round
            else:
                self.save()

    def save(self) -> str:
        """Writes a checkpoint now (learner state, counts, replay); returns its path.

        Safe to call from another node while ``run`` steps the learner: the state is
        copied to the host once and named by its own step count, and saves are serialised.
        """
        if self._checkpointer is None:
            raise RuntimeError("This experiment has no checkpointing configured (ExperimentConfig.checkpointing).")
        if self._gathers is not None:  # the group's processes gather the state together
            return self._gathers.save_now(self._stepping.is_set)
        return self._write(self._learner.save())

    def _write(self, state: Any) -> str:
        """Writes ``state`` (the learner's, on the host) as a checkpoint with the counts and the replay."""
        with self._save_lock:
            steps = getattr(state, "steps", None)
            return self._checkpointer.save(
                state,
                int(steps) if steps is not None else learner_steps_of(self._learner),
                _persistent_counts(self._counter.get_counts()),
                replay_client=self._client,
            )

    def finish(self) -> str:
        """Stops stepping the learner, then writes its last state as a checkpoint; returns the path.

        Called once the step budget is spent, so the final checkpoint holds every update the
        learner made (none is taken after it).
        """
        self._finished.set()
        while self._membership is not None and self._stepping.is_set():
            time.sleep(0.01)  # the group stops together at its next round; a step it agreed on is taken first
        if self._gathers is not None:  # written in the group's last round, as it stopped
            if self._gathers.last_saved is None:
                raise RuntimeError("The learner group stopped before it could gather its state for a checkpoint.")
            return self._gathers.last_saved
        with self._step_lock:
            return self.save()

    def stop(self) -> None:
        """At the program's end: a checkpointed run stopped before its budget (Ctrl-C, SIGTERM, another node's
        failure) first saves the learner as it stops, so that the same command resumes from there."""
        if self._checkpointer is not None and not self._finished.is_set():
            if self._budget is None:
                steps = f"actor steps {self._counter.get_counts().get('actor_steps', 0)}"
            else:
                steps = f"learner steps {self.steps()}"
            print(f"Checkpoint saved: {self.finish()} ({steps}).", flush=True)
        if self._feed is not None:
            self._feed.close()
        if self._listener is not None:
            self._listener.close()
        close_sampling(self._iterator, self._client)


def _data_builder(builder: Any, group: LearnerGroup | None) -> Any:
    """The builder whose dataset iterator samples one process's rows of each batch (the builder itself in one)."""
    if group is None:
        return builder
    local = group.local_batch_size(builder.config.batch_size)
    return type(builder)(dataclasses.replace(builder.config, batch_size=local))


class LearnerProcess:
    """Process ``process_id`` (1 or more) of a learner over several processes (``RunOptions.learner_processes``;
    process 0 is the ``LearnerNode``): it builds the same learner (the same seed, then the newest checkpoint's
    state), samples its rows of each batch from the replay node, and steps in lockstep with the others until one
    of them stops. Process 0 alone logs, counts, serves the parameters and checkpoints (the state it saves is
    every process's: under ``data`` each holds all of it)."""

    def __init__(
        self,
        config: ExperimentConfig,
        environment_spec: specs.EnvironmentSpec,
        replay: Any,
        replay_server: bool,
        membership: GroupMembership,
        process_id: int,
    ):
        join_group(membership, process_id)  # before anything starts jax's devices
        from acme.utils import loggers

        group = membership.group
        self._membership, self._process_id = membership, process_id

        builder = config.builder
        self._client = sampling_client(replay, replay_server)
        self._iterator = _data_builder(builder, group).make_dataset_iterator(self._client)
        self._learner = builder.make_learner(
            ExperimentSeeds(config.seed).learner_key(),
            config.network_factory(environment_spec),
            self._iterator,
            lambda label, steps_key=None: loggers.NoOpLogger(),
            environment_spec,
            self._client,
            counting.Counter(),
            sharding=group.sharding(config.learner_sharding),
        )
        resume = open_resume(config, exclusive=False)
        resume.restore(self._learner)
        check_same_restore(learner_steps_of(self._learner))
        self._step_lock = threading.Lock()
        self._gathers = StateGathers(self._learner) if splits_state(config.learner_sharding) else None

    def run(self) -> None:
        step_in_lockstep(
            self._learner,
            self._iterator,
            launch.stop_requested,
            self._step_lock,
            self._membership,
            self._process_id,
            gathers=self._gathers,
        )

    def stop(self) -> None:
        close_sampling(self._iterator, self._client)


def _persistent_counts(counts: dict) -> dict:
    """Counts worth restoring: how often this program's nodes started or finished is not carried into the next run."""
    return {key: value for key, value in counts.items() if not key.endswith(("_node_starts", "_node_finishes"))}


def make_counter(counts: dict) -> counting.Counter:
    """A counter that starts from ``counts`` (those of a checkpoint)."""
    counter = counting.Counter()
    counter.restore(counts)
    return counter


def _budget_spent(counter: Any, max_steps: int) -> bool:
    return counter.get_counts().get("actor_steps", 0) >= max_steps


def save_final_checkpoint(learner: Any, counter: Any, num_actors: int) -> None:
    """Once every actor has finished (the step budget is spent), stops ``learner`` and has it write a last checkpoint.

    The learner keeps sampling until the actors have added their last episodes (a rate
    limiter could otherwise hold them), then stops, so the checkpoint holds every update it
    made. A terminal node, so the program (and its replay node) stays up until the save is complete.
    """
    while counter.get_counts().get("actor_node_finishes", 0) < num_actors:
        if launch.stop_requested():
            return
        time.sleep(0.2)
    print(
        f"Final checkpoint saved: {learner.finish()} (actor steps {counter.get_counts().get('actor_steps', 0)}).",
        flush=True,
    )


class ActorNode:
    """Acts in its own environment (or ``config.num_envs_per_actor`` of them), writing to replay, until the
    step budget is spent."""

    def __init__(
        self,
        config: ExperimentConfig,
        environment_spec: specs.EnvironmentSpec,
        actor_id: int,
        num_actors: int,
        replay: Any,
        learner: Any,
        counter: Any,
        variable_poll_seconds: float = 0.2,
        inference: Any = None,
        replay_listener: Any = None,
    ):
        self._config = config
        self._builder = config.builder.for_actor(actor_id, num_actors)
        self._inference = inference  # an InferenceServer (handle) that acts for this actor, or None
        self._spec = environment_spec
        self._actor_id = actor_id
        self._num_actors = num_actors
        self._replay = replay
        self._replay_listener = replay_listener  # who says where to send items: the learner, or a replay node
        self._learner = learner
        self._counter = counter
        self._poll = variable_poll_seconds

        self._adders: list = []
        self._client = None

    def pid(self) -> int:
        return os.getpid()

    def stop(self) -> None:
        """Unblocks the adders waiting on replay's rate limiter, so the actor can return."""
        for adder in self._adders:
            abort = getattr(adder, "abort", None)
            if abort is not None:
                abort()
        abort = getattr(self._client, "abort", None)  # a direct connection to the learner's tables
        if abort is not None:
            abort()

    def run(self) -> None:
        config, spec = self._config, self._spec
        seeds = ExperimentSeeds(config.seed)
        self._counter.increment(actor_node_starts=1)
        builder = self._builder
        networks = config.network_factory(spec)
        policy = builder.make_policy(networks, spec, evaluation=False)
        if self._replay_listener is not None:  # items go over a direct connection (to the learner, or a node)
            from acme.replay.direct import RemoteReplay, ReplayTransportError

            def listener_address():  # a restarted learner listens at a new address
                if launch.stop_requested():
                    raise ReplayTransportError("The program is stopping.")
                return self._replay_listener.replay_address()

            client = RemoteReplay(
                self._replay_listener.replay_address(),
                builder.make_replay_tables(spec, policy),
                reconnect=listener_address,
            )
        else:
            client = replay_client(self._replay)
        self._client = client
        if self._inference is not None:
            source = _DirectSource(None)  # the inference server holds the parameters
            server, disconnect = connect(self._inference)  # a direct connection from another process
        elif builder.actors_fetch_directly:
            source = _DirectSource(self._learner)
        else:
            source = PollingVariableSource(self._learner, ["policy"], self._poll)
        num_envs = config.num_envs_per_actor
        self._adders = [builder.make_adder(client, spec, policy) for _ in range(num_envs)]
        recorders = None
        if config.record_dataset is not None:  # one recorder per environment: their episodes interleave
            recorders = [RecordingAdder(adder, EpisodeRecorder()) for adder in self._adders]
        adders = recorders or self._adders
        # A restarted or resumed actor takes up its share of the steps so far, so exploration
        # schedules go on rather than start again.
        first_step = int(self._counter.get_counts().get("actor_steps", 0))  # where this node's recording starts
        share = first_step // (self._num_actors * num_envs)
        logger = config.get_logger_factory()(f"actor_{self._actor_id}", "actor_steps")
        should_stop = lambda: launch.stop_requested() or _budget_spent(self._counter, config.max_num_actor_steps)  # noqa: E731
        counter = counting.Counter(self._counter, prefix="actor")
        keys = seeds.actor_keys(self._actor_id, num_envs)
        environments = config.environments(seeds.environment_seeds(self._actor_id, num_envs))
        if self._inference is not None:
            actor = ServedActor(server, keys, adders, self._actor_id)
        else:
            actor = builder.make_actor(
                keys, policy, spec, variable_source=source, adders=adders, device=device_of(config.actor_device)
            )
        actor.restore({"num_steps": np.full(num_envs, share, np.int32)})
        loop = EnvironmentLoop(environments, actor, counter=counter, logger=logger, label="actor")

        def run() -> None:
            while not should_stop():
                loop.run(100 * num_envs)

        try:
            if not _budget_spent(self._counter, config.max_num_actor_steps):
                run()
        except Exception:
            if launch.stop_requested():
                return  # the adder was aborted at shutdown
            raise
        finally:
            source.close()
            if self._replay_listener is not None:
                _close_remote(client)
            if self._inference is not None:
                actor.close()  # the server drops this actor's recurrent states
                disconnect()
            if recorders is not None:  # its finished episodes, merged with the other actors' when the run ends
                write_shard(
                    config.record_dataset,
                    f"actor-{self._actor_id}",
                    [episode for recorder in recorders for episode in recorder.recorder.episodes],
                    spec,
                    config.environment_id,
                    training_run_metadata(config, first_step, _actor_steps_or_none(self._counter)),
                )
        # A last row with the shared counts, also written by an actor restarted after the budget was spent.
        counts = self._counter.increment(actor_node_finishes=1)
        logger.write({**counts, "actor_finished": 1})
        logger.close()


def merge_recording(config: ExperimentConfig) -> str:
    """After a distributed program with ``config.record_dataset`` has ended: writes the episodes each actor node
    recorded (``DIR.shards/``) as one Minari dataset in ``DIR``, and returns ``DIR``."""
    metadata = training_run_metadata(config)
    return merge_shards(config.record_dataset, config.environment_spec(), config.environment_id, metadata)


def _actor_steps_or_none(counter: Any) -> int | None:
    """The shared actor steps, or None where the counter cannot be reached (a program being torn down): a shard
    that cannot say where its steps end leaves the merged dataset's coverage unsaid rather than wrong."""
    try:
        return int(counter.get_counts().get("actor_steps", 0))
    except Exception:
        return None


def _close_remote(client: Any) -> None:
    """Waits for a direct connection's items in flight, then closes it; at shutdown, when the learner's listener
    is already closed, the items in flight are dropped with it."""
    from acme.replay.direct import ReplayTransportError

    try:
        client.close()
    except ReplayTransportError:
        if not launch.stop_requested():
            raise


class _DirectSource:
    """The learner handle as a variable source, closed like a ``PollingVariableSource``."""

    def __init__(self, learner: Any):
        self._learner = learner

    def get_variables(self, names):
        return self._learner.get_variables(names)

    def close(self) -> None:
        pass


class EvaluatorNode:
    """Evaluates the learner's greedy policy on the run's schedule (every ``eval_every`` steps, and once at the
    end); its ``run()`` returns the run's ``SeedRun`` (every evaluation, the final counts and the learner's policy
    then), which ``launch`` hands back.

    Online (``steps_key`` actor steps) it counts the counter's actor steps up to ``config``'s budget; from a
    dataset (``LEARNER_STEPS``) the learner's own steps, until the learner says it is done.
    """

    def __init__(
        self,
        config: ExperimentConfig,
        environment_spec: specs.EnvironmentSpec,
        learner: Any,
        counter: Any,
        steps_key: str = ACTOR_STEPS,
    ):
        self._config = config
        self._spec = environment_spec
        self._learner = learner
        self._counter = counter
        self._steps_key = steps_key

    def _progress(self) -> tuple[int, bool]:
        """The steps taken so far, and whether the run is over."""
        if self._steps_key == LEARNER_STEPS:
            done = self._learner.done()  # asked first: the steps read after it include the last ones
            return int(self._learner.steps()), done
        steps = self._counter.get_counts().get(ACTOR_STEPS, 0)
        return steps, steps >= self._config.max_num_actor_steps

    def run(self) -> SeedRun:
        config, offline = self._config, self._steps_key == LEARNER_STEPS
        evaluator = None
        if config.eval_every:  # without evaluations the node only waits for the run's end, then hands back the run
            networks = config.network_factory(self._spec)
            evaluator = Evaluator(config, self._spec, networks, self._learner, self._steps_key)
        schedule = Schedule(config.max_num_actor_steps, config.eval_every)
        start = time.perf_counter()
        evaluations = []
        try:
            while not launch.stop_requested():
                steps, finished = self._progress()
                schedule.reached(steps)
                if evaluator is not None and (schedule.evaluation_due or finished):
                    # From a dataset an evaluation is placed at the learner step that made it due (no actor steps).
                    counts = (lambda: {LEARNER_STEPS: steps}) if offline else self._counter.get_counts
                    evaluation = evaluator.evaluate(
                        0 if offline else steps, counts, lambda: time.perf_counter() - start
                    )
                    evaluations.append(evaluation)
                    schedule.evaluated(evaluation.mean_return)
                if finished:
                    break
                time.sleep(0.2)
        finally:
            if evaluator is not None:
                evaluator.close()
        actor_steps = 0 if offline else self._counter.get_counts().get(ACTOR_STEPS, 0)
        try:  # the learner's own step count and policy, where its process can still be reached
            learner_steps, policy = int(self._learner.steps()), to_host(self._learner.get_variables(["policy"])[0])
        except Exception:  # the run's result is kept without them: the last evaluation's learner steps, no policy
            learner_steps, policy = max([e.learner_steps or 0 for e in evaluations] + [0]), None
        return SeedRun(config.seed, evaluations, int(actor_steps), learner_steps, policy_params=policy)


def _build_with_compile_cache(setting: str | None, constructor: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    compile_cache.enable(setting)
    return constructor(*args, **kwargs)


def compiling_with(setting: str | None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Wraps a node's constructor so that the process it runs in keeps its compiled programs as ``setting`` says
    (``RunOptions.compile_cache``; ``acme.jax.compile_cache.enable``): a Ray node in its own process, where
    ``None`` reads that machine's default; on the threads launcher, the run's process, already set the same way."""
    return lambda constructor: functools.partial(_build_with_compile_cache, setting, constructor)


def make_distributed_experiment(
    config: ExperimentConfig, options: RunOptions | None = None, **fields: Any
) -> launch.Program:
    """A program that runs ``config`` with a replay node, a counter, a learner, ``options.actors`` actors
    and an evaluator, as ``options`` (a ``RunOptions``, or its fields as keywords) say; with ``options.dataset``
    a counter, a learner that samples the dataset and an evaluator. Actors and the evaluator are terminal: the
    program ends when the actors have spent ``config.max_num_actor_steps`` (counted across all of them) and the
    final evaluation is done. Actors that crash are restarted up to ``actor_restarts`` times.

    With ``config.checkpointing`` the program resumes from the directory's newest checkpoint
    (replay tables, counts and learner state), the learner saves at the configured interval and
    once more, after it stops updating, when every actor has finished (node ``final_checkpoint``), and
    a learner whose process dies is restarted up to ``learner_restarts`` times from its last
    checkpoint while the actors keep running (restarts need the Ray launcher). Without
    checkpointing a learner is never restarted: it would start again from scratch.

    ``RunOptions`` describes the replay backends (``replay``: a reverb server, local tables the threads share,
    ``ReplayServerNode``, or tables the learner holds, fed as ``learner_feed`` says) and who evaluates the actors'
    policy (``inference``: each actor, or an ``InferenceServer`` node that batches every actor's observations;
    builders that bound the policy lag, ``actors_fetch_directly``, are refused there).
    """
    if options is None:
        options = RunOptions(**fields)
    elif fields:
        raise TypeError(f"Give a RunOptions or its fields as keywords, not both; got {sorted(fields)}.")
    if options.launcher not in (None, *DISTRIBUTED):
        raise ValueError(f"A distributed program runs on the threads or ray launcher, not {options.launcher!r}.")
    if options.dataset is not None:
        return _dataset_program(config, options)
    num_actors, replay, learner_feed = options.actors, options.replay_backend, options.feed
    compiling = compiling_with(options.compile_cache)
    config.builder.check_vector_acting(config.num_envs_per_actor)  # refused here, not in an actor's process later
    # The learner's and a replay node's tables are saved as the local backend's.
    resume = open_resume(config, "local" if replay in ("learner", "server") else replay)
    staging, fallback = (resume.reverb_paths() or (None, None)) if replay == "reverb" else (None, None)
    replay_state = resume.replay_state if replay in ("local", "server") else None  # the learner's: it loads them
    counts = _persistent_counts(resume.counts)
    _announce(resume)
    spec = config.environment_spec()
    builder = config.builder
    program = launch.Program(name="experiment")

    def make_tables():
        networks = config.network_factory(spec)
        return builder.make_replay_tables(spec, builder.make_policy(networks, spec, evaluation=False))

    def make_reverb_tables():
        from acme.replay.reverb_tables import to_reverb_tables

        return to_reverb_tables(make_tables())

    def make_transfer_queues():
        from acme.replay.feed import transfer_queues
        from acme.replay.reverb_tables import to_reverb_tables

        return to_reverb_tables(transfer_queues(make_tables(), options.transfer_queue_size))

    holds_replay, served = replay == "learner", replay == "server"
    listener = None  # the node whose replay_address() the actors send their items to, with a direct feed
    if replay == "reverb":
        replay = program.add_node(
            launch.ReverbNode(make_reverb_tables, checkpoint_dir=staging, fallback_checkpoint_path=fallback),
            label="replay",
        )
    elif holds_replay and learner_feed == "direct":
        replay = None  # the learner holds the tables and listens for the actors' items itself
    elif served:
        replay = program.add_node(
            launch.ServiceNode(ReplayServerNode, make_tables, config.seed, replay_state), label="replay"
        )
        listener = replay
    elif holds_replay:
        replay = program.add_node(launch.ReverbNode(make_transfer_queues), label="replay")
    else:
        replay = program.add_node(
            launch.LocalServiceNode(
                LOCAL_REPLAY_NEEDS_THREADS, make_local_replay, make_tables, config.seed, replay_state
            ),
            label="replay",
        )
    counter = program.add_node(launch.ServiceNode(make_counter, counts), label="counter")
    restarts = options.learner_restarts if config.checkpointing is not None else 0
    membership = None
    group = _learner_group(config, options)
    if group is not None:  # its processes meet at a rendezvous node; they restart together (learner_group.py)
        # Outside the group "learner_group", so that a placement of the group's processes (one per host) leaves it.
        rendezvous = program.add_node(
            launch.ServiceNode(GroupRendezvous, group.num_processes), label="learner_rendezvous"
        )
        membership = GroupMembership(group, rendezvous, restartable=restarts > 0)
    learner = program.add_node(
        launch.ServiceNode(
            compiling(LearnerNode),
            config,
            spec,
            replay,
            counter,
            holds_replay,
            learner_feed,
            served,
            membership=membership,
        ),
        label="learner",
        restart=launch.RestartPolicy(max_restarts=restarts),
    )
    if group is not None:
        with program.group("learner_group", restart=launch.RestartPolicy(max_restarts=restarts)):
            for process_id in range(1, group.num_processes):
                program.add_node(
                    launch.ServiceNode(compiling(LearnerProcess), config, spec, replay, served, membership, process_id),
                    label=f"process_{process_id}",
                )
    if replay is None:
        listener = learner
    server = None
    if options.inference_mode == "server":
        check_servable(builder, config.num_envs_per_actor)
        server = program.add_node(
            launch.ServiceNode(
                compiling(InferenceServer),
                config,
                spec,
                learner,
                options.inference_batch_size,
                options.inference_wait_seconds,
                options.variable_poll_seconds,
                num_actors,
            ),
            label="inference",
        )
    with program.group("actor", restart=launch.RestartPolicy(max_restarts=options.actor_restarts)):
        for actor_id in range(num_actors):
            program.add_node(
                launch.ServiceNode(
                    compiling(ActorNode),
                    config,
                    spec,
                    actor_id,
                    num_actors,
                    None if served else replay,
                    learner,
                    counter,
                    options.variable_poll_seconds,
                    server,
                    listener,
                ),
                terminal=True,
            )
    # The evaluator hands back the run's result, with or without evaluations (eval_every 0: it only waits).
    program.add_node(
        launch.ServiceNode(compiling(EvaluatorNode), config, spec, learner, counter), label="evaluator", terminal=True
    )
    if config.checkpointing is not None:
        program.add_node(
            launch.FunctionNode(save_final_checkpoint, learner, counter, num_actors),
            label="final_checkpoint",
            terminal=True,
        )
    return program


def _learner_group(config: ExperimentConfig, options: RunOptions) -> LearnerGroup | None:
    """The processes of a learner over several (``options.learner_processes``), on this machine; None for one."""
    check_learner_group(config, options)
    if options.learner_processes == 1:
        return None
    import jax

    devices = config.learner_sharding.devices or 1
    return LearnerGroup(
        options.learner_processes, local_cpu_devices=devices if jax.default_backend() == "cpu" else None
    )


def _announce(resume: Resume) -> None:
    """Says which checkpoint the program resumes, or where its checkpoints go."""
    if resume.restored is not None:
        print(resume.restored.describe(), flush=True)
    elif resume.checkpointer is not None:
        print(f"Checkpoints go to {resume.checkpointer.directory}.", flush=True)


def _dataset_program(config: ExperimentConfig, options: RunOptions) -> launch.Program:
    """From ``options.dataset``: a counter, a ``LearnerNode`` that samples the dataset (restarted up to
    ``learner_restarts`` times from its last checkpoint when the experiment is checkpointed; Ray only) and the
    ``EvaluatorNode`` on learner steps; the budget and the evaluation interval count learner steps."""
    spec = config.environment_spec(evaluation=True)
    check_spec(read_metadata(options.dataset), spec, options.dataset)  # refused before anything starts
    _announce(open_resume(config))  # this process holds the directory; the learner node restores the checkpoint
    program = launch.Program("offline")
    compiling = compiling_with(options.compile_cache)
    counter = program.add_node(launch.ServiceNode(make_counter, {}), label="counter")
    restarts = options.learner_restarts if config.checkpointing is not None else 0
    learner = program.add_node(
        launch.ServiceNode(compiling(LearnerNode), config, spec, None, counter, options=options),
        label="learner",
        restart=launch.RestartPolicy(max_restarts=restarts),
    )
    evaluator = launch.ServiceNode(compiling(EvaluatorNode), config, spec, learner, counter, LEARNER_STEPS)
    program.add_node(evaluator, label="evaluator", terminal=True)
    return program
