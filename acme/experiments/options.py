"""``RunOptions``: where and how an experiment runs (launcher, actors, replay, inference, Ray, the device loop's
agents, a dataset to learn from), described and checked once. The command line makes its flags from these fields,
``acme.experiments.run`` and ``make_distributed_experiment`` run from them and ``launch`` takes their
``launch_options()``; adding an option is adding a field here."""

from __future__ import annotations

import argparse
import dataclasses
import math
from typing import Any, Mapping

import launch
from acme.agents.config_checks import MAX_BATCH_DIMENSION, MAX_REPLAY_ITEMS, is_finite_number, is_integer, is_number
from acme.utils import extras
from acme.utils.quoting import quote
from launch.options import say, spelled_as, spelling

RUN_LAUNCHERS = ("local", "threads", "ray", "anakin")
DISTRIBUTED = ("threads", "ray")
HOST = ("local", "threads", "ray")  # the launchers whose environments step on the host
COMPILES_HERE = ("local", "threads", "anakin")  # the launchers whose programs compile in this process
DEFAULT_STREAM_SAMPLES_PER_INSERT = 32.0
INFERENCE_MODES = ("actor", "server")
LEARNER_FEEDS = ("reverb", "direct")  # how items reach a learner that holds the replay
# The replay backends each launcher can use: local tables are shared by one process's threads only, and the
# learner's or a node's tables are fed over connections between a distributed run's nodes.
REPLAYS = {
    "local": ("local", "reverb"),
    "threads": ("reverb", "local", "learner", "server"),
    "ray": ("reverb", "learner", "server"),
}
REPLAY_BACKENDS = REPLAYS["threads"]
MAX_ACTORS = 2**16  # actor processes of one program: more than any cluster this library has been run on
MAX_RESTARTS = 2**20
MAX_WAIT_SECONDS = 86_400
MAX_DEVICE_ID = 2**16
MAX_LEARNER_PROCESSES = 1_024  # one per machine of a cluster
TRANSFER_QUEUE_SIZE = 1_000  # items an actor may write ahead of a learner that holds the replay

# What each launcher does, for errors that refuse an option it has no use for.
_DOES = {
    "local": "runs the actor and learner interleaved in this one process",
    "threads": "runs every node as a thread of this process",
    "ray": "runs every node as a Ray actor",
    "anakin": "keeps the environments, replay and learner on the device in one call",
}


def default_learner_feed() -> str:
    """How actors send items to a learner that holds the replay: reverb transfer queues where reverb is installed,
    else the direct connection (``acme.replay.direct``)."""
    return "reverb" if extras.available("reverb") else "direct"


def default_replay() -> str:
    """The replay of a distributed program when none is asked for: reverb where it is installed, else the
    learner's own tables fed over direct connections (both run on every launcher)."""
    return "reverb" if extras.available("reverb") else "learner"


def parse_sweep(text: str) -> tuple[str, tuple[float, ...]]:
    """``FIELD=V1,V2,...`` (a config field and at least one finite number) as ``(field, values)``."""
    field, sep, values = text.partition("=")
    try:
        parsed = tuple(float(v) for v in values.split(","))
    except ValueError:
        parsed = ()
    if not sep or not field.strip() or not parsed or not all(math.isfinite(v) for v in parsed):
        raise argparse.ArgumentTypeError(
            f"expected FIELD=V1,V2,... with a config field and finite numbers (e.g. learning_rate=1e-3,3e-4), "
            f"got {quote(text)}"
        )
    return field.strip(), parsed


