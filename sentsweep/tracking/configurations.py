"""The configuration level of a sweep's MLflow runs: the seed-averaged answer in the runs list.

Each configuration of a stage (the trials that differ by their seed alone: one `config_hash`) is an MLflow run, a
child of the sweep's run named by its axes' values, with its seeds' trial runs as its children. `ConfigurationRuns`
creates them (through the sweep's writer; `address(config_hash)` names one as a write's target) and logs on each
the statistics over its finished seeds and a description of its standing.

Details: docs/mlflow.md, "How configuration runs are kept"."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping

import pandas as pd

from sentsweep.tracking.configuration_outcomes import OUTCOME_TAG, RANK_METRIC, outcome, ranks
from sentsweep.tracking.names import (
    SHOWN_DIGITS,
    STATISTICS,
    configuration_name,
    statistic_metrics,
    trial_run_name,
    value_text,
    with_aliases,
)
from sentsweep.tracking.sweep_run import DESCRIPTION_TAG

ROLE = "configuration"  # the `role` tag of a configuration's run (a sweep's run is "sweep")
# What a configuration's run is told by, beside its config hash: the sweep run it belongs to. (Not `sweep_run_id`:
# readers of a sweep's trials take every run with that tag for a trial.)
CONFIGURATION_OF_TAG = "configuration_of"
LEFT_OUT_TAG = "seeds_left_out"
STANDING_TAG = "standing"
RACE_TAG = "race"
REPORTED_BY_SEED_TAG = "reported_by_seed."  # + a setting whose reported value differs between the trials


def address(config_hash: str) -> dict:
    """A configuration run's address in the writer's operations."""
    return {"configuration": config_hash}


class ConfigurationRuns:
    """Creates and updates one sweep's configuration runs and nests its trial runs under them, through `writer`.

    `tags`: what every configuration run is tagged with (the source tags, the sweep's name, the code version)."""

    def __init__(self, writer, tags: Mapping[str, str]) -> None:
        self.writer = writer
        self.tags = dict(tags)
        self.axes: list[str] = ["method"]  # of the stage running now (begin_stage)
        self.metrics: list[str] = []
        self.summarize: Callable | None = None
        self._created: set[str] = set()  # config hashes whose run this process has created (or reopened)
        self._names: dict[str, str] = {}  # config hash -> configuration name
        self._nested: set[str] = set()  # Ray trial ids whose runs this process created under their configuration
        self._reported: dict[str, dict[str, dict]] = {}  # config hash -> {setting: {seed: value}} its trials reported
        self._earlier: dict[str, dict] = {}  # config hash -> {seed: {metric: value}} of runs finished before
        self._last_timestamp = 0
        self._logged: dict[str, set[str]] = {}  # config hash -> its statistics' keys logged with a value

    def begin_stage(self, axes: list[str], metrics: list[str], summarize: Callable) -> None:
        """A stage starts: its configurations are named by `axes` (the method where it has none) and summarized on
        `metrics` by `summarize` (values -> {statistic: value}, as the tables compute them)."""
        self.axes, self.metrics, self.summarize = list(axes) or ["method"], list(metrics), summarize
        self._earlier = {}

    def remember_finished(self, runs: pd.DataFrame) -> None:
        """The sweep's trial runs as a driver found them before running more (fetch_trial_runs' frame, --extend):
        the finished ones count in their configurations' statistics until the stage's table replaces them."""
        if len(runs):
            for _, run in runs[runs["status"] == "FINISHED"].iterrows():
                self._earlier.setdefault(run["config_hash"], {})[str(run["seed"])] = {
                    metric: run.get(f"metrics.{metric}") for metric in self.metrics}

    def name(self, config: Mapping) -> str:
        return configuration_name({axis: config.get(axis) for axis in self.axes})

    def trial_started(self, key: str, config: Mapping, params: Mapping[str, str], seed,
                      tags: Mapping[str, str] | None = None) -> tuple[dict, str]:
        """A trial of configuration `key` starts: its configuration's run is created (reopened: RUNNING) unless this
        process did already, with `params`, its axes first, and `tags` beside this object's. Returns the trial run's
        parent address and name."""
        name = self._names.setdefault(key, self.name(config))
        self._create(key, name, {axis: params[axis] for axis in self.axes if axis in params} | dict(params), tags)
        return address(key), trial_run_name(name, seed)

    def trial_reported(self, key: str, seed, settings: Mapping[str, str]) -> None:
        """A trial of configuration `key` reported the settings it used (`settings`, as param texts): the first
        report's become the configuration's params, and a later trial's value that differs the tag
        `reported_by_seed.<setting>` ({seed: value} of each trial that reported it)."""
        reported = self._reported.setdefault(key, {})
        new = {name: value for name, value in settings.items() if name not in reported}
        if new:
            self.writer.submit({"op": "params", "trial": address(key), "params": new})
        for name, value in settings.items():
            by_seed = reported.setdefault(name, {})
            by_seed[str(seed)] = value
            if len(set(by_seed.values())) > 1:
                self.writer.submit({"op": "tag", "trial": address(key), "key": REPORTED_BY_SEED_TAG + name,
                                    "value": json.dumps(by_seed)})

    def _create(self, key: str, name: str, params: Mapping[str, str], tags: Mapping[str, str] | None = None) -> None:
        """Configuration `key`'s run, unless this process created (or reopened) it already."""
        if key in self._created:
            return
        self._created.add(key)
        self.writer.submit({
            "op": "create", "trial": address(key), "parent": None, "name": name,
            "tags": self.tags | dict(tags or {}) | {"role": ROLE, CONFIGURATION_OF_TAG: self.writer.parent_run_id,
                                                    "config_hash": key}
            | ({"stage": params["stage"]} if params.get("stage") else {}),
            "params": with_aliases(params),
        })

    def trial_nested(self, trial_id: str) -> None:
        """The trial's run was created under its configuration (by its "create" operation)."""
        self._nested.add(trial_id)

    def trial_finished(self, key: str, finished: Mapping[str, Mapping]) -> None:
        """Configuration `key`'s statistics on the seeds known to have finished: `finished` {seed: last result} of
        its trials of this Ray Tune run, with the sweep's earlier runs (remember_finished) where this run has none."""
        if self.summarize is None:  # no stage begun (a tracker used alone)
            return
        by_seed = self._earlier.get(key, {}) | {str(seed): result for seed, result in finished.items()}
        statistics = {metric: self.summarize([float(result[metric]) for result in by_seed.values()
                                              if _is_number(result.get(metric))])
                      for metric in self.metrics}
        self._log_statistics(key, {metric: values for metric, values in statistics.items() if values["n"]})

    def stage_done(self, cells: pd.DataFrame, row_params: list[str], rows: Mapping[str, tuple], runs: pd.DataFrame,
                   selection_metric: str, accounts: Mapping) -> None:
        """The stage's table is out: each configuration's statistics are set to its row's cells, its standing, race
        decision and the seeds left out are tagged, its trial runs not yet under it are nested, and it ends
        FINISHED.

        `cells`: the table's cells, one line each (`sentsweep.analysis.tables.to_frame`); `rows` {config hash: the
        table's row}; `runs`: the stage's trial runs, those the table left out included; `accounts` {config hash:
        its account, `sentsweep.analysis.run_accounts.ConfigurationAccount`: the seeds its row counts, each seed
        left out with why, its race decision}."""
        of_rows = {key: cells[[tuple(line) == tuple(row) for line in cells[row_params].itertuples(index=False)]]
                   for key, row in rows.items()}
        selected = {key: _line(of_row, selection_metric) for key, of_row in of_rows.items()}
        rank = ranks({key: accounts[key] for key in rows},
                     {key: None if line is None else line["mean"] for key, line in selected.items()})
        for key, row in rows.items():
            trials = runs[runs["config_hash"] == key]
            name = self._names.setdefault(key, configuration_name(dict(zip(row_params, row))))
            # reopened, or created where this driver ran none of its trials (a resumed or extended stage)
            self._create(key, name, _configuration_params(trials))
            of_row = of_rows[key]
            self._log_statistics(key, {line["metric"]: {statistic: line[statistic] for statistic in STATISTICS}
                                       for _, line in of_row.iterrows()})
            tags = {STANDING_TAG: _standing(of_row, selection_metric)} | {
                f"{STANDING_TAG}.{line['metric']}": _standing(of_row, line["metric"]) for _, line in of_row.iterrows()}
            account = accounts[key]
            tags[LEFT_OUT_TAG] = "; ".join(account.left_out) or "none"
            tags[RACE_TAG] = account.race  # (an --extend of a raced sweep is not raced)
            tags[OUTCOME_TAG] = outcome(account, selected[key])
            self._last_timestamp = max(int(time.time() * 1000), self._last_timestamp + 1)
            self.writer.submit({"op": "metrics", "trial": address(key),
                                "metrics": [(RANK_METRIC, float(rank[key]), self._last_timestamp, 0)]})
            tags[DESCRIPTION_TAG] = self._description(of_row, selection_metric, trials, account.seeds, tags)
            for tag, value in tags.items():
                self.writer.submit({"op": "tag", "trial": address(key), "key": tag, "value": value})
            for _, run in trials.iterrows():
                if run["ray_trial_id"] not in self._nested:  # a trial run of an earlier driver (--resume, --extend)
                    self._nested.add(run["ray_trial_id"])
                    self.writer.submit({"op": "nest", "trial": run["ray_trial_id"], "parent": address(key),
                                        "name": trial_run_name(name, run["seed"])})
            self.writer.submit({"op": "terminate", "trial": address(key), "status": "FINISHED"})

    def _description(self, cells: pd.DataFrame, selection_metric: str, trials: pd.DataFrame, counted: list,
                     tags: Mapping[str, str]) -> str:
        """A configuration run's description (Markdown, the run page's first block): its standing on the selection
        metric in one line with its mean, std, n and the seeds behind them, its stage and significance group, each
        metric's cell, the seeds left out, the race's decision and the link to the sweep's run (its table)."""
        line = cells[cells["metric"] == selection_metric]
        seeds = [str(seed) for seed in counted]
        stages = trials["params.stage"].dropna().unique() if "params.stage" in trials else []
        sweep = (f"#/experiments/{self.writer.experiment_id}/runs/{self.writer.parent_run_id}"
                 f"?workflowType=machine_learning")
        parts = []
        if len(line):
            line = line.iloc[0]
            n = int(line["n"])
            parts.append(f"**{_standing_word(line)}** on {selection_metric}: **{_mean_std(line)}**, n = {n} "
                         f"(seed{'s' * (len(seeds) != 1)} {', '.join(seeds) or 'none'})")
            group = "in" if line["best"] or line["in_best_group"] else "outside"
            parts.append(f"- group: {group} the best's significance group on {selection_metric} "
                         f"(alpha = {line['alpha']:g}, correction: {line['correction']}): {tags[STANDING_TAG]}")
        else:
            parts.append(f"no value of {selection_metric}")
        if len(stages):
            parts.append(f"- stage: {', '.join(map(str, stages))}")
        parts += [f"- outcome: {tags[OUTCOME_TAG]}", f"- seeds left out: {tags[LEFT_OUT_TAG]}",
                  f"- race: {tags[RACE_TAG]}",
                  f"- the stage's table: on [the sweep's run]({sweep}) (its description and artifacts)"]
        table = ["| metric | mean ± std | n | 95% interval | standing |", "|---|---|---|---|---|"]
        table += [f"| {cell['metric']} | {_mean_std(cell)} | {int(cell['n'])} | {_interval(cell)} | "
                  f"{_standing_word(cell)} |" for _, cell in cells.iterrows()]
        return "\n".join(parts[:1]) + "\n\n" + "\n".join(parts[1:]) + "\n\n" + "\n".join(table)

    def _log_statistics(self, key: str, statistics: Mapping[str, Mapping[str, float]]) -> None:
        """Log {metric: {statistic: value}} on configuration `key`'s run at the tables' precision, each at a later
        timestamp than the last, so that the run shows the latest; an undefined std or interval only where it
        replaces a value logged before (`statistic_metrics`)."""
        self._last_timestamp = max(int(time.time() * 1000), self._last_timestamp + 1)
        metrics = statistic_metrics(statistics, self._last_timestamp, self._logged.setdefault(key, set()))
        if metrics:
            self.writer.submit({"op": "metrics", "trial": address(key), "metrics": metrics})


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _configuration_params(trials: pd.DataFrame) -> dict[str, str]:
    """A configuration's params as its trial runs have them: those all its runs share (not the seed)."""
    params = [column for column in trials.columns if column.startswith("params.")]
    shared = {}
    for column in params:
        values = trials[column].dropna().unique()
        if len(values) == 1 and column != "params.seed":
            shared[column[len("params."):]] = str(values[0])
    return shared


def _line(cells: pd.DataFrame, metric: str):
    """The cell (a `to_frame` line) of `metric` among a row's `cells`; None where it has none."""
    line = cells[cells["metric"] == metric]
    return line.iloc[0] if len(line) else None


def _stopped(line) -> bool:
    """Whether a cell is one a race stopped at a rung (`to_frame`'s test: not compared with the best)."""
    return str(line["test"]).startswith("stopped by the race")


def _standing(cells: pd.DataFrame, metric: str) -> str:
    """Where the configuration stands in the table's column `metric`, in words."""
    line = cells[cells["metric"] == metric]
    if not len(line):
        return f"no value of {metric}"
    line = line.iloc[0]
    n = f"mean over {int(line['n'])} seed{'s' * (int(line['n']) != 1)}"
    if line["best"]:
        return f"best on {metric} ({n})"
    if line["test"] == "not tested":
        return f"within the best's group on {metric}: not tested (fewer than 2 seeds shared with the best; {n})"
    if _stopped(line):
        return f"stopped by the race at a rung on {metric}: not compared with the best (it trained for less; {n})"
    label = "uncorrected p" if line["correction"] == "none" else f"{line['correction'].capitalize()}-adjusted p"
    p = f"{label} = {value_text(round(float(line['p_vs_best_adjusted']), 4))}, {line['test']}"
    if line["in_best_group"]:
        return f"within the best's significance group on {metric} ({p}; {n})"
    return f"significantly worse than the best on {metric} ({p}, alpha = {line['alpha']:g}; {n})"


def _standing_word(line) -> str:
    """A cell's standing in words: best, not significantly worse (in the best's significance group, or not tested
    against it) or significantly worse than the best."""
    if line["best"]:
        return "best"
    if _stopped(line):
        return "stopped by the race"
    if line["in_best_group"] or line["test"] == "not tested":
        return "not significantly worse than the best"
    return "significantly worse than the best"


def _mean_std(line) -> str:
    std = line["std"]
    return f"{line['mean']:.{SHOWN_DIGITS}f} ± " + ("n/a" if pd.isna(std) else f"{std:.{SHOWN_DIGITS}f}")


def _interval(line) -> str:
    low, high = line.get("ci95_low"), line.get("ci95_high")
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return "n/a (fewer than 3 seeds)"
    return f"[{low:.{SHOWN_DIGITS}f}, {high:.{SHOWN_DIGITS}f}]"


