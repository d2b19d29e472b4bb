"""Loggers that write a run's rows to the experiment trackers researchers use: Weights & Biases and MLflow.

A run's loggers (one per label: learner, evaluator, actor, ...) each open one tracker run at their first row, all
in the run's group, so that the tracker shows them together (a sweep gives every trial the sweep's group):

- ``wandb``: one W&B run per label (``job_type`` the label, ``group`` the run's group), its files under the run
  folder's ``wandb/``. Offline unless ``WANDB_MODE`` says otherwise: ``wandb sync`` uploads them later.
- ``mlflow``: one MLflow run per label in the experiment named after the group, in ``MLFLOW_TRACKING_URI`` when it
  is set, else in the SQLite store ``runs/mlflow.db`` (``mlflow ui --backend-store-uri sqlite:///runs/mlflow.db``).

Each numeric value is logged as ``<label>/<key>`` against the logger's steps (its ``steps_key``, e.g. actor
steps), and the run's config as W&B config or MLflow parameters.
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any, Mapping

from acme.utils import extras
from acme.utils.loggers.base import Logger, LoggingData, to_scalars

TRACKERS = ("wandb", "mlflow")
WANDB_PROJECT = "acme"
MLFLOW_STORE = os.path.join("runs", "mlflow.db")  # the store when MLFLOW_TRACKING_URI is not set
MLFLOW_FLUSH_SECONDS = 5.0  # rows are sent in one batch at most this often (each batch is one database write)


@dataclasses.dataclass(frozen=True)
class Tracking:
    """Which tracker a run's rows also go to, and how the run is named there.

    Attributes:
      tracker: ``wandb`` or ``mlflow``.
      name: the run's name (its folder's name); each label's tracker run is ``<name>/<label>``.
      group: the runs shown together: a sweep's trials share the sweep's; a lone run has its own name.
      directory: the run folder (W&B writes its files under it).
      config: the run's config (agent, environment, the agent's fields), as W&B config or MLflow parameters.
    """

    tracker: str
    name: str
    group: str
    directory: str
    config: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.tracker not in TRACKERS:
            raise ValueError(f"tracker must be one of {', '.join(TRACKERS)}, got {self.tracker!r}.")
        for name in ("name", "group", "directory"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"Tracking.{name} must be a non-empty string, got {value!r}.")
        extras.require(self.tracker, f"--logger {self.tracker}")

    def make_logger(self, label: str, steps_key: str | None = None) -> Logger:
        """The logger of ``label``'s rows in this tracker."""
        kind = WandbLogger if self.tracker == "wandb" else MlflowLogger
        return kind(self, label, steps_key)


def _numbers(data: LoggingData) -> dict[str, float]:
    return {
        key: value
        for key, value in to_scalars(data).items()
        if isinstance(value, (int, float)) and not isinstance(value, bool)
    }


class WandbLogger(Logger):
    """``label``'s rows in a W&B run of their own (see the module docstring)."""

    def __init__(self, tracking: Tracking, label: str, steps_key: str | None = None):
        self._tracking = tracking
        self._label = label
        self._steps_key = steps_key
        self._run: Any = None  # opened at the first row: a logger that never writes leaves no run

    def _open(self) -> Any:
        import wandb

        tracking = self._tracking
        # W&B suggests its LLM tracing when a module named ``agents`` is loaded: here it is this library's agents.
        os.environ.setdefault("WANDB_DISABLE_WEAVE", "true")
        run = wandb.init(
            project=WANDB_PROJECT,
            group=tracking.group,
            job_type=self._label,
            name=f"{tracking.name}/{self._label}",
            dir=tracking.directory,
            mode=os.environ.get("WANDB_MODE", "offline"),
            config=dict(tracking.config),
            reinit="create_new",  # a process may hold several (the threads launcher's nodes)
            settings=wandb.Settings(silent=True),
        )
        if self._steps_key:
            run.define_metric(self._steps_key)
            run.define_metric(f"{self._label}/*", step_metric=self._steps_key)
        return run

    def write(self, data: LoggingData) -> None:
        if self._run is None:
            self._run = self._open()
        values = _numbers(data)
        row = {f"{self._label}/{key}": value for key, value in values.items() if key != self._steps_key}
        if self._steps_key in values:
            row[self._steps_key] = values[self._steps_key]
        self._run.log(row)

    def close(self) -> None:
        if self._run is not None:
            self._run.finish()
            self._run = None


def mlflow_tracking_uri() -> str:
    """``MLFLOW_TRACKING_URI`` when set, else the SQLite store ``runs/mlflow.db`` under the working directory."""
    return os.environ.get("MLFLOW_TRACKING_URI") or "sqlite:///" + os.path.abspath(MLFLOW_STORE)


class MlflowLogger(Logger):
    """``label``'s rows in an MLflow run of their own (see the module docstring), sent in batches."""

    def __init__(self, tracking: Tracking, label: str, steps_key: str | None = None):
        self._tracking = tracking
        self._label = label
        self._steps_key = steps_key
        self._client: Any = None
        self._run_id: str | None = None
        self._pending: list = []
        self._rows = 0
        self._last_flush = time.monotonic()

    def _open(self) -> None:
        from mlflow.entities import Param
        from mlflow.tracking import MlflowClient

        uri = mlflow_tracking_uri()
        if uri.startswith("sqlite:///"):
            os.makedirs(os.path.dirname(uri[len("sqlite:///") :]) or ".", exist_ok=True)
        client = MlflowClient(tracking_uri=uri)
        experiment = client.get_experiment_by_name(self._tracking.group)
        if experiment is None:
            from mlflow.exceptions import MlflowException

            try:
                experiment_id = client.create_experiment(self._tracking.group)
            except MlflowException:  # another node of the run created it first
                experiment_id = client.get_experiment_by_name(self._tracking.group).experiment_id
        else:
            experiment_id = experiment.experiment_id
        tags = {"acme.group": self._tracking.group, "acme.label": self._label, "acme.run": self._tracking.name}
        run = client.create_run(experiment_id, run_name=f"{self._tracking.name}/{self._label}", tags=tags)
        params = [Param(key, str(value)[:6000]) for key, value in self._tracking.config.items()]
        if params:
            client.log_batch(run.info.run_id, params=params)
        self._client, self._run_id = client, run.info.run_id

    def write(self, data: LoggingData) -> None:
        from mlflow.entities import Metric

        if self._client is None:
            self._open()
        values = _numbers(data)
        step = int(values.get(self._steps_key, self._rows)) if self._steps_key else self._rows
        now = int(time.time() * 1000)
        self._pending += [Metric(f"{self._label}/{key}", float(v), now, step) for key, v in values.items()]
        self._rows += 1
        if time.monotonic() - self._last_flush >= MLFLOW_FLUSH_SECONDS:
            self._flush()

    def _flush(self) -> None:
        for start in range(0, len(self._pending), 1000):  # MLflow takes at most 1,000 metrics per batch
            self._client.log_batch(self._run_id, metrics=self._pending[start : start + 1000])
        self._pending = []
        self._last_flush = time.monotonic()

    def close(self) -> None:
        if self._client is not None:
            self._flush()
            self._client.set_terminated(self._run_id)
            self._client = None
