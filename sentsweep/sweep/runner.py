"""Run a checked sweep on Ray Tune: one MLflow parent run, one table per stage, the greedy search's carry-over.

`sentsweep.sweep.launcher` checks every input first and calls `SweepRunner.run`; nothing here validates input.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from sentsweep.analysis.runs import fetch_trial_runs
from sentsweep.analysis.tables import build_table, to_markdown
from sentsweep.data import read_scored_pairs
from sentsweep.models import load_sentence_model
from sentsweep.search_spaces.param_spaces import grid_param_space, sampled_param_space
from sentsweep.search_spaces.protocol import with_method_settings
from sentsweep.sweep.definition import ResolvedSweep, SweepDefinition
from sentsweep.tasks import main_metric
from sentsweep.tasks.sts import StsEvaluator
from sentsweep.tracking.callback import SweepTracker
from sentsweep.trainables.catalog import setting_default, train


def baseline_scores(constants: dict) -> dict:
    """STS dev/test scores of the untrained model as released (its own pooling)."""
    model = load_sentence_model(constants["model"], pooling=None, max_seq_length=constants["max_seq_length"])
    fmt = constants["eval_format"]
    return {
        f"untrained_sts_{split}": StsEvaluator(read_scored_pairs(constants[f"{split}_file"], fmt, split))(model)
        for split in ("dev", "test")
    }


def settings_by_method(constants: dict, axes: dict, method_settings: dict[str, dict]) -> dict[str, dict]:
    """{setting: {method: value}} for the settings a method axis decides: each method's own protocol value,
    else the sweep's fixed value, else the setting's default."""
    if "method" not in axes or not isinstance(axes["method"], list):
        return {}
    methods = axes["method"]
    names = {name for method in methods for name in method_settings.get(method, {}) if name not in axes}
    fixed = {name: constants[name] if name in constants else setting_default(name) for name in names}
    return {name: {method: method_settings.get(method, {}).get(name, fixed[name]) for method in methods}
            for name in sorted(names)}


class SweepRunner:
    """Runs the stages of one sweep on Ray Tune, logging to one MLflow parent run, and prints each table."""

    def __init__(self, definition: SweepDefinition, args: argparse.Namespace, tracking_uri: str,
                 resolved: ResolvedSweep):
        self.definition = definition
        self.args = args
        self.tracking_uri = tracking_uri
        self.seeds = resolved.seeds
        self.resolved = resolved
        self.task_metrics: list[str] = []  # main metrics of --eval-task tasks, shown in the tables
        self.experiment = args.experiment or definition.name
        self.storage_path = (
            args.storage_path or os.environ.get("SENTSWEEP_STORAGE_PATH") or str(Path(args.output_dir, "ray").resolve())
        )

    def run(self, stages: list[tuple[str, dict]], baseline: dict) -> int:
        """Run every stage (or the definition's own `driver`); returns the exit code (3 when results could
        only be queued, not written)."""
        import ray

        constants = self.resolved.constants

        tracker = SweepTracker(self.tracking_uri, self.experiment, self.definition.name,
                               pending_dir=self.args.output_dir, resume=self.args.resume)
        tracker.log_sweep_metrics(baseline)
        ray.init(ignore_reinit_error=True, include_dashboard=False, log_to_driver=False)
        self.task_metrics = [main_metric(name) for name in constants.get("eval_tasks", {})]
        try:
            if self.definition.driver is not None:
                self.definition.driver(self, tracker, constants, stages)
            else:
                for index, (stage_name, axes) in enumerate(stages):
                    title = (f"stage {index + 1}/{len(stages)} '{stage_name}'" if len(stages) > 1
                             else self.definition.name)
                    table = self.run_stage(tracker, index, title, constants | (
                        {"stage": stage_name} if len(stages) > 1 else {}), axes,
                        stage_name if len(stages) > 1 else None)
                    if self.definition.greedy:
                        best = self.best_values(table, axes)
                        print(f"best on dev ({self.definition.selection_metric}, mean over seeds): {best}")
                        constants = constants | best
        except StageFailed as failure:
            print(f"error: {failure}", file=sys.stderr)
            return failure.exit_code
        tracker.finish()
        return 0

    def run_stage(self, tracker, index: int, title: str, constants: dict, axes: dict, stage: str | None):
        """Fit one stage, write its results, print its table and return it
        (`sentsweep.analysis.tables.ComparisonTable`)."""
        self._fit(tracker, f"{self.definition.name}-{tracker.parent_run_id[:8]}-{index}", constants, axes)
        if not tracker.writer.flush(attempts=6, wait_s=5.0):
            raise StageFailed(
                f"MLflow at {self.tracking_uri} is unreachable; {tracker.writer.pending} results are saved in "
                f"{tracker.writer.pending_file}; write them later with\n"
                f"  python -m sentsweep.tracking.writer {tracker.writer.pending_file}", exit_code=3)
        runs = fetch_trial_runs(self.tracking_uri, self.experiment, tracker.parent_run_id)
        if stage is not None and len(runs):
            runs = runs[runs["params.stage"] == stage]
        if not len(runs) or not (runs["status"] == "FINISHED").any():
            raise StageFailed(no_trial_finished(runs), exit_code=1)
        table = self._table(runs, axes)
        print(f"\n{title}: mean ± std over seeds (MLflow experiment {self.experiment!r}, "
              f"sweep run {tracker.parent_run_id})\n\n{to_markdown(table)}")
        if self.definition.selection_metric not in table.best:
            raise StageFailed("no trial of this stage finished; see the failure_reason tags in MLflow", exit_code=1)
        return table

    def best_values(self, table, axes: dict) -> dict:
        """{axis: value} of the table's best row by the selection metric (mean over seeds, on dev)."""
        group_by = list(axes) or ["method"]
        return dict(zip(group_by, map(_python_value, table.best[self.definition.selection_metric])))

    def _fit(self, tracker, run_name: str, constants: dict, axes: dict) -> None:
        from ray import tune
        from ray.tune.search import Repeater
        from ray.tune.search.optuna import OptunaSearch

        metric = self.definition.selection_metric
        scheduler = make_scheduler(self.args.scheduler, metric)
        method_settings = self.resolved.method_settings
        if "method" not in axes:
            constants = with_method_settings(constants, method_settings, axes)
        if self.args.search == "grid":
            param_space = grid_param_space(constants, axes, self.seeds, settings_by_method(
                constants, axes, method_settings))
            tune_config = tune.TuneConfig(num_samples=1, scheduler=scheduler, reuse_actors=True)
        else:
            param_space = sampled_param_space(constants, axes, self.seeds)
            searcher = Repeater(OptunaSearch(metric=metric, mode="max", seed=0), repeat=len(self.seeds))
            tune_config = tune.TuneConfig(
                search_alg=searcher, num_samples=self.args.num_configs * len(self.seeds), scheduler=scheduler,
                reuse_actors=True,
            )
        trainable = tune.with_resources(
            train, {"cpu": self.args.cpus_per_trial, "gpu": self.args.gpus_per_trial}
        )
        experiment_path = f"{self.storage_path.rstrip('/')}/{run_name}"
        if self.args.resume and tune.Tuner.can_restore(experiment_path):
            tuner = tune.Tuner.restore(
                experiment_path, trainable, resume_errored=True, param_space=param_space
            )
        else:
            tuner = tune.Tuner(
                trainable,
                param_space=param_space,
                tune_config=tune_config,
                run_config=tune.RunConfig(
                    name=run_name,
                    storage_path=self.storage_path,
                    callbacks=[tracker],
                    failure_config=tune.FailureConfig(max_failures=self.args.max_failures),
                    checkpoint_config=tune.CheckpointConfig(num_to_keep=1),
                    verbose=1,
                ),
            )
        tuner.fit()

    def _table(self, runs, axes: dict):
        """The stage's comparison table of its trial `runs`: its axes as rows, the table metrics as columns."""
        group_by = list(axes) or ["method"]  # a sweep over seeds alone still gets its one row
        metrics = list(dict.fromkeys(self.definition.table_metrics + [self.definition.selection_metric]
                                     + self.task_metrics))
        return build_table(runs, group_by, metrics)


