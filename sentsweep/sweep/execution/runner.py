"""Run a checked sweep on Ray Tune: its stages in order (each a `sentsweep.sweep.execution.stage_run.StageRun`), the
greedy search's carry-over, resume, and one MLflow parent run; the trained models kept and the chained stages started
from them are `sentsweep.sweep.execution.models_kept`'s.

`sentsweep.sweep.launch.launcher` checks every input first and calls `SweepRunner.run`; nothing here validates input
but what needs Ray up: the cluster's resources for the trials (`sentsweep.sweep.compute.resources.check_resources`).
"""

from __future__ import annotations

import itertools
import json
import shlex
import signal
import sys
from pathlib import Path

from sentsweep.analysis.racing import TEST_OPTIONS
from sentsweep.analysis.reproduction import TARGETS_ARTIFACT, targets_to_json
from sentsweep.analysis.runs import fetch_trial_runs, finished_cells, same_param_value
from sentsweep.analysis.step_racing import RUNGS
from sentsweep.data import read_scored_pairs
from sentsweep.models import load_sentence_model
from sentsweep.plugins import USER_CODE_KEY
from sentsweep.sweep.compute.local_ray import start_ray
from sentsweep.sweep.compute.ray_connection import ray_on_this_machine
from sentsweep.sweep.compute.ray_leftovers import end_left_ray, record_local_ray
from sentsweep.sweep.compute.resources import check_resources
from sentsweep.sweep.config.definition import ResolvedSweep, Stage, SweepDefinition
from sentsweep.sweep.config.options import SweepOptions
from sentsweep.sweep.execution.budget import SweepBudget
from sentsweep.sweep.execution.interrupts import stop_as_interrupt
from sentsweep.sweep.execution.library_call import note_sweep_run
from sentsweep.sweep.execution.library_output import ray_logging_level
from sentsweep.sweep.execution.models_kept import KeptModels, MissingModels
from sentsweep.sweep.execution.stage_run import StageRun
from sentsweep.sweep.execution.storage_faults import sweep_folders
from sentsweep.sweep.execution.sweep_endings import (
    MLFLOW_UNAVAILABLE_EXIT_CODE,
    StageFailed,
    resume_command,
    stopped_sweep_exit_code,
    sweep_command,
)
from sentsweep.sweep.execution.target_list import TargetList
from sentsweep.sweep.search.objectives import objectives_text, sweep_objectives
from sentsweep.sweep.search.optuna_sampler import search_params
from sentsweep.tasks import main_metric
from sentsweep.tasks.sts import StsEvaluator
from sentsweep.terminal import say
from sentsweep.tracking.callback import NON_PARAM_KEYS, SweepTracker, config_hash
from sentsweep.tracking.command_record import command_operations
from sentsweep.tracking.store import redact, sweep_pages
from sentsweep.tracking.sweep_run import experiment_params
from sentsweep.tracking.used_values import trial_reported_names
from sentsweep.tracking.writer import MlflowUnavailable
from sentsweep.worker_fork import worker_runtime_env


def baseline_scores(constants: dict) -> dict:
    """STS dev/test scores of the untrained model as released (its own pooling)."""
    model = load_sentence_model(constants["model"], pooling=None, max_seq_length=constants["max_seq_length"])
    fmt = constants["eval_format"]
    return {
        f"untrained_sts_{split}": StsEvaluator(read_scored_pairs(constants[f"{split}_file"], fmt, split))(model)
        for split in ("dev", "test")
    }


def start_sweep_ray(options: SweepOptions, constants: dict) -> None:
    """Ray up for a sweep: the driver's own (what a killed driver of the same output folder left ended first) or the
    cluster's, the researcher's own modules travelling to every node with the job (`sentsweep.plugins`); then a
    SIGTERM stops the sweep as Ctrl-C does."""
    user_code = [entry["path"] for entry in constants.get(USER_CODE_KEY, [])]
    left = end_left_ray(options.output_dir)  # of a driver killed before, which started its own Ray
    if left:
        say(f"ended {len(left)} Ray process(es) that an earlier driver of {options.output_dir}, killed, left running")
    context = start_ray(ignore_reinit_error=True, include_dashboard=False, log_to_driver=False,
                        logging_level=ray_logging_level(options.verbose),
                        runtime_env=({"py_modules": user_code} if user_code else {})
                        | (worker_runtime_env() if ray_on_this_machine() else {}))
    if context is not None and context.address_info.get("session_dir"):
        record_local_ray(options.output_dir, context.address_info["session_dir"])
    # again after ray.init, whose failure handler takes SIGTERM over (and aborts): a SIGTERM stops the sweep as
    # Ctrl-C does, Ray Tune ending its trials and saving its state
    signal.signal(signal.SIGTERM, stop_as_interrupt)


