"""Saved views of a sweep's runs in MLflow 3.17's UI: what the link a sweep prints opens on.

A saved view is the runs page's state (filter, sort, columns, charts) stored as the experiment tag
`mlflow.sharedViewState.<key>`; `sweep_views` builds a sweep's views (its configurations best first, stage by
stage, and their seeds), `view_tag` the tag that stores one, and the printed link names the view's key.

Details: docs/mlflow.md, "How the saved views are stored"."""

from __future__ import annotations

import json
import re
import time

from sentsweep.tracking.configuration_outcomes import OUTCOME_TAG, RANK_METRIC
from sentsweep.tracking.names import PARAM_ALIASES, statistic_key

ANSWER_VIEW_TAG = "answer_view"  # a sweep run's tag: the key of the view its printed link opens
VIEW_TAG_PREFIX = "mlflow.sharedViewState."  # MLflow's (its UI bundle's SHARED_VIEW_STATE prefix)
RUN_NAME_COLUMN = "attributes.`Run Name`"
TRAILING_COLUMNS = ["runDateAndNestInfo", "duration"]  # the grid's Created and Duration columns, moved after ours
CHARTS_SECTION, METRICS_SECTION = "sentsweep-configurations", "sentsweep-model-metrics"


def column(kind: str, key: str) -> str:
    """A runs-grid column id: metrics.`best_sts_dev_mean`, params.`w`."""
    return f"{kind}.`{key}`"


def seeds_view_key(view_key: str) -> str:
    return f"{view_key}-seeds"


def stage_view_key(view_key: str, stage: str) -> str:
    """The key of a stage's view: `<sweep run id>-stage-<stage>`, the stage's name as a URL carries it whole."""
    return f"{view_key}-stage-{re.sub(r'[^A-Za-z0-9._~-]+', '_', stage)}"


def configurations_view(sweep_run_id: str, selection_metric: str, metrics: list[str], axes: list[str],
                        stage: str | None = None, chart_axes: list[str] | None = None) -> dict:
    """The page state of a sweep's configuration runs, best first (docs/mlflow.md); with `stage`, that
    stage's alone. The axis `stage` is the first column after the name. The parallel coordinates' axes are
    `chart_axes` (by default `axes`): MLflow leaves out of the chart a configuration without one of them."""
    shown = [column("params", "stage")] if "stage" in axes else []
    shown += [column("tags", OUTCOME_TAG)]
    shown += [column("metrics", statistic_key(selection_metric, statistic)) for statistic in ("mean", "std", "n")]
    shown += [column("metrics", statistic_key(metric, "mean")) for metric in metrics if metric != selection_metric]
    params = [axis for axis in axes if axis != "stage"]
    params += [PARAM_ALIASES[axis] for axis in axes if axis in PARAM_ALIASES]
    shown += [column("params", axis) for axis in params]
    # the axes as the tables name them (a configuration without one of them is left out of the chart by MLflow)
    parallel = {"uuid": "sentsweep-parallel-coordinates", "type": "PARALLEL", "runsCountToCompare": 10,
                "metricSectionId": CHARTS_SECTION, "deleted": False, "isGenerated": False, "showAllRuns": True,
                "selectedParams": [axis for axis in (axes if chart_axes is None else chart_axes) if axis != "stage"],
                "selectedMetrics": [statistic_key(selection_metric, "mean")]}
    return {
        "searchFilter": f"tags.configuration_of = '{sweep_run_id}'" + (f" and tags.stage = '{stage}'" if stage else ""),
        "orderByKey": column("metrics", RANK_METRIC), "orderByAsc": True,
        "selectedColumns": shown, "columnOrder": [RUN_NAME_COLUMN, *shown, *TRAILING_COLUMNS],
        # narrow enough that the name, the stage, the outcome and the selection metric's mean, std and n fit at
        # 1,280 px
        "columnWidths": {RUN_NAME_COLUMN: 280, column("params", "stage"): 130, column("tags", OUTCOME_TAG): 250}
        | {name: 125 for name in shown if name.startswith("metrics.")},
        "runsHiddenMode": "SHOW_ALL",
        # the parallel coordinates first, in a section of their own; the page adds a chart per metric below
        "compareRunSections": [
            {"uuid": CHARTS_SECTION, "name": "Configurations", "display": True, "isReordered": True,
             "deleted": False, "isGenerated": False},
            {"uuid": METRICS_SECTION, "name": "Model metrics", "display": True, "isReordered": False,
             "deleted": False, "isGenerated": True}],
        "compareRunCharts": [parallel],
    }


def seeds_view(sweep_run_id: str, selection_metric: str, axes: list[str]) -> dict:
    """The page state of a sweep's configurations with their seeds, nested (docs/mlflow.md)."""
    shown = [column("metrics", statistic_key(selection_metric, "mean")), column("metrics", selection_metric),
             *(column("params", axis) for axis in axes), column("params", "seed")]
    return {
        "searchFilter": f"tags.sweep_run_id = '{sweep_run_id}'",
        "orderByKey": "attributes.start_time", "orderByAsc": False,
        "selectedColumns": shown, "columnOrder": [RUN_NAME_COLUMN, *shown, *TRAILING_COLUMNS],
        "columnWidths": {RUN_NAME_COLUMN: 380} | {name: 170 for name in shown if name.startswith("metrics.")},
        "runsHiddenMode": "SHOW_ALL",
    }


def sweep_views(sweep_run_id: str, run_name: str, selection_metric: str, metrics: list[str], axes: list[str],
                stage: str | None = None, stage_axes: list[str] | None = None,
                common_axes: list[str] | None = None) -> list[tuple[str, str, dict]]:
    """(key, name, page state) of each view a sweep saves as a stage begins: its configurations (of all stages, in a
    sweep of several: `axes` are every stage's so far, its parallel coordinates on `common_axes`, those every stage
    so far sweeps, so that the chart holds every configuration, the name saying so), the configurations with their
    seeds, and, with `stage`, that stage's configurations alone on `stage_axes` (its key `stage_view_key`, the view
    the printed link opens; its chart holds all of them)."""
    shared = [axis for axis in (axes if common_axes is None else common_axes) if axis != "stage"]
    chart = f" (parallel coordinates on {', '.join(shared) or 'the stage'}: each stage's own in its view)" \
        if stage and shared != [axis for axis in axes if axis != "stage"] else ""
    views = [(sweep_run_id, f"{run_name}: configurations{' of all stages' * bool(stage)}, best first{chart}",
              configurations_view(sweep_run_id, selection_metric, metrics, axes,
                                  chart_axes=["stage", *shared] if stage else None)),
             (seeds_view_key(sweep_run_id), f"{run_name}: configurations and their seeds",
              seeds_view(sweep_run_id, selection_metric, axes))]
    if stage:
        views.append((stage_view_key(sweep_run_id, stage), f"{run_name}: stage '{stage}', best first",
                      configurations_view(sweep_run_id, selection_metric, metrics, ["stage", *(stage_axes or [])],
                                          stage)))
    return views


def view_tag(key: str, name: str, state: dict, created_ms: int | None = None) -> tuple[str, str]:
    """(experiment tag key, value) of a saved view."""
    now = int(time.time() * 1000)
    envelope = {"name": name, "createdAt": created_ms or now, "updatedAt": now, "state": json.dumps(state)}
    return VIEW_TAG_PREFIX + key, json.dumps(envelope)
