"""Runs every node as a Ray actor. ``ray`` is imported only when this runs."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import socket
import subprocess
import sys
import time
from typing import Any, Iterator

from launch import _fate_share, network, ray_internals
from launch._outcome import Deadline, Outcome, run_recorded
from launch._ray_worker import NodeActor
from launch._signals import SignalGuard
from launch.config import CORES_VARIABLE, Resources, cpu_devices_environment, thread_environment
from launch.errors import ClusterConnectionError, NodeError, RayStartError
from launch.nodes import ReverbNode
from launch.placement import Placement, resolve_placement
from launch.program import NodeSpec, Program

logger = logging.getLogger("launch")
# Logged when a Ray process outlives ray.shutdown() by the grace period and is SIGKILLed: a forced, not a clean,
# shutdown (tests fail on it).
FORCED_KILL = "still running after ray.shutdown(); killing it"

_POLL_S = 0.2
_MAX_CONCURRENCY = 64  # Threads per actor: run(), calls from other nodes, stop().
_CONNECT_TIMEOUT_S = 3.0
_QUIET_INIT = dict(logging_level=logging.WARNING, log_to_driver=True, configure_logging=True)


class _Expired(Exception):
    """The deadline passed while nodes were still being built."""


# ------------------------------------------------------------------ connecting


def worker_pythonpath() -> str:
    """PYTHONPATH for workers: this package's root and the driver's own paths.

    Interpreter paths (stdlib, site-packages) are left out: workers have them.
    """
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    prefixes.discard(os.path.realpath(os.sep))
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    candidates = [package_root, *sys.path, *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    entries: list[str] = []
    for entry in candidates:
        path = os.path.realpath(entry or os.getcwd())
        if not os.path.isdir(path) or path in entries:
            continue
        if any(path == p or path.startswith(p + os.sep) for p in prefixes):
            continue
        entries.append(path)
    return os.pathsep.join(entries)


def _host_port(address: str) -> tuple[str, int] | None:
    target = address.split("://", 1)[1] if "://" in address else address
    target = target.rstrip("/")
    if target in ("", "auto", "local"):
        return None
    if target.startswith("["):  # [ipv6]:port
        host, _, port = target[1:].partition("]")
        port = port.lstrip(":") or "6379"
    else:
        host, sep, port = target.rpartition(":")
        if not sep:
            host, port = target, "6379"
    try:
        return host, int(port)
    except ValueError:
        raise ClusterConnectionError(f"invalid Ray cluster address {address!r}: expected 'host:port'") from None


_ADDRESS_HELP = (
    "give the address of a running Ray cluster's head node as host:port (its GCS port, 6379 "
    "unless `ray start --head --port` chose another), or leave the address out to start a "
    "local Ray instance"
)


def check_reachable(address: str, timeout: float = _CONNECT_TIMEOUT_S) -> None:
    """Raises ClusterConnectionError unless a TCP connection to ``address`` opens."""
    host_port = _host_port(address)
    if host_port is None:
        return
    try:
        with socket.create_connection(host_port, timeout=timeout):
            pass
    except OSError as e:
        reason = e.strerror or str(e) or type(e).__name__
        raise ClusterConnectionError(
            f"cannot reach the Ray cluster at {address!r} ({reason}); {_ADDRESS_HELP}."
        ) from None


def _gcs_answer(host_port: tuple[str, int], timeout: float) -> str | None:
    """What a gRPC call to Ray's GCS at ``host_port`` says: None if Ray answered, else why not.

    ``NodeInfoGcsService/GetClusterId`` with an empty request: a Ray GCS
    answers it (or refuses it for want of an auth token); any other server
    fails it (not gRPC at all, or a gRPC server without that service).
    """
    import grpc  # a dependency of Ray

    host, port = host_port
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    with grpc.insecure_channel(target) as channel:
        call = channel.unary_unary("/ray.rpc.NodeInfoGcsService/GetClusterId")
        try:
            call(b"", timeout=timeout)
        except grpc.RpcError as e:
            code = e.code()
            if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
                return None  # Ray, asking for its token: ray.init() reads it.
            if code == grpc.StatusCode.UNIMPLEMENTED:
                return "it is a gRPC server without Ray's GCS service"
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                return f"it did not answer a Ray request within {timeout:g} s"
            if code == grpc.StatusCode.UNAVAILABLE:
                return "it does not answer as a gRPC server, which Ray's GCS is"
            return f"it does not answer as Ray's GCS ({code.name}: {(e.details() or '').splitlines()[0:1]})"
    return None


def check_ray_cluster(address: str, timeout: float = _CONNECT_TIMEOUT_S) -> None:
    """Raises ClusterConnectionError unless ``address`` is reachable and answers as a Ray GCS.

    Checked before ``ray.init()``, which takes tens of seconds and several
    chained tracebacks to give up on an address that is not Ray's. Skipped
    for TLS clusters (``RAY_USE_TLS``), which need Ray's own credentials.
    """
    check_reachable(address, timeout)
    host_port = _host_port(address)
    if host_port is None or os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
        return
    problem = _gcs_answer(host_port, timeout)
    if problem is not None:
        raise ClusterConnectionError(
            f"{address!r} accepts connections but is not a Ray cluster: {problem}; {_ADDRESS_HELP}."
        )


START_TIMEOUT_VARIABLE = "LAUNCH_RAY_START_TIMEOUT"  # seconds a local Ray instance is given to start
DEFAULT_START_TIMEOUT_S = 60.0
_RAY_START_WAIT_S = 30  # Ray (2.60) gives its raylet 30 s to register (fixed), its GCS 30 s to publish its port


def start_timeout() -> float:
    """Seconds a local Ray instance is given to start: ``LAUNCH_RAY_START_TIMEOUT``, else 60 (ValueError if it is
    not a number of seconds > 0)."""
    text = os.environ.get(START_TIMEOUT_VARIABLE)
    if text is None:
        return DEFAULT_START_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(
            f"{START_TIMEOUT_VARIABLE}={text!r}: a number of seconds > 0 is accepted (how long a local Ray instance "
            f"is given to start; {DEFAULT_START_TIMEOUT_S:g} if unset)."
        )
    return value


def _start_local_ray(
    ray: Any, runtime_env: dict[str, Any], bind_address: str | None, dashboard: bool, children_before: set[int]
) -> None:
    """Starts a local Ray instance that listens on loopback only, unless ``bind_address`` opens it.

    With a loopback node address Ray (2.60) binds all its servers (GCS,
    raylet, object manager, workers, agents) to 127.0.0.1. With another node
    address (``bind_address``) its gRPC servers listen on every interface and
    its HTTP servers on that address. The dashboard is started only if
    ``dashboard``; it listens on 127.0.0.1, or on ``bind_address``.

    Ray gives its processes 30 s to come up, which a busy machine can overrun: a start that timed out is ended
    (the processes it started, new since ``children_before``, are stopped) and tried again while
    ``start_timeout()`` has time left (once per 30 s of it, twice at least), and Ray's GCS is given that time to
    publish its port. A start that fails otherwise, or runs out of time, raises ``RayStartError``.
    """
    options: dict[str, Any] = dict(
        address="local", num_cpus=os.cpu_count(), include_dashboard=dashboard, runtime_env=runtime_env, **_QUIET_INIT
    )
    opened = bind_address is not None and not network.is_loopback(bind_address)
    if opened:
        options["_node_ip_address"] = bind_address
    if dashboard:
        options["dashboard_host"] = bind_address if opened else "127.0.0.1"
    timeout = start_timeout()
    deadline = Deadline(timeout)
    most_attempts = max(2, math.ceil(timeout / _RAY_START_WAIT_S))  # Ray's own waits, fitted in the time given
    began = time.monotonic()
    attempts = 0
    while True:
        attempts += 1
        try:
            with _gcs_port_wait(deadline.remaining()):
                if opened:
                    ray.init(**options)
                    return
                with ray_internals.node_address_on_loopback(ray):
                    ray.init(**options)
            break
        except Exception as error:
            _end_processes(_ray_descendants(children_before))
            timed_out = "timed out" in str(error).lower()
            if not timed_out or deadline.expired() or attempts == most_attempts:
                elapsed = time.monotonic() - began
                raise RayStartError(_start_failure(error, timed_out, elapsed, attempts, timeout)) from error
            logger.warning(
                "launch: Ray's local instance did not start in time (a busy machine?); trying again, %.0f s of "
                "%s=%g left. Ray said: %s",
                deadline.remaining(),
                START_TIMEOUT_VARIABLE,
                timeout,
                _first_line(error),
            )
    node_address = ray.util.get_node_ip_address()
    if not network.is_loopback(node_address):
        raise network.ExposureError(
            f"the local Ray instance took {node_address} as its node address instead of 127.0.0.1, so its "
            "servers would be reachable from other machines; it was shut down. Pass a bind address to "
            "open it up knowingly."
        )


@contextlib.contextmanager
def _gcs_port_wait(seconds: float) -> Iterator[None]:
    """Ray's wait for its GCS to publish its port (``RAY_gcs_server_port_wait_time_s``, read by ``ray.init`` in
    this process), as long as ``seconds`` (at least Ray's own 30 s), unless the environment sets it."""
    name = "RAY_gcs_server_port_wait_time_s"
    if name in os.environ:
        yield
        return
    os.environ[name] = str(max(_RAY_START_WAIT_S, math.ceil(seconds)))
    try:
        yield
    finally:
        os.environ.pop(name, None)


def _start_failure(error: Exception, timed_out: bool, elapsed: float, attempts: int, timeout: float) -> str:
    """One paragraph: what happened when Ray's local instance did not start, and what to do."""
    said = _first_line(error)
    join = (
        "or run on a running Ray cluster (`ray start --head`, then its address: --ray-address on the command line, "
        "address= in Python)"
    )
    if timed_out:
        tries = f"{attempts} attempts" if attempts > 1 else "1 attempt"
        return (
            f"Ray's local instance did not start within {elapsed:.0f} s ({tries}; Ray gives its processes "
            f"{_RAY_START_WAIT_S} s each), as happens on a busy machine. Ray said: {said} Run it on a less loaded "
            f"machine, give it longer with {START_TIMEOUT_VARIABLE}=SECONDS (now {timeout:g}), {join}."
        )
    return (
        f"Ray's local instance did not start. Ray said: {said} Its logs are in its session folder "
        f"(/tmp/ray/session_latest/logs unless RAY_TMPDIR moves it); fix what they name, {join}."
    )


def _first_line(error: Exception) -> str:
    """The first line of ``error``'s message, as a sentence."""
    line = " ".join((str(error).strip().splitlines() or [type(error).__name__])[0].split())
    return line if line.endswith((".", "!", "?")) else line + "."


def _end_processes(processes: list[Any]) -> None:
    """SIGTERM to ``processes`` (a failed start's Ray processes), then ``_reap``."""
    if not processes:
        return
    import psutil

    for proc in processes:
        try:
            proc.terminate()
        except psutil.Error:
            pass
    _reap(processes, timeout=5.0)


class _Session:
    """The Ray connection used by one launch.

    * ``address=None``: starts a local Ray instance, shut down at the end
      (and its processes are waited for, so none outlives ``launch()``).
    * an address: joins that cluster; at the end only disconnects.
    * Ray already initialized by the caller: reuses it and leaves it running.
    """

    def __init__(self, address: str | None, bind_address: str | None = None, dashboard: bool = False) -> None:
        import ray

        self._ray = ray
        self.connected_here = False
        self._children_before: set[int] | None = None
        self._fate: _FateShare | None = None
        runtime_env = {
            "env_vars": {
                "PYTHONPATH": worker_pythonpath(),
                # Nodes are the program's own workload: run them at normal priority
                # rather than Ray's default nice 15, which starves them (e.g. a
                # TensorFlow import) whenever anything else keeps the CPUs busy.
                "RAY_worker_niceness": "0",
            }
        }
        self.actor_runtime_env: dict[str, Any] | None = None
        if ray.is_initialized():
            logger.info("launch: reusing the already initialized Ray connection")
            if bind_address is not None or dashboard:
                logger.warning(
                    "launch: Ray was already initialized in this process, so bind_address and dashboard are not applied"
                )
            self.actor_runtime_env = runtime_env
            return
        # ray.init() sets RAY_* variables in this process (e.g. RAY_AUTH_MODE=token for a
        # new local instance) that would change how a later launch connects; they are
        # put back as they were when this session disconnects.
        self._ray_environ_before = {k: v for k, v in os.environ.items() if k.startswith("RAY_")}
        if address is None:
            self._children_before = _child_pids()
            try:
                _start_local_ray(ray, runtime_env, bind_address, dashboard, self._children_before)
            except BaseException:
                self._disconnect()
                raise
            self._fate = _FateShare.start(_ray_descendants(self._children_before))
        else:
            check_ray_cluster(address)
            try:
                ray.init(address=address, runtime_env=runtime_env, **_QUIET_INIT)
            except Exception as e:
                self._disconnect()
                first_line = (str(e).strip().splitlines() or [type(e).__name__])[0]
                raise ClusterConnectionError(f"could not join the Ray cluster at {address!r}: {first_line}") from e
            except BaseException:
                self._disconnect()
                raise
        self.connected_here = True

    def _disconnect(self) -> None:
        if not self._ray.is_initialized():
            return
        started = _ray_descendants(self._children_before) if self._children_before is not None else []
        if self._fate is not None:
            started = [p for p in started if p.pid != self._fate.pid]
        self._ray.shutdown()
        _reap(started)
        if self._fate is not None:
            self._fate.close()
            self._fate = None
        self._restore_ray_environ()

    def _restore_ray_environ(self) -> None:
        before = getattr(self, "_ray_environ_before", None)
        if before is None:
            return
        changed = {k: v for k, v in os.environ.items() if k.startswith("RAY_")} != before
        for key in [k for k in os.environ if k.startswith("RAY_") and k not in before]:
            del os.environ[key]
        os.environ.update(before)
        if changed:
            ray_internals.refresh_cached_config()

    def close(self) -> None:
        """Shuts Ray down (local instance) or disconnects (joined cluster)."""
        if self.connected_here:
            self._disconnect()


class _FateShare:
    """The watcher (``launch/_fate_share.py``) that ends a local Ray instance's processes if this process dies
    without closing the session: Ray's agents otherwise outlive a SIGKILLed driver by a minute."""

    def __init__(self, process: subprocess.Popen) -> None:
        self._process = process
        self.pid = process.pid

    @classmethod
    def start(cls, processes: list[Any]) -> "_FateShare | None":
        """Starts a watcher of ``processes`` (psutil processes); None (logged) if it cannot be started."""
        if not processes:
            return None
        import psutil

        identities = []
        for process in processes:
            try:
                identities.append([process.pid, process.create_time()])
            except psutil.Error:
                continue
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_fate_share.py")
        try:
            watcher = subprocess.Popen(
                [sys.executable, script],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                text=True,
                start_new_session=True,  # not stopped by the terminal's Ctrl-C, which this process handles
            )
            watcher.stdin.write(json.dumps(identities) + "\n")
            watcher.stdin.flush()
        except OSError as error:
            logger.warning("launch: Ray's processes will not be ended if this process is killed: %s", error)
            return None
        return cls(watcher)

    def close(self) -> None:
        """Tells the watcher that Ray was shut down, and waits for it to exit."""
        try:
            self._process.stdin.write(_fate_share.CLOSE + "\n")
            self._process.stdin.close()
        except OSError:
            pass  # it has already exited
        try:
            self._process.wait(timeout=10.0)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def _child_pids() -> set[int]:
    try:
        import psutil  # ray vendors it
    except ImportError:
        return set()
    return {child.pid for child in psutil.Process().children()}


def _ray_descendants(children_before: set[int]) -> list[Any]:
    """Ray processes started under this process since ``children_before``.

    Workers are children of the raylet: when it stops they are re-parented,
    so they must be collected before ``ray.shutdown()``.
    """
    try:
        import psutil
    except ImportError:
        return []
    me = psutil.Process()
    found = []
    for child in me.children(recursive=True):
        try:
            top = next(p for p in [child, *child.parents()] if p.ppid() == me.pid)
            if top.pid in children_before:
                continue  # Under a process that existed before ray.init.
            if "ray" in " ".join(child.cmdline()).lower():
                found.append(child)
        except (psutil.Error, StopIteration):
            continue
    return found


def _reap(processes: list[Any], timeout: float = 10.0) -> None:
    """Waits for ``processes`` to exit; SIGKILLs those still running after ``timeout``."""
    if not processes:
        return
    import psutil

    def running(proc: Any) -> bool:
        try:
            return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    end = Deadline(timeout)
    alive = [p for p in processes if running(p)]
    while alive and not end.expired():
        time.sleep(0.1)
        alive = [p for p in alive if running(p)]
    for proc in alive:
        logger.warning("launch: Ray process %d %s", proc.pid, FORCED_KILL)
        try:
            proc.kill()
        except psutil.Error:
            pass


# ------------------------------------------------------------------- running


def actor_options(
    spec: NodeSpec, runtime_env: dict[str, Any] | None = None, resources: Resources | None = None
) -> dict[str, Any]:
    """Ray actor options for a node: resources (``resources``, else the node's own), restarts, concurrency,
    and a thread budget: a node that reserves CPUs (or is pinned to cores) holds XLA, TensorFlow and BLAS to that
    many threads (set in its process's environment), so nodes sharing a machine do not oversubscribe its cores.
    A node with ``Resources.cores`` has its process pinned to them, and one with ``Resources.cpu_devices`` that
    many CPU devices."""
    resources = resources or spec.resources
    if resources.thread_budget is not None:
        runtime_env = dict(runtime_env or {})  # Ray merges these variables into the job's own
        runtime_env["env_vars"] = {**runtime_env.get("env_vars", {}), **thread_environment(resources.thread_budget)}
    if resources.cores is not None:  # the worker pins its process before it builds the node
        runtime_env["env_vars"][CORES_VARIABLE] = ",".join(map(str, resources.cores))
    if resources.cpu_devices is not None:  # read by jax when the node's process starts its backend
        runtime_env = dict(runtime_env or {})
        variables = runtime_env.get("env_vars", {})
        xla_flags = variables.get("XLA_FLAGS", os.environ.get("XLA_FLAGS"))  # the node's thread settings, else ours
        runtime_env["env_vars"] = {**variables, **cpu_devices_environment(resources.cpu_devices, xla_flags)}
    restarts = spec.restart.max_restarts
    options: dict[str, Any] = {
        "num_cpus": resources.num_cpus or 0,
        "num_gpus": resources.num_gpus,
        "max_restarts": restarts,
        # Retry in-flight calls (e.g. run()) on the restarted actor; Python
        # exceptions are not retried (Ray only retries them on request).
        "max_task_retries": -1 if restarts else 0,
        "max_concurrency": _MAX_CONCURRENCY,
    }
    if resources.custom:
        options["resources"] = dict(resources.custom)
    if runtime_env is not None:
        options["runtime_env"] = runtime_env
    return options


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("", 0))
        return sock.getsockname()[1]