class SweepRunner:
    """Runs the stages of one sweep on Ray Tune, logging to one MLflow parent run, and prints each table."""

    def __init__(self, definition: SweepDefinition, options: SweepOptions, tracking_uri: str,
                 resolved: ResolvedSweep):
        self.definition = definition
        self.options = options
        self.tracking_uri = tracking_uri
        self.seeds = resolved.seeds
        self.resolved = resolved
        self.task_metrics: list[str] = []  # main metrics of --eval-task tasks, shown in the tables
        self.experiment = options.experiment or definition.name
        self.storage_path = resolved.storage_path
        self.gpus_per_trial = 0.0  # --gpus-per-trial, with 'auto' settled by the probe once Ray is up (run)
        self.budget = SweepBudget(None, None, 0.0)  # --time-budget, --gpu-hours: from the first trial's start
        self.kept_models = KeptModels(definition, options, tracking_uri, resolved.seeds)
        self.targets: TargetList | None = None  # the published values' line per stage and their list (run)

    def run(self, stages: list[tuple[str, dict]], baseline: dict) -> int:
        """Run every stage (or the definition's own `driver`); returns the exit code (3 when MLflow stayed
        unreachable past --mlflow-wait: the sweep's writes are kept in its pending file, --resume finishes it; the
        others: `sentsweep.sweep.execution.sweep_endings.stopped_sweep_exit_code`)."""
        self._start_ray(stages)
        try:
            tracker = self._open_record(stages, baseline)
        except MlflowUnavailable as outage:
            print(f"error: {outage}; once MLflow is back, run: {redact(shlex.join(sweep_command()))}", file=sys.stderr)
            return MLFLOW_UNAVAILABLE_EXIT_CODE
        note_sweep_run(tracker.parent_run_id, tracker.writer.experiment_id)  # for a `sentsweep.run` call's result
        try:
            self._run_stages(tracker, stages)
            tracker.finish()
        except (Exception, KeyboardInterrupt) as error:
            code = stopped_sweep_exit_code(error, tracker, resume_command(self.options.extend),
                                           sweep_folders(self.options.output_dir, self.storage_path))
            if code is None:
                raise
            return code
        say("\n" + sweep_pages(self.tracking_uri, tracker.writer.experiment_id, tracker.view_key,
                               tracker.parent_run_id))
        return 0

    def _start_ray(self, stages: list[tuple[str, dict]]) -> None:
        """Ray up for the sweep (`start_sweep_ray`), and the cluster's resources checked for the trials: a request
        no node of a fixed cluster can run is refused (InputError) before any MLflow run or trial; trials sharing a
        GPU are checked to fit in its memory, or --gpus-per-trial auto is settled to a number."""
        start_sweep_ray(self.options, self.resolved.constants)
        self.gpus_per_trial = check_resources(self.options, self.resolved.constants, self.resolved.method_settings,
                                              stages, self.storage_path)
        self.budget = SweepBudget(self.options.time_budget, self.options.gpu_hours, self.gpus_per_trial)

    def _open_record(self, stages: list[tuple[str, dict]], baseline: dict) -> SweepTracker:
        """The sweep's MLflow record opened (`SweepTracker`: its run created, or reopened by --resume), with the
        untrained model's scores, the published values it re-runs, its tags and params."""
        constants, options = self.resolved.constants, self.options
        tracker = SweepTracker(self.tracking_uri, self.experiment, self.definition.name,
                               pending_dir=options.output_dir, resume=options.resume, extend=options.extend,
                               wait_s=options.mlflow_wait)
        tracker.log_sweep_metrics(baseline)
        if self.definition.published:  # the published values it re-runs, for `sentsweep analyze report`
            tracker.writer.submit({"op": "text", "trial": None, "file": TARGETS_ARTIFACT,
                                   "content": targets_to_json(self.definition.published)})
        if self.definition.published or self.definition.orderings:
            self.targets = TargetList(
                self.definition.published, 1 - options.alpha, Path(options.output_dir) /
                f"{self.experiment}-{tracker.parent_run_id[:8]}-reproduction_targets.md",
                lambda name, text: tracker.writer.submit({"op": "text", "trial": None, "file": name, "content": text}),
                self.definition.orderings)
        tracker.tag_sweep("selection_metric", self.definition.selection_metric)
        tracker.tag_sweep("keep_models", self.options.keep_models)
        self.task_metrics = [main_metric(name) for name in constants.get("eval_tasks", {})]
        tracker.tag_sweep("table_metrics", json.dumps(self.table_metrics()))
        if self.options.race:  # how the race decided, beside its printed status
            tracker.tag_sweep("race", json.dumps(self.race_settings() | {"schedule": self.options.race_schedule}))
        tracker.record_user_code(constants.get(USER_CODE_KEY))  # the sweep run's code version, as its trials'
        for operation in command_operations(options):  # the command that started it, for `sentsweep rerun`
            tracker.writer.submit(operation)
        # the settings trials report themselves are the sweep run's params as the trials used them, at its end
        tracker.reported_names = trial_reported_names(constants, stages)
        tracker.record.log_params(self.experiment_params(stages, tracker.reported_names))
        return tracker

    def _run_stages(self, tracker, stages: list[tuple[str, dict]]) -> None:
        """Every stage in order (or the definition's own `driver`), a greedy stage handing its best on."""
        constants = self.resolved.constants
        if self.definition.driver is not None:
            self.definition.driver(DriverStages(self, tracker), constants)
            return
        stage_by_name = {stage.name: stage for stage in self.definition.stages}
        # a stage of a definition of several logs its name (param `stage`), also when options left the others out:
        # a run is told by its stage whichever options ran it
        several = len(self.definition.stages) > 1
        for index, (stage_name, axes) in enumerate(stages):
            title = f"stage {index + 1}/{len(stages)} '{stage_name}'" if len(stages) > 1 else self.definition.name
            try:
                axes, chain = self.kept_models.chained(stage_by_name.get(stage_name), axes, tracker.writer)
            except MissingModels as missing:
                raise StageFailed(str(missing), exit_code=1) from None
            table, results = self.run_stage(tracker, index, title, constants | (
                {"stage": stage_name} if several else {}), axes, stage_name if several else None, chain)
            if self.definition.greedy:
                best = self.best_values(table, axes, constants, results)
                say(f"best on dev ({self.definition.selection_metric}, mean over seeds): {best}")
                carried, rule = self.carried_values(stage_by_name.get(stage_name), best)
                if rule is not None:  # printed and tagged on the sweep's run: which rule carried what on
                    say(f"kept instead: {carried} ({rule})")
                    tracker.tag_sweep(f"kept.{stage_name}", f"{json.dumps(carried)} ({rule})")
                constants = constants | carried

    def run_stage(self, tracker, index: int, title: str, constants: dict, axes: dict, stage: str | None,
                  chain: dict | None = None):
        """Fit one stage (`sentsweep.sweep.execution.stage_run.StageRun`; `chain`: the settings it takes from an earlier
        stage's models, see `KeptModels.chained`), write its results, log the models it keeps, print its table and
        return it (`sentsweep.analysis.tables.ComparisonTable`) with Ray Tune's results of the trials it ran."""
        return StageRun(self, tracker, index, title, constants, axes, stage, chain).run()

    def experiment_params(self, stages: list[tuple[str, dict]], reported: frozenset = frozenset()) -> dict[str, str]:
        """The experiment as the sweep's run's params (`sentsweep.tracking.sweep_run.experiment_params`), less the
        settings its trials report themselves (`reported`)."""
        options = self.options
        settings = search_params(options) | {
            "scheduler": options.scheduler, "selection_metric": self.definition.selection_metric,
            "objectives": objectives_text(sweep_objectives(options.objective)) or None,
            "alpha": options.alpha, "correction": options.correction, "keep_models": options.keep_models,
            "race": self.race_settings() | {"schedule": options.race_schedule} if options.race else "off"}
        return experiment_params(stages, self.seeds, self.resolved.constants, self.resolved.method_settings,
                                 settings, frozenset(NON_PARAM_KEYS) | reported)

    def carried_values(self, stage: Stage | None, best: dict) -> tuple[dict, str | None]:
        """(values, rule) a greedy stage hands on to the next: its own rule's values where it has one (`Stage.keep`),
        else (`best`, None), its best on dev."""
        kept = stage.keep(self.options) if stage is not None else None
        return (best, None) if kept is None else (kept[1], kept[0])

    def best_values(self, table, axes: dict, constants: dict, results) -> dict:
        """{axis: value} of the table's best row by the selection metric (mean over seeds, on dev), as the trials'
        configs hold them: from Ray Tune's results of the stage's trials, or where the stage ran none of that
        row's (an --extend whose trials had all finished before), from the grid's own values."""
        group_by = list(axes) or ["method"]
        best = table.best[self.definition.selection_metric]
        grid = [constants | dict(zip(axes, values)) for values in itertools.product(*axes.values())] if all(
            isinstance(values, list) for values in axes.values()) else []
        for config in [result.config for result in results if result.config] + grid:
            if all(same_param_value(config.get(axis), cell) for axis, cell in zip(group_by, best)):
                return {axis: config[axis] for axis in group_by}
        raise StageFailed(f"no trial of the best row {best} of {group_by} is known to Ray Tune", exit_code=1)

    def race_settings(self) -> dict:
        """The race's options (--race-*, --correction), as Race takes them (and the steps schedule's rungs)."""
        rungs = {"rungs": list(self.options.race_rungs or RUNGS)} if self.options.race_schedule == "steps" else {}
        return {"seeds": self.seeds, "initial_seeds": self.options.race_initial_seeds, "alpha": self.options.race_alpha,
                "correction": self.options.correction, "max_trials": self.options.race_budget,
                "test": TEST_OPTIONS[self.options.race_test], "tolerance": self.options.race_tolerance} | rungs

    def points_not_finished(self, tracker, constants: dict, points: list[dict]) -> list[dict]:
        """The `points` whose configuration (hash) has no finished run with their seed in the sweep (--extend, or
        --resume of a stage whose Ray Tune state is gone)."""
        runs = self.trial_runs(tracker, "reading the sweep's finished trials")
        tracker.configurations.remember_finished(runs)
        finished = finished_cells(runs)
        return [point for point in points if (config_hash(constants | point), str(point["seed"])) not in finished]

    def trial_runs(self, tracker, what: str):
        """The sweep's trial runs (`fetch_trial_runs`), read once every queued write is in MLflow, waiting for a store
        that went away (`QueuedMlflowWriter.call`)."""
        return tracker.writer.call(what, fetch_trial_runs, self.tracking_uri, self.experiment, tracker.parent_run_id)

    def table_metrics(self) -> list[str]:
        """The metrics of the sweep's tables: the definition's, its selection metric, the eval tasks' main ones."""
        return list(dict.fromkeys(self.definition.table_metrics + [self.definition.selection_metric]
                                  + self.task_metrics))


class DriverStages:
    """What a definition's own driver gets to run its stages (`sentsweep.sweep.config.definition.SweepDriver`): the
    options, the overridden settings and the selection metric, stages numbered as they run, sweep metrics."""

    def __init__(self, runner: SweepRunner, tracker) -> None:
        self._runner, self._tracker, self._stages_run = runner, tracker, 0
        self.options = runner.options
        self.overrides = runner.resolved.overrides
        self.selection_metric = runner.definition.selection_metric

    def run_stage(self, name: str, settings: dict, axes: dict, title: str | None = None):
        table, _ = self._runner.run_stage(self._tracker, self._stages_run, title or name, settings | {"stage": name},
                                          axes, name)
        self._stages_run += 1
        return table

    def log_sweep_metrics(self, metrics: dict[str, float]) -> None:
        self._tracker.log_sweep_metrics(metrics)