def no_trial_finished(runs) -> str:
    """What to say when no trial of a stage finished: how many ended how, and their failure reasons (the last
    line of each distinct traceback)."""
    if not len(runs):
        return "no trial of this stage reported anything to MLflow"
    counts = runs["status"].value_counts().to_dict()
    reasons = [reason.strip().splitlines()[-1] for reason in runs["failure_reason"].dropna().unique() if reason.strip()]
    summary = ", ".join(f"{count} {status.lower()}" for status, count in sorted(counts.items()))
    listed = "".join(f"\n  {reason}" for reason in dict.fromkeys(reasons))
    return f"no trial of this stage finished ({summary}); failure reason(s):{listed or ' none recorded'}"


class StageFailed(Exception):
    """A stage whose results cannot be used: nothing finished, or MLflow unreachable (`exit_code`)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _python_value(value):
    """A table cell back as the plain Python value a config holds (numpy scalars and 'True' strings undone)."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return {"True": True, "False": False}.get(value, value) if isinstance(value, str) else value


def make_scheduler(name: str, metric: str):
    """Ray Tune's early-stopping scheduler by name, on the dev metric (None for fifo: every trial runs out)."""
    from ray.tune.schedulers import ASHAScheduler, MedianStoppingRule

    if name == "asha":
        return ASHAScheduler(metric=metric, mode="max", grace_period=2, reduction_factor=2)
    if name == "median":
        return MedianStoppingRule(metric=metric, mode="max", grace_period=2, min_samples_required=2)
    return None
