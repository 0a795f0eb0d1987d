"""What a sweep returns to Python: `SweepResult`, read back from the sweep's MLflow record.

`read_sweep_result(tracking_uri, sweep_run_id)` reads a sweep's run and its trial runs (what `sentsweep.run` returns
at a sweep's end, and what any recorded sweep gives later):

- `tables`: each stage's table as the sweep printed and logged it (the sweep run's artifact
  `tables/NN-<title>.json`, `sentsweep.analysis.tables.to_frame`'s lines: one per cell, its row's axes, `metric`,
  `mean`, `std`, `n`, the 95% bootstrap interval `ci95_low`/`ci95_high`, `best`, `in_best_group`, `p_vs_best`,
  `p_vs_best_adjusted`), keyed by the stage's name (the sweep run's param `grid` names its stages in order);
- `best`: the final stage's best configuration on the selection metric, with every greedy stage's best values
  before it (`BestConfiguration`);
- `runs`: the trial runs (`sentsweep.analysis.runs.fetch_trial_runs`); `models`: the kept models' URIs
  (`runs:/<trial run id>/model`); `targets`: the reproduction targets checked against the runs, one line each
  (`sentsweep.analysis.reproduction.check_targets`);
- `status`: finished, interrupted or failed (`SweepStatus`), with why and the call that resumes it.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from sentsweep.analysis.reproduction import TARGETS_ARTIFACT, check_targets, targets_from_json
from sentsweep.analysis.runs import fetch_trial_runs, run_artifact_text
from sentsweep.errors import InputError
from sentsweep.tracking.models import LOGGED_MODEL_NAME
from sentsweep.tracking.names import STATISTICS
from sentsweep.tracking.store import redact, run_page

TABLE_FILE = re.compile(r"^tables/(\d+)-(.+)\.json$")
# a sweep run's MLflow status as a state: RUNNING is a driver still at work, or one that died (--resume continues it)
DOWNLOAD_BARS = "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"  # MLflow's setting of a bar per artifact download
STATES = {"FINISHED": "finished", "KILLED": "interrupted", "FAILED": "failed", "RUNNING": "running"}


@dataclass(frozen=True)
class SweepStatus:
    """How a sweep ended. `state`: "finished", "interrupted" (Ctrl-C, SIGTERM, a budget or a pending timeout spent:
    resumable), "failed" (a stage without results, the tracking store lost, a full disk), or "running" (a record
    read while its driver runs, or left by a driver that died). `exit_code`: the command line's for the same end
    (0, 130, 1, 3). `reason`: why it did not finish, as the command line says it. `resume`: the `sentsweep.run` call
    that continues it; `resume_command`: the shell command that does (None where there is nothing to resume).

    Examples:
        >>> status = sentsweep.SweepStatus("interrupted", 130, reason="interrupted: Ctrl-C",
        ...                                resume="sentsweep.run('tsdae_deletion', quick=True, resume=True)")
        >>> status.finished, status.exit_code
        (False, 130)
    """

    state: Literal["finished", "interrupted", "failed", "running"]
    exit_code: int | None = None
    reason: str = ""
    resume: str | None = None
    resume_command: str | None = None

    @property
    def finished(self) -> bool:
        return self.state == "finished"


@dataclass(frozen=True)
class BestConfiguration:
    """The sweep's selected configuration: `values` ({axis: value}: the final stage's best row, after the values an
    earlier greedy stage chose), `metrics` ({metric: {mean, std, n, ci95_low, ci95_high}} of its cells in the final
    stage), the `stage` it is the best of and the `selection_metric` that chose it (mean over seeds, on dev).

    Examples:
        >>> best = sentsweep.BestConfiguration(
        ...     values={"noise_ratio": 0.6, "pooling": "mean"},
        ...     metrics={"best_sts_dev": {"mean": 57.5, "std": 1.2, "n": 2, "ci95_low": 56.3, "ci95_high": 58.7}},
        ...     stage="deletion_ratio x pooling", selection_metric="best_sts_dev")
        >>> best.values["noise_ratio"], best.metrics[best.selection_metric]["mean"]
        (0.6, 57.5)
    """

    values: dict[str, Any]
    metrics: dict[str, dict[str, float]]
    stage: str
    selection_metric: str


@dataclass
class SweepResult:
    """A sweep's result (see the module docstring): `tables` ({stage: DataFrame}), `best`, `runs`, `sweep_run_id`,
    `experiment`, `mlflow_url` (the sweep run's page in MLflow's UI), `models` (the kept models' URIs),
    `targets` (the reproduction targets, one line each), `status`, and `output` (what the command line would
    have printed, kept where `sentsweep.run` printed nothing).

    Examples:
        >>> result = sentsweep.run("tsdae_deletion", quick=True, ratios=[0.6], poolings=["mean"], seeds=2,
        ...                        tracking_uri="sqlite:////tmp/s/mlflow.db", output_dir="/tmp/s")  # doctest: +SKIP
        >>> table = result.tables["deletion_ratio x pooling"]  # doctest: +SKIP
        >>> table[["noise_ratio", "pooling", "metric", "mean", "std", "n"]]  # doctest: +SKIP
        >>> sentsweep.SweepResult("tsdae_deletion", None, sentsweep.SweepStatus("failed", 1))
        SweepResult('tsdae_deletion', failed, sweep run None, 0 trial run(s), 0 table(s))
    """

    experiment: str
    sweep_run_id: str | None
    status: SweepStatus
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    best: BestConfiguration | None = None
    runs: pd.DataFrame = field(default_factory=pd.DataFrame)
    mlflow_url: str | None = None
    models: list[str] = field(default_factory=list)
    targets: pd.DataFrame = field(default_factory=pd.DataFrame)
    output: str = ""

    def __repr__(self) -> str:
        best = (f", best {self.best.values} ({self.best.selection_metric} "
                f"{self.best.metrics.get(self.best.selection_metric, {}).get('mean', math.nan):.2f})"
                if self.best else "")
        return (f"SweepResult({self.experiment!r}, {self.status.state}, sweep run {self.sweep_run_id}, "
                f"{len(self.runs)} trial run(s), {len(self.tables)} table(s){best})")


def read_sweep_result(tracking_uri: str, sweep_run_id: str, status: SweepStatus | None = None,
                      output: str = "") -> SweepResult:
    """The result of the sweep whose MLflow run is `sweep_run_id` (see the module docstring); `status`: how it
    ended, where the caller knows (else read off the run's MLflow status). An `InputError` where the run is no
    sweep's run or the store cannot be read.

    Examples:
        >>> result = sentsweep.read_sweep_result("sqlite:////tmp/s/mlflow.db", "<sweep run id>")  # doctest: +SKIP
        >>> result.status.state, sorted(result.tables)  # doctest: +SKIP
        ('finished', ['deletion_ratio x pooling'])
    """
    from mlflow.tracking import MlflowClient  # lazy: mlflow

    with no_download_bars():
        return _read(MlflowClient(tracking_uri=tracking_uri), tracking_uri, sweep_run_id, status, output)


@contextlib.contextmanager
def no_download_bars() -> Iterator[None]:
    """MLflow's progress bar of each artifact download left out (`DOWNLOAD_BARS`, unless set already)."""
    added = {} if DOWNLOAD_BARS in os.environ else {DOWNLOAD_BARS: "false"}
    os.environ.update(added)
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def _read(client, tracking_uri: str, sweep_run_id: str, status: SweepStatus | None, output: str) -> SweepResult:
    from mlflow.exceptions import MlflowException  # lazy: mlflow

    try:
        run = client.get_run(sweep_run_id)
        experiment = client.get_experiment(run.info.experiment_id).name
    except MlflowException as error:
        raise InputError(f"cannot read sweep run {sweep_run_id} at {redact(tracking_uri)}: "
                         f"{redact(str(error))}") from error
    if run.data.tags.get("role") != "sweep":
        raise InputError(f"run {sweep_run_id} at {redact(tracking_uri)} is no sweep's run (tag role=sweep)")
    status = status or SweepStatus(STATES.get(run.info.status, run.info.status.lower()),
                                   reason=run.data.tags.get("failure_reason", ""))
    runs = fetch_trial_runs(tracking_uri, experiment, sweep_run_id)
    tables = stage_tables(tracking_uri, client, run)
    selection = run.data.params.get("selection_metric", "")
    published = run_artifact_text(tracking_uri, sweep_run_id, TARGETS_ARTIFACT)
    alpha = float(run.data.params.get("alpha", 0.05))
    return SweepResult(
        experiment=experiment, sweep_run_id=sweep_run_id, status=status, tables=tables,
        best=best_configuration(tables, selection), runs=runs,
        mlflow_url=run_page(tracking_uri, run.info.experiment_id, sweep_run_id), models=kept_models(runs),
        targets=targets_frame(runs, targets_from_json(published) if published else (), 1 - alpha), output=output)


def stage_names(params: dict[str, str]) -> list[str]:
    """The stages of a sweep run's param `grid` ({stage: {axis: values}}), in the order they ran."""
    try:
        return list(json.loads(params.get("grid", "{}")))
    except json.JSONDecodeError:  # a grid longer than MLflow keeps a param, cut
        return []


def stage_tables(tracking_uri: str, client, run) -> dict[str, pd.DataFrame]:
    """{stage: its table's lines} of the sweep run's table artifacts, keyed by the stages of its `grid` param where
    they are as many, else by the table's title."""
    files = sorted((match for artifact in client.list_artifacts(run.info.run_id, "tables")
                    if (match := TABLE_FILE.match(artifact.path))), key=lambda match: int(match.group(1)))
    names = stage_names(run.data.params)
    keys = names if len(names) == len(files) else [match.group(2) for match in files]
    tables = {}
    for key, match in zip(keys, files):
        text = run_artifact_text(tracking_uri, run.info.run_id, match.group(0))
        tables[key] = pd.read_json(io.StringIO(text), orient="split", precise_float=True) if text else pd.DataFrame()
    return tables


def best_configuration(tables: dict[str, pd.DataFrame], selection_metric: str) -> BestConfiguration | None:
    """The final stage's best row on `selection_metric`, with the best values of the stages before it (a greedy
    search carries them on); None where no stage has a best."""
    values: dict[str, Any] = {}
    best = None
    for stage, cells in tables.items():
        if "metric" not in cells or "best" not in cells:
            continue
        chosen = cells[(cells["metric"] == selection_metric) & cells["best"].astype(bool)]
        if not len(chosen):
            continue
        axes = list(cells.columns[:list(cells.columns).index("metric")])
        row = chosen.iloc[0][axes].to_dict()
        values |= row
        of_row = cells[(cells[axes] == pd.Series(row)).all(axis=1)] if axes else cells
        metrics = {line["metric"]: {statistic: int(line[statistic]) if statistic == "n" else _number(line[statistic])
                                    for statistic in STATISTICS}
                   for _, line in of_row.iterrows()}
        best = (stage, metrics)
    if best is None:
        return None
    return BestConfiguration(values, best[1], best[0], selection_metric)


def _number(value) -> float:
    return math.nan if value is None or pd.isna(value) else float(value)


def kept_models(runs: pd.DataFrame) -> list[str]:
    """The URIs of the models the sweep kept (`runs:/<trial run id>/model`), of the trial runs that logged one."""
    if not len(runs) or "logged_model_id" not in runs:
        return []
    return [f"runs:/{run_id}/{LOGGED_MODEL_NAME}" for run_id in runs[runs["logged_model_id"].notna()]["run_id"]]


def targets_frame(runs: pd.DataFrame, targets, level: float) -> pd.DataFrame:
    """The reproduction targets against the runs, one line each: cell, metric, published value and source, the
    runs' mean, std and n, the interval at `level` and the verdict."""
    checks = check_targets(runs, targets, level) if len(runs) and targets else []
    return pd.DataFrame.from_records([
        {"cell": check.target.cell_label(), "metric": check.target.metric, "published": check.target.value,
         "source": str(check.target.source), "mean": check.mean, "std": check.std, "n": check.n,
         "low": check.low, "high": check.high, "verdict": check.verdict} for check in checks],
        columns=["cell", "metric", "published", "source", "mean", "std", "n", "low", "high", "verdict"])