class _Run:
    """State of one program run on Ray."""

    def __init__(
        self,
        program: Program,
        session: _Session,
        deadline: Deadline,
        guard: SignalGuard,
        placement: Placement | None = None,
    ) -> None:
        import ray

        self._ray = ray
        self.resources = resolve_placement(program, placement)  # label -> what its actor reserves
        self.guard = guard
        self.program = program
        self.session = session
        self.deadline = deadline
        self.actors: list[tuple[str, Any]] = []  # In construction order.
        self.mains: dict[Any, str] = {}  # main() ObjectRef -> label.
        self.unread: dict[Any, str] = {}  # the mains whose result has not been read yet
        self.ready: dict[str, Any] = {}  # label -> ObjectRef of its ready() (returns once constructed).
        self.keep_alive: list[Any] = []

    def _result(self, ref: Any, label: str) -> Any:
        ray = self._ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayActorError as e:
            raise NodeError(label, f"the Ray actor hosting node {label!r} died: {e}") from None
        except ray.exceptions.RayError as e:
            raise NodeError(label, f"Ray error in node {label!r}: {e}") from None

    def _as_completed(self, refs: dict[Any, str]) -> Iterator[tuple[str, Any]]:
        """Yields (label, result) as the refs complete; raises _Expired at the deadline."""
        while refs:
            self.guard.check()
            if self.deadline.expired():
                raise _Expired()
            ready, _ = self._ray.wait(list(refs), num_returns=1, timeout=self.deadline.remaining(_POLL_S))
            for ref in ready:
                label = refs.pop(ref)
                yield label, self._result(ref, label)

    def build(self) -> dict[str, dict[str, Any]]:
        """Creates all actors at once; each waits in its constructor for its deps."""
        actor_cls = self._ray.remote(NodeActor)
        created: dict[str, tuple[Any, Any]] = {}  # label -> (actor, ready ref)
        ready_refs: dict[Any, str] = {}
        for spec in self.program.construction_order():
            node = spec.node
            if isinstance(node, ReverbNode) and node.port is None:
                # Fixed port so that a restarted server keeps its address.
                node = node.with_port(_free_port())
            dependencies = {
                dep: (self.program.get(dep).node.handle_kind, *created[dep])
                for dep in self.program.dependencies(spec.label)
            }
            options = actor_options(spec, self.session.actor_runtime_env, self.resources[spec.label])
            actor = actor_cls.options(**options).remote(spec.label, node, dependencies)
            ready_ref = actor.ready.remote()
            created[spec.label] = (actor, ready_ref)
            self.ready[spec.label] = ready_ref
            self.actors.append((spec.label, actor))
            ready_refs[ready_ref] = spec.label
        self.keep_alive.extend(ready_refs)  # Restarted dependents re-read them.
        infos: dict[str, dict[str, Any]] = {}
        for label, info in self._as_completed(ready_refs):
            if info["dependency_failed"] is not None:
                continue  # The dependency's own failure is (or will be) reported.
            if info["error"] is not None:
                raise NodeError(label, info["error"])
            infos[label] = info
        return infos

    def run(self, outcome: Outcome) -> set[str]:
        """Builds and runs the program, keeping what the mains return in ``outcome``; returns the unfinished
        labels on timeout."""
        try:
            infos = self.build()
        except _Expired:
            return set(self.program.labels)
        remaining = self.program.completion_labels({label: info["has_main"] for label, info in infos.items()})
        for label, actor in self.actors:
            self.mains[actor.main.remote()] = label
        self.unread = dict(self.mains)
        if not remaining:
            return set()
        try:
            for label, (status, details) in self._as_completed(self.unread):
                if status == "error":
                    raise NodeError(label, details)
                if status == "done":
                    outcome.returned(label, details)
                remaining.discard(label)
                if not remaining:
                    break
        except _Expired:
            return remaining
        return set()

    def _read_returns(self, outcome: Outcome) -> None:
        """Keeps what the mains that returned while the program stopped returned (their errors are not news: the
        program was ending)."""
        if not self.unread:
            return
        done, _ = self._ray.wait(list(self.unread), num_returns=len(self.unread), timeout=0)
        for ref in done:
            try:
                status, details = self._ray.get(ref, timeout=0)
            except self._ray.exceptions.RayError:
                continue
            if status == "done":
                outcome.returned(self.unread[ref], details)

    def _constructed(self) -> set[str]:
        """Labels of the nodes whose constructor has returned (their ``ready()`` is done)."""
        refs = {ref: label for label, ref in self.ready.items()}
        if not refs:
            return set()
        done, _ = self._ray.wait(list(refs), num_returns=len(refs), timeout=0)
        return {refs[ref] for ref in done}

    def shutdown(self, grace_period: float, outcome: Outcome) -> None:
        """stop() in reverse construction order, wait for mains, kill the actors.

        A node still in its constructor has nothing to stop (and Ray would run
        ``stop()`` only after the constructor), so it is killed straight away.
        Nodes that do not stop in time are named in one warning.
        """
        ray = self._ray
        end = Deadline(grace_period)
        constructed = self._constructed()
        late: list[str] = []
        for label, actor in reversed(self.actors):
            if label not in constructed:
                continue
            try:
                error = ray.get(actor.stop.remote(), timeout=max(0.1, end.remaining()))
            except ray.exceptions.GetTimeoutError:
                late.append(label)
                continue
            except ray.exceptions.RayError:
                continue  # Dead actor: nothing to stop.
            if error is not None:
                outcome.fail(NodeError(label, "exception in stop():\n" + error))
        if self.mains and end.remaining() > 0:
            ray.wait(list(self.mains), num_returns=len(self.mains), timeout=end.remaining())
        self._read_returns(outcome)
        _report_unstopped(late, [label for label, _ in self.actors if label not in constructed], grace_period)
        for label, actor in self.actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception as e:
                logger.debug("node %r: ray.kill failed: %s", label, e)


