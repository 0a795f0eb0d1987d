"""Fetch the trial runs of a sweep from MLflow into one pandas DataFrame (one row per run)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from sentsweep.errors import InputError
from sentsweep.tracking.store import PER_QUERY_ARTIFACT, redact
from sentsweep.trainables.compute import COMPUTE_METRICS

# the tag of a raced trial's run that its race's table leaves out: a seed run ahead for a configuration the race then
# dropped on the seeds before (sentsweep.sweep.execution.stage_race.RaceOutcome.counted_runs)
RACE_NOT_COUNTED_TAG = "race_not_counted"
# The tag of a trial's run that a race over steps stopped at a rung (sentsweep.analysis.step_racing): the step of
# the evaluation its decision counted. The run's scores are read at that step (`values_at_race_stops`).
RACE_STOPPED_TAG = "race_stopped_at_step"
# The tag of each trial run of a raced configuration: how the race decided the configuration, in the words every
# account of the sweep gives (sentsweep.analysis.run_accounts.race_decision_text).
RACE_DECISION_TAG = "race_decision"
# What a run reports of how far it ran, kept as logged where its scores are read at a race's stop.
RAN = (*COMPUTE_METRICS, "step", "training_iteration")


def _client(tracking_uri: str):
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=tracking_uri)


def latest_sweep_run_id(tracking_uri: str, experiment_name: str) -> str:
    """The parent run id of the most recently started sweep of the experiment."""
    client = _client(tracking_uri)
    experiment = client.get_experiment_by_name(experiment_name)
    if experiment is None:
        raise InputError(f"no MLflow experiment named {experiment_name!r} at {redact(tracking_uri)}")
    parents = client.search_runs(
        [experiment.experiment_id], "tags.role = 'sweep'", order_by=["attributes.start_time DESC"], max_results=1
    )
    if not parents:
        raise InputError(f"experiment {experiment_name!r} at {redact(tracking_uri)} has no sweep run")
    return parents[0].info.run_id


def fetch_trial_runs(tracking_uri: str, experiment_name: str, sweep_run_id: str | None = None) -> pd.DataFrame:
    """Trial runs of one sweep (or of every sweep when `sweep_run_id` is None), fetched page by page.

    Columns: run_id, run_name, status, start_time and end_time (ms since the epoch; no end_time for a run not
    ended), seed, config_hash, ray_trial_id, parent_model_run_id (the run whose model the trial started from, where
    it did), logged_model_id (its model's MLflow id, where it was kept), failure_reason, race_not_counted (why a
    race's table leaves the run out, where it does), race_stopped_at_step (where a race over steps stopped the
    trial, `RACE_STOPPED_TAG`: its metrics are then those of that step, `values_at_race_stops`), race_decision (how
    the race decided the run's configuration, `RACE_DECISION_TAG`), params.<name>, metrics.<name>.
    """
    client = _client(tracking_uri)
    experiment = client.get_experiment_by_name(experiment_name)
    if experiment is None:
        raise InputError(f"no MLflow experiment named {experiment_name!r} at {redact(tracking_uri)}")
    # A missing tag matches no filter in MLflow, so "every sweep" is filtered here rather than in the query.
    query = "" if sweep_run_id is None else f"tags.sweep_run_id = '{sweep_run_id}'"
    rows, token = [], None
    while True:
        page = client.search_runs([experiment.experiment_id], query, max_results=10_000, page_token=token)
        for run in page:
            if "sweep_run_id" not in run.data.tags:
                continue  # a sweep's parent run, not a trial
            row = {
                "run_id": run.info.run_id,
                "run_name": run.info.run_name,
                "status": run.info.status,
                "start_time": run.info.start_time,
                "end_time": run.info.end_time,
                "seed": run.data.tags.get("seed"),
                "config_hash": run.data.tags.get("config_hash"),
                "ray_trial_id": run.data.tags.get("ray_trial_id"),
                "parent_model_run_id": run.data.tags.get("parent_model_run_id"),
                "logged_model_id": run.data.tags.get("logged_model_id"),
                "failure_reason": run.data.tags.get("failure_reason"),
                RACE_NOT_COUNTED_TAG: run.data.tags.get(RACE_NOT_COUNTED_TAG),
                "race_stopped_at_step": run.data.tags.get(RACE_STOPPED_TAG),
                RACE_DECISION_TAG: run.data.tags.get(RACE_DECISION_TAG),
            }
            row.update({f"params.{k}": v for k, v in run.data.params.items()})
            row.update({f"metrics.{k}": v for k, v in run.data.metrics.items()})
            rows.append(row)
        token = page.token
        if not token:
            break
    return values_at_race_stops(client, pd.DataFrame(rows))


def values_at_race_stops(client, runs: pd.DataFrame) -> pd.DataFrame:
    """`runs` with the metrics of each run a race stopped at a rung (`race_stopped_at_step`) read at that step: each
    metric's last value logged at a step <= it (NaN where none was), from the run's metric history. The race
    decided on that evaluation; the trial may have trained on before the stop reached it (it is stopped at its next
    evaluation), and what it reported then changes no decision, so the run's scores, like the race's, are those of
    the rung whatever the timing. What says how far it ran (`RAN`, seconds, system/) stays as logged."""
    if "race_stopped_at_step" not in runs or runs["race_stopped_at_step"].isna().all():
        return runs
    runs = runs.copy()
    for index in runs.index[runs["race_stopped_at_step"].notna()]:
        step = int(runs.at[index, "race_stopped_at_step"])
        for column in [c for c in runs.columns if c.startswith("metrics.") and not pd.isna(runs.at[index, c])]:
            key = column[len("metrics."):]
            if key in RAN or "seconds" in key or key.startswith("system/"):
                continue
            history = [metric for metric in client.get_metric_history(runs.at[index, "run_id"], key)
                       if metric.step <= step]
            runs.at[index, column] = (max(history, key=lambda m: (m.step, m.timestamp)).value if history
                                      else np.nan)
    return runs


def fetch_sweep_runs(tracking_uri: str, experiment_name: str, sweep_run_id: str | None = None,
                     all_sweeps: bool = False) -> pd.DataFrame:
    """The trial runs an analysis reads: those of `sweep_run_id`, of every sweep of the experiment
    (`all_sweeps`), or else of its latest sweep: one line per trial run, its `run_id`, `status`, `seed`,
    `config_hash`, and its params and metrics as `params.<name>` and `metrics.<name>` columns.

    Examples:
        >>> runs = sentsweep.fetch_sweep_runs("sqlite:////tmp/s/mlflow.db", "tsdae_deletion")  # doctest: +SKIP
        >>> runs[["seed", "params.noise_ratio", "params.pooling", "metrics.sts_test_at_best_dev"]]  # doctest: +SKIP
    """
    sweep = None if all_sweeps else (sweep_run_id or latest_sweep_run_id(tracking_uri, experiment_name))
    return fetch_trial_runs(tracking_uri, experiment_name, sweep)


def run_artifact_text(tracking_uri: str, run_id: str, name: str) -> str | None:
    """The text of artifact `name` of a run; None when the run has none (an older sweep, a trial without it);
    an `InputError` with MLflow's message when it cannot be read (an unreachable server, a run that is not there)."""
    from mlflow.exceptions import MlflowException

    with tempfile.TemporaryDirectory() as directory:
        try:
            path = _client(tracking_uri).download_artifacts(run_id, name, directory)
        except MlflowException as error:
            if error.error_code == "RESOURCE_DOES_NOT_EXIST":  # a missing artifact (file and HTTP stores alike)
                return None
            raise InputError(f"cannot read {name} of run {run_id} from MLflow at {redact(tracking_uri)}: "
                             f"{redact(str(error))}") from error
        return Path(path).read_text(encoding="utf-8")


def per_query_outcomes(tracking_uri: str, run_id: str) -> dict[str, list[float]]:
    """{metric: outcome per query} a trial stored for its final evaluation tasks; an `InputError` if it has none."""
    text = run_artifact_text(tracking_uri, run_id, PER_QUERY_ARTIFACT)
    if text is None:
        raise InputError(f"run {run_id} has no {PER_QUERY_ARTIFACT} (no evaluation task with per-query "
                         "outcomes was run)")
    return json.loads(text)


def finished_cells(runs: pd.DataFrame) -> set[tuple[str, str]]:
    """The (config_hash, seed) pairs of the FINISHED runs among `runs` (seeds as strings); none where the frame has
    no such columns (no runs)."""
    if not {"config_hash", "seed"} <= set(runs.columns):
        return set()
    finished = runs[runs["status"] == "FINISHED"]
    return set(zip(finished["config_hash"], finished["seed"].astype(str)))


def same_param_value(value, cell) -> bool:
    """Whether a param's value (as a config holds it, or as MLflow's text) is a table cell's (the table reads numbers
    as numbers: 0.30 == "0.3")."""
    try:
        return float(value) == float(cell)
    except (TypeError, ValueError):
        return str(value) == str(cell)


def runs_of_row(runs: pd.DataFrame, params: list[str], row: tuple) -> pd.DataFrame:
    """The runs whose params equal a table `row`'s values (see `same_param_value`)."""
    mask = [all(same_param_value(param, value) for value, param in zip(row, values))
            for values in zip(*(runs[f"params.{name}"] for name in params))]
    return runs[mask] if len(runs) else runs