def _option(default: Any, help: str, launchers: tuple[str, ...] = DISTRIBUTED, **cli: Any) -> Any:
    """A field with its one-line description, the launchers it applies to, and how a command line reads it."""
    return dataclasses.field(default=default, metadata={"help": help, "launchers": launchers, **cli})


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """Where and how an experiment runs. Checked on construction, before anything is built or written.

    An option that the launcher has no use for is refused (the error names the launchers it applies to);
    ``launcher=None`` leaves the launcher open (a program from ``make_distributed_experiment`` runs on either
    distributed launcher, and ``launch`` checks the rest). ``None`` elsewhere means the documented default.
    """

    launcher: str | None = _option(
        None,
        "local: one process, actor and learner interleaved (default); threads: the distributed program with every "
        "node a thread; ray: every node a Ray actor; anakin: the whole loop (environment, acting, storage, "
        "learning) in one jitted call on the device, for jax: environments",
        RUN_LAUNCHERS,
        choices=RUN_LAUNCHERS,
    )
    num_actors: int | None = _option(None, "actors of a distributed run (default: 2)", type=int)
    replay: str | None = _option(
        None,
        "replay backend: local tables in this process (the default with the local launcher; with threads, tables "
        "its threads share), a reverb server (the 'reverb' extra; the default of distributed runs where it is "
        "installed), tables held by the learner and fed with each item once (learner: the default of distributed "
        "runs without reverb), or a replay node of local tables that the actors feed and the learner samples "
        "over direct connections (server; no reverb needed)",
        ("local", "threads", "ray"),
        choices=REPLAY_BACKENDS,
    )
    learner_feed: str | None = _option(
        None,
        "how items reach a learner that holds the replay: reverb queues that a thread of the learner empties "
        "(reverb, the default where it is installed) or each actor's authenticated direct connection (direct)",
        choices=LEARNER_FEEDS,
    )
    inference: str | None = _option(
        None,
        "who evaluates the policy in a distributed run: each actor with its own copy of the parameters (actor, "
        "the default), or one inference node that batches every actor's observations (server; every agent, "
        "recurrent ones with their state held per actor on the server; not with max_policy_lag)",
        choices=INFERENCE_MODES,
    )
    inference_batch_size: int = _option(64, "most observations the inference node evaluates in one call", type=int)
    inference_wait_seconds: float = _option(
        0.002, "longest the inference node waits for a batch to fill after its first request", type=float
    )
    transfer_queue_size: int = _option(
        TRANSFER_QUEUE_SIZE, "items each reverb queue holds on their way to a learner that holds the replay", type=int
    )
    actor_restarts: int = _option(3, "times an actor whose process dies is restarted", type=int)
    learner_restarts: int = _option(
        3, "times a learner whose process dies is restarted from its last checkpoint (with checkpointing)", type=int
    )
    variable_poll_seconds: float = _option(0.2, "seconds between an actor's polls for new parameters", type=float)
    learner_processes: int = _option(
        1,
        "processes that together hold one learner (jax's multi-controller runtime; their mesh spans every "
        "process's devices, --devices each, and each samples its share of every batch from the replay node; with "
        "checkpointing they restart together, --learner-restarts times); needs --sharding data or fsdp. Default: 1",
        ("ray",),
        type=int,
    )
    ray_address: str | None = _option(
        None,
        "join the running Ray cluster whose head node is at host:port (default: start a local Ray instance that "
        "listens on loopback only); the cluster's machines then reach this run's nodes and replay server",
        ("ray",),
    )
    bind_address: str | None = _option(
        None,
        "open the local Ray instance to other machines, with HOST (an IP address of this machine) as its node "
        "address; Ray's gRPC servers and the replay server then listen on every interface (default: loopback only)",
        ("ray",),
        metavar="HOST",
    )
    placement: Mapping[str, launch.Resources] | str | None = _option(
        None,
        "the resources each node or group reserves, so that Ray places it on a machine that has them, e.g. "
        '\'{"learner": {"num_gpus": 1}, "actor": {"custom": {"actor_host": 1}}}\' (nodes: replay, counter, learner, '
        "evaluator, learner_rendezvous; groups: actor, learner_group; default: no reservations); JSON text or a "
        "mapping to launch.Resources",
        ("ray",),
        metavar="JSON",
    )
    dashboard: bool = _option(False, "also start Ray's dashboard, on 127.0.0.1 (or on the bind address)", ("ray",))
    num_envs: int | None = _option(
        None,
        "environments each actor drives with one batched policy call per step (default: the tuned baseline's, "
        "else 1); on the device, the environments each agent steps (default: a rollout agent's batch size)",
        RUN_LAUNCHERS,
        type=int,
    )
    num_seeds: int = _option(
        1, "train this many agents (seeds seed, seed + 1, ...) in one vmapped call on the device", ("anakin",), type=int
    )
    resets_per_step: int | None = _option(
        None,
        "on the device, compute at most this many new episodes' starts a step over the environments (default: one "
        "per environment, every step, as vmap computes them); an environment that restarts beyond the first that "
        "many in the same step starts from a copy of one of theirs. For environments whose reset costs far more "
        "than a step (Craftax generates a world)",
        ("anakin",),
        type=int,
    )
    sweep: tuple[str, tuple[float, ...]] | None = _option(
        None,
        "train one agent (times num_seeds) per value of this numeric config field in the same call on the device, "
        "e.g. learning_rate=1e-3,3e-4",
        ("anakin",),
        type=parse_sweep,
        metavar="FIELD=V1,V2,...",
    )
    dataset: str | None = _option(
        None,
        "learn offline from this recorded dataset (python -m baselines record writes one) with no actors: the "
        "step budget and the evaluation interval then count learner steps",
        HOST,
        metavar="DIR",
    )
    stream_buffer: int = _option(
        0,
        "with a dataset: stream it from disk through a shuffle buffer of N items instead of reading it into "
        "memory (for datasets larger than memory; 0: in memory)",
        HOST,
        type=int,
        metavar="N",
    )
    stream_samples_per_insert: float = _option(
        DEFAULT_STREAM_SAMPLES_PER_INSERT,
        "with a stream buffer: about how often each item is sampled before it leaves the buffer",
        HOST,
        type=float,
        metavar="R",
    )

    compile_cache: str | None = _option(
        None,
        "keep compiled programs in DIR between runs (a folder only you can write; with ray, the same path on every "
        "machine), or 'off'; default: $ACME_COMPILE_CACHE, else ~/.cache/acme/jax-compile, each read where a process "
        "compiles (delete it to clear it)",
        RUN_LAUNCHERS,
        metavar="DIR|off",
    )
    record: str | None = _option(
        None,
        "also write every transition the actors make to a new dataset in DIR (Minari's format) when the run ends "
        "(on a Ray cluster DIR must be on a file system every node sees)",
        HOST,
        metavar="DIR",
    )
    actor_device: int | None = _option(
        None,
        "the device the actors' policy runs on (Sebulba: the learner on others, --sharding --devices); default: "
        "the CPU",
        HOST,
        type=int,
        metavar="ID",
    )

    def __post_init__(self) -> None:
        if self.launcher is not None and self.launcher not in RUN_LAUNCHERS:
            raise ValueError(f"{say('launcher')} must be one of {', '.join(RUN_LAUNCHERS)}, got {self.launcher!r}.")
        self._check_values()
        if isinstance(self.placement, str):
            try:
                object.__setattr__(self, "placement", launch.placement_from_json(self.placement))
            except (TypeError, ValueError) as error:
                raise ValueError(f"{say('placement')}: {error}") from None
        self._check_dataset()
        if self.learner_processes > 1:  # with the launcher left open too (a program for either launcher)
            self._check_learner_group()
        if self.launcher is not None:
            self._check_launcher()
        if self.launcher in DISTRIBUTED:
            self.launch_options()  # the launcher's own checks (addresses, dashboard), before anything starts
        self._check_files()
        if self.launcher != "anakin":
            replay, feed = self.replay_backend, self.feed
            if replay == "reverb" or (replay == "learner" and feed == "reverb"):
                extras.require("reverb", say("replay", replay) if replay == "reverb" else say("learner_feed", feed))

    def _check_values(self) -> None:
        choices_of = {"replay": REPLAY_BACKENDS, "learner_feed": LEARNER_FEEDS, "inference": INFERENCE_MODES}
        for name, choices in choices_of.items():
            value = getattr(self, name)
            if value is not None and value not in choices:
                raise ValueError(f"{say(name)} must be one of {', '.join(choices)} (or left out), got {value!r}.")
        # (least, most): a value past the most is a typo, not a run (acme.agents.config_checks says why for items).
        counts = {
            "num_actors": (1, MAX_ACTORS),
            "num_envs": (1, MAX_BATCH_DIMENSION),
            "num_seeds": (1, MAX_BATCH_DIMENSION),
            "resets_per_step": (1, MAX_BATCH_DIMENSION),
            "actor_device": (0, MAX_DEVICE_ID),
            "stream_buffer": (0, MAX_REPLAY_ITEMS),
            "inference_batch_size": (1, MAX_BATCH_DIMENSION),
            "transfer_queue_size": (1, MAX_REPLAY_ITEMS),
            "actor_restarts": (0, MAX_RESTARTS),
            "learner_restarts": (0, MAX_RESTARTS),
            "learner_processes": (1, MAX_LEARNER_PROCESSES),
        }
        for name, (least, most) in counts.items():
            value = getattr(self, name)
            if value is None and name in ("num_actors", "num_envs", "resets_per_step", "actor_device"):
                continue
            if not is_integer(value) or not least <= value <= most:
                raise ValueError(f"{say(name)} must be an integer >= {least} and at most {most:,}, got {quote(value)}.")
        for name in ("inference_wait_seconds", "variable_poll_seconds"):
            value = getattr(self, name)
            if not is_number(value) or not 0 <= value <= MAX_WAIT_SECONDS:
                raise ValueError(
                    f"{say(name)} must be a number of seconds >= 0 and at most {MAX_WAIT_SECONDS:,} (a day), got "
                    f"{quote(value)}."
                )

        spi = self.stream_samples_per_insert
        if not is_finite_number(spi) or not spi > 0:
            raise ValueError(f"{say('stream_samples_per_insert')} must be a finite number > 0, got {quote(spi)}.")
        if self.sweep is not None:
            field, values = self.sweep if isinstance(self.sweep, tuple) and len(self.sweep) == 2 else (None, ())
            values = tuple(values) if isinstance(values, (tuple, list)) else ()
            if not isinstance(field, str) or not field or not values or not all(is_finite_number(v) for v in values):
                raise ValueError(
                    f"{say('sweep')} must be a config field and finite numbers (field, (v1, v2, ...)), got "
                    f"{quote(self.sweep)}."
                )
            object.__setattr__(self, "sweep", (field, tuple(float(v) for v in values)))
        for name, what in (
            ("dataset", "the directory of a recorded dataset"),
            ("record", "a new directory"),
            ("compile_cache", "a folder or 'off'"),
        ):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ValueError(f"{say(name)} must be {what}, got {quote(value)}.")

    def _check_dataset(self) -> None:
        """What only a run from a dataset uses needs one, and what sets up actors is refused with one."""
        if self.dataset is None:
            for name in ("stream_buffer", "stream_samples_per_insert"):
                if getattr(self, name) != RunOptions.__dataclass_fields__[name].default:
                    raise ValueError(
                        f"{say(name)} streams a dataset; give {say('dataset', 'DIR')}, or leave {say(name)} out."
                    )
            return
        if self.stream_samples_per_insert != DEFAULT_STREAM_SAMPLES_PER_INSERT and not self.stream_buffer:
            raise ValueError(
                f"{say('stream_samples_per_insert')} paces a streamed dataset: give {say('stream_buffer', 'N')} too."
            )
        for name, does in (("num_envs", "sets up"), ("record", "records"), ("actor_device", "places")):
            if getattr(self, name) is not None:
                raise ValueError(
                    f"{say(name)} {does} actors, and a run from a dataset has none: leave {say(name)} out."
                )

    def _check_files(self) -> None:
        """Once the options make sense together: the dataset must be readable (a ``DatasetError`` where there is no
        dataset or a damaged one), and a dataset to record must not exist yet (nothing is overwritten)."""
        from acme.datasets.minari_format import holds_dataset, read_metadata

        if self.dataset is not None:
            read_metadata(self.dataset)
        if self.record is not None and holds_dataset(self.record):
            raise ValueError(
                f"{say('record', self.record)} already holds a dataset, which is never overwritten: name a new "
                "directory."
            )

    def _check_launcher(self) -> None:
        for field in dataclasses.fields(self):
            applies = field.metadata["launchers"]
            if self.launcher in applies or getattr(self, field.name) == field.default:
                continue
            names = " or ".join(applies)
            raise ValueError(
                f"{say(field.name)} is for the {names} launcher{'s' if len(applies) > 1 else ''}; the "
                f"{self.launcher} launcher {_DOES[self.launcher]}. Use {say('launcher', names)}, or leave "
                f"{say(field.name)} out."
            )
        if self.replay is not None and self.replay not in REPLAYS[self.launcher]:
            if self.launcher == "ray":  # local
                raise ValueError(
                    f"{say('replay', 'local')} keeps the tables inside one process; Ray runs the learner and actors "
                    f"in processes of their own. Leave {say('replay')} out, use {say('replay', 'learner')} (the "
                    f"learner's tables, fed over direct connections) or reverb, or the threads or local launcher."
                )
            raise ValueError(  # learner or server, in one process
                f"{say('replay', self.replay)} is for distributed runs: the {self.replay} node keeps the tables "
                "and the actors' processes send it their items. The local launcher already samples local tables "
                f"in this one process; use {say('launcher', 'threads or ray')}, or leave {say('replay')} out."
            )

    def _check_learner_group(self) -> None:
        """A learner over several processes samples a replay node (or reverb)."""
        if self.replay in ("learner", "local"):
            raise ValueError(
                f"{say('learner_processes', self.learner_processes)} needs a replay every learner process samples: "
                f"{say('replay', 'server')} (the default then) or reverb, not {say('replay', self.replay)}."
            )
        if self.dataset is not None:
            raise ValueError(
                f"{say('learner_processes', self.learner_processes)} is for runs with actors, not from a dataset."
            )

    @property
    def actors(self) -> int:
        """The number of actors of a distributed run."""
        return 2 if self.num_actors is None else self.num_actors

    @property
    def replay_backend(self) -> str:
        """The replay this run uses: the one asked for, else local tables in one process and
        ``default_replay()`` in a distributed run (or one whose launcher is left open), but a replay node (server)
        rather than the learner's tables for a learner over several processes."""
        if self.replay is not None:
            return self.replay
        if self.launcher == "local":
            return "local"
        if self.learner_processes > 1 and default_replay() == "learner":
            return "server"  # every learner process samples the replay node
        return default_replay()

    @property
    def feed(self) -> str:
        """How items reach a learner that holds the replay: the one asked for, else ``default_learner_feed()``."""
        return default_learner_feed() if self.learner_feed is None else self.learner_feed

    @property
    def inference_mode(self) -> str:
        return "actor" if self.inference is None else self.inference

    def launch_options(self) -> launch.LaunchOptions:
        """What ``launch.launch`` takes for this run (the threads or ray launcher)."""
        if self.launcher not in DISTRIBUTED:
            raise ValueError(f"launch_options() is for the threads and ray launchers, not {self.launcher!r}.")
        outer = spelling()
        rename = {"address": "ray_address"}
        with spelled_as(lambda name, *value: outer(rename.get(name, name), *value)):
            return launch.LaunchOptions(
                self.launcher,
                address=self.ray_address,
                bind_address=self.bind_address,
                dashboard=self.dashboard,
                placement=self.placement,
            )


def flag_spelling(name: str, *value: object) -> str:
    """Options named as the command line's flags: ``--bind-address``, ``--launcher ray``."""
    flag = "--" + name.replace("_", "-")
    return f"{flag} {value[0]}" if value else flag


def from_flags(**fields: Any) -> RunOptions:
    """``RunOptions`` from a command line's values, its errors naming the flags."""
    with spelled_as(flag_spelling):
        return RunOptions(**fields)