def _report_unstopped(late: list[str], starting: list[str], grace_period: float) -> None:
    """One warning for the nodes whose stop() overran the grace period; starting nodes only at info level."""
    if late:
        logger.warning(
            "launch: %s did not return from stop() within the %g s grace period (stop() or the work "
            "it waits for was still running); killing %s",
            _labels(late),
            grace_period,
            "it" if len(late) == 1 else "them",
        )
    if starting:
        logger.info(
            "launch: %s had not finished starting (constructor still running); killing %s",
            _labels(starting),
            "it" if len(starting) == 1 else "them",
        )


def _labels(labels: list[str]) -> str:
    quoted = ", ".join(repr(label) for label in labels)
    return f"node {quoted}" if len(labels) == 1 else f"nodes {quoted}"


def run_ray(
    program: Program,
    *,
    address: str | None,
    deadline: Deadline,
    guard: SignalGuard,
    grace_period: float,
    bind_address: str | None = None,
    dashboard: bool = False,
    placement: Placement | None = None,
) -> Outcome:
    """Runs ``program`` on Ray (see ``launch.launch``)."""
    program.construction_order()  # Validate before starting anything.
    resolve_placement(program, placement)
    session = _Session(address, bind_address, dashboard)
    outcome = Outcome()
    try:
        run = _Run(program, session, deadline, guard, placement)
        run_recorded(
            outcome,
            guard,
            lambda: run.run(outcome),
            lambda: run.shutdown(grace_period, outcome),
            raise_in_handler=False,
        )
    finally:
        session.close()
    if guard.signum is not None and outcome.signum is None:
        outcome.signum = guard.signum
    return outcome


RaySession = _Session  # the public name, for callers that drive Ray themselves (e.g. a Ray Tune sweep)
