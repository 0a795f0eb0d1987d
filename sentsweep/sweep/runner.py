"""Run a checked sweep on Ray Tune: one MLflow parent run, one table per stage, the greedy search's carry-over;
the trained models kept and the chained stages started from them are `sentsweep.sweep.models_kept`'s.

`sentsweep.sweep.launcher` checks every input first and calls `SweepRunner.run`; nothing here validates input
but what needs Ray up: the cluster's resources for the trials (`sentsweep.sweep.resources.check_resources`).
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
import shlex
import signal
import sys
import time
from pathlib import Path

from sentsweep.analysis.race_schedules import make_race
from sentsweep.analysis.racing import TEST_OPTIONS
from sentsweep.analysis.reproduction import TARGETS_ARTIFACT, targets_to_json
from sentsweep.analysis.run_accounts import configuration_accounts, stage_account
from sentsweep.analysis.runs import (
    RACE_NOT_COUNTED_TAG,
    RACE_STOPPED_TAG,
    fetch_trial_runs,
    finished_cells,
    runs_of_row,
    same_param_value,
    values_at_race_stops,
)
from sentsweep.analysis.step_racing import RUNGS
from sentsweep.analysis.tables import build_table, seed_statistics, to_frame, to_markdown
from sentsweep.data import read_scored_pairs
from sentsweep.faults import FAULT_ENV, fault_point
from sentsweep.models import load_sentence_model
from sentsweep.plugins import USER_CODE_KEY
from sentsweep.search_spaces.param_spaces import (
    grid_param_space,
    grid_points,
    points_param_space,
    sampled_param_space,
)
from sentsweep.sweep.budget import BudgetSpent, SweepBudget, budget_watch
from sentsweep.sweep.cluster import PendingTimeout, cluster_nodes, pending_watch, trial_slots
from sentsweep.sweep.definition import ResolvedSweep, Stage, SweepDefinition
from sentsweep.sweep.deterministic_failures import no_retry_of_deterministic_failures
from sentsweep.sweep.interrupts import stop_as_interrupt, stop_signal_came
from sentsweep.sweep.local_ray import start_ray
from sentsweep.sweep.models_kept import KeptModels, MissingModels
from sentsweep.sweep.options import SweepOptions
from sentsweep.sweep.optuna_sampler import make_sampler
from sentsweep.sweep.progress import SweepProgress, ray_logging_level, tune_verbosity
from sentsweep.sweep.race_decisions import decided_runs
from sentsweep.sweep.ray_connection import ray_on_this_machine
from sentsweep.sweep.ray_leftovers import end_left_ray, record_local_ray
from sentsweep.sweep.resources import check_resources
from sentsweep.sweep.stage_plots import PLOTS_FOLDER, log_stage_plots
from sentsweep.sweep.storage_faults import (
    StorageFault,
    StorageWatch,
    points_left_without_state,
    stop_watching,
    sweep_folders,
    unfinished_points,
    watch_storage,
)
from sentsweep.sweep.sweep_endings import (
    MLFLOW_UNAVAILABLE_EXIT_CODE,
    Interrupted,
    StageFailed,
    resume_command,
    stopped_sweep_exit_code,
    sweep_command,
)
from sentsweep.sweep.target_list import TargetList
from sentsweep.sweep.target_tasks import settings_by_task
from sentsweep.sweep.trials import settings_by_method, stage_constants
from sentsweep.tasks import main_metric
from sentsweep.tasks.sts import StsEvaluator
from sentsweep.terminal import say
from sentsweep.tracking.callback import NON_PARAM_KEYS, SweepTracker, config_hash
from sentsweep.tracking.store import redact, sweep_pages
from sentsweep.tracking.sweep_run import experiment_params
from sentsweep.tracking.used_values import trial_reported_names
from sentsweep.tracking.writer import MlflowUnavailable
from sentsweep.trainables.catalog import train
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


def grid_stage_space(constants: dict, axes: dict, seeds: list[int], method_settings: dict[str, dict],
                     task_data: dict | None = None) -> dict:
    """The Ray Tune param space of a grid stage: the fixed settings, each trial's method's own protocol settings
    (those no axis sweeps) and its target task's data (`task_data`), the axes and the seeds."""
    constants = stage_constants(constants, axes, method_settings)
    return grid_param_space(constants, axes, seeds, settings_by_method(constants, axes, method_settings),
                            settings_by_task(task_data or {}, axes))


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
        self.race_status: dict = {}  # the last raced stage's {configuration: ConfigStatus} (--race)
        self.race_counted: set | None = None  # ... and the (config hash, seed) cells its decisions counted
        self.race_hashes: dict = {}  # ... and {configuration: config hash}
        self.race_stopped: dict = {}  # ... and of those, the trials a rung stopped: {Ray trial id: step}
        self.stage_index = 0  # of the stage running now, as run_stage numbers them
        self.stage_title, self.stage_axes = definition.name, []  # of the stage running now, for its progress bar
        self.targets: TargetList | None = None  # the published values' line per stage and their list (run)

    def run(self, stages: list[tuple[str, dict]], baseline: dict) -> int:
        """Run every stage (or the definition's own `driver`); returns the exit code (3 when MLflow stayed
        unreachable past --mlflow-wait: the sweep's writes are kept in its pending file, --resume finishes it; the
        others: `sentsweep.sweep.sweep_endings.stopped_sweep_exit_code`)."""
        self._start_ray(stages)
        try:
            tracker = self._open_record(stages, baseline)
        except MlflowUnavailable as outage:
            print(f"error: {outage}; once MLflow is back, run: {redact(shlex.join(sweep_command()))}", file=sys.stderr)
            return MLFLOW_UNAVAILABLE_EXIT_CODE
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
            self.targets = TargetList(
                self.definition.published, 1 - options.alpha, Path(options.output_dir) /
                f"{self.experiment}-{tracker.parent_run_id[:8]}-reproduction_targets.md",
                lambda name, text: tracker.writer.submit({"op": "text", "trial": None, "file": name, "content": text}))
        tracker.tag_sweep("selection_metric", self.definition.selection_metric)
        tracker.tag_sweep("keep_models", self.options.keep_models)
        self.task_metrics = [main_metric(name) for name in constants.get("eval_tasks", {})]
        tracker.tag_sweep("table_metrics", json.dumps(self.table_metrics()))
        if self.options.race:  # how the race decided, beside its printed status
            tracker.tag_sweep("race", json.dumps(self.race_settings() | {"schedule": self.options.race_schedule}))
        tracker.record_user_code(constants.get(USER_CODE_KEY))  # the sweep run's code version, as its trials'
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
        """Fit one stage (`chain`: the settings it takes from an earlier stage's models, see
        `KeptModels.chained`), write its results, log the models it keeps, print its table and return it
        (`sentsweep.analysis.tables.ComparisonTable`) with Ray Tune's results of the trials it ran."""
        self.stage_index = index
        self.stage_title, self.stage_axes = title, list(axes)
        tracker.begin_stage(list(axes), self.table_metrics(), self.definition.selection_metric, seed_statistics, stage)
        results = self._fit(tracker, f"{self.definition.name}-{tracker.parent_run_id[:8]}-{index}", constants, axes,
                            chain or {})
        runs = self.trial_runs(tracker, "reading the stage's trial runs")
        if stage is not None and len(runs):
            runs = runs[runs["params.stage"] == stage]
        stage_runs = runs
        if self.race_counted is not None and len(runs):
            stage_runs = decided_runs(tracker.writer, runs, self.race_status, self.race_hashes, self.race_counted,
                                      self.race_stopped)
            runs = self.counted_runs(tracker, runs)
        if not len(runs) or not (runs["status"] == "FINISHED").any():
            raise StageFailed(no_trial_finished(runs), exit_code=1)
        table = self._table(runs, axes)
        targets = self.targets.stage_line(title, runs, stage, axes, constants) if self.targets else ""
        markdown = to_markdown(table) + (f"\n\n{targets}" if targets else "")
        say(f"\n{title}: mean ± std over seeds (MLflow experiment {self.experiment!r}, "
            f"sweep run {tracker.parent_run_id})\n\n{markdown}", table_keys=len(table.row_params))
        fault_point("table", index)
        race = stage_account(stage_runs)
        say(f"\n{race}")
        self.log_configurations(tracker, title, table, stage_runs, race, targets)
        log_stage_plots(tracker.writer, runs, list(axes), self.definition.selection_metric,
                        Path(self.options.output_dir) / PLOTS_FOLDER / tracker.parent_run_id[:8], index + 1, title)
        self.race_status, self.race_counted, self.race_stopped = {}, None, {}
        if self.definition.selection_metric not in table.best:
            raise StageFailed("no trial of this stage finished; see the failure_reason tags in MLflow", exit_code=1)
        self.kept_models.keep(stage or self.definition.stages[0].name, runs, table, results, index, tracker.writer)
        fault_point("stage", index)
        return table, results

    def log_configurations(self, tracker, title: str, table, stage_runs, race: str, reproduction: str) -> None:
        """The stage's table on the sweep's run, and on each configuration's run its row (its cells, standing, the
        race's decision, the seeds left out): `stage_runs` are the stage's trial runs, those the table left out
        included."""
        cells = to_frame(table)
        metric = self.definition.selection_metric
        tracker.record.log_stage(title, to_markdown(table), cells, table.row_params, metric, race, reproduction)
        rows = {config: row for row in table.rows
                for config in runs_of_row(stage_runs, table.row_params, row)["config_hash"].unique()}
        tracker.configurations.stage_done(cells, table.row_params, rows, stage_runs, metric,
                                          configuration_accounts(stage_runs))

    def experiment_params(self, stages: list[tuple[str, dict]], reported: frozenset = frozenset()) -> dict[str, str]:
        """The experiment as the sweep's run's params (`sentsweep.tracking.sweep_run.experiment_params`), less the
        settings its trials report themselves (`reported`)."""
        options = self.options
        settings = {"search": options.search, "num_configs": options.num_configs if options.search == "optuna"
                    else None, "scheduler": options.scheduler, "selection_metric": self.definition.selection_metric,
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

    def _fit(self, tracker, run_name: str, constants: dict, axes: dict, chain: dict):
        """Run the stage's trials on Ray Tune; returns their results (Ray Tune's `Result`s: each trial's last
        result and checkpoint)."""
        from ray import tune
        from ray.tune.search.optuna import OptunaSearch

        from sentsweep.sweep.seed_groups import SeedAveragingRepeater  # lazy: imports Ray Tune, as above

        metric = self.definition.selection_metric
        scheduler = make_scheduler(self.options.scheduler, metric)
        method_settings, by_task = self.resolved.method_settings, settings_by_task(self.resolved.task_data, axes)
        if self.options.search == "grid" and scheduler is None and not (self.options.extend or self.options.race):
            left = None if chain else points_left_without_state(self, tracker, run_name, constants, axes)
            if left is not None:  # its Ray Tune state removed: the points without a finished run
                return self._tune(tracker, f"{run_name}-resumed-{time.strftime('%Y%m%d-%H%M%S')}",
                                  points_param_space(*left), tune.TuneConfig(reuse_actors=True)) if left[1] else []
            return self._tune(tracker, run_name, grid_stage_space(constants, axes, self.seeds, method_settings,
                                                                  self.resolved.task_data) | chain,
                              tune.TuneConfig(num_samples=1, reuse_actors=True))
        constants = stage_constants(constants, axes, method_settings)
        if self.options.search == "grid" and (self.options.extend or self.options.race):
            by_method = settings_by_method(constants, axes, method_settings)
            if self.options.race:
                return self._race(tracker, run_name, constants, axes, grid_points(axes, [None], by_method, by_task))
            every = grid_points(axes, self.seeds, by_method, by_task)
            points = self.points_not_finished(tracker, constants, every)
            print(f"--extend: {len(every) - len(points)} of the stage's {len(every)} trials finished before, "
                  f"{len(points)} to run")
            if not points:
                return []
            return self._tune(tracker, f"{run_name}-extended-{time.strftime('%Y%m%d-%H%M%S')}",
                              points_param_space(constants, points), tune.TuneConfig(reuse_actors=True))
        if self.options.search == "grid" and scheduler is not None:
            # A configuration's seeds one after the other, so that they run side by side and the scheduler
            # judges them together (Ray Tune's grid would run every configuration's first seed first).
            points = grid_points(axes, self.seeds, settings_by_method(constants, axes, method_settings), by_task)
            param_space = points_param_space(constants, points) | chain
            tune_config = tune.TuneConfig(num_samples=1, scheduler=scheduler, reuse_actors=True)
        else:
            param_space = sampled_param_space(constants, axes, self.seeds) | chain
            searcher = SeedAveragingRepeater(OptunaSearch(metric=metric, mode="max", sampler=make_sampler()),
                                             repeat=len(self.seeds))
            tune_config = tune.TuneConfig(
                search_alg=searcher, num_samples=self.options.num_configs * len(self.seeds), scheduler=scheduler,
                reuse_actors=True,
            )
        return self._tune(tracker, run_name, param_space, tune_config)

    def race_settings(self) -> dict:
        """The race's options (--race-*, --correction), as Race takes them (and the steps schedule's rungs)."""
        rungs = {"rungs": list(self.options.race_rungs or RUNGS)} if self.options.race_schedule == "steps" else {}
        return {"seeds": self.seeds, "initial_seeds": self.options.race_initial_seeds, "alpha": self.options.race_alpha,
                "correction": self.options.correction, "max_trials": self.options.race_budget,
                "test": TEST_OPTIONS[self.options.race_test], "tolerance": self.options.race_tolerance} | rungs

    def _race(self, tracker, run_name: str, constants: dict, axes: dict, configs: list[dict]) -> list:
        """Race the configurations over the seeds as one Ray Tune run (`sentsweep.sweep.race_search`; restored
        on --resume, so no trial runs twice), the race --race-schedule names (`make_race`); the race's status
        and the cells it counted are kept for the table. Returns the trials' results."""
        from ray import tune

        from sentsweep.sweep.race_search import RaceScheduler, RaceSearcher  # lazy: imports Ray Tune, as above

        by_label = {", ".join(f"{name}={value}" for name, value in config.items() if name in axes): config
                    for config in configs}
        settings = self.race_settings()
        race = make_race(self.options.race_schedule, list(by_label), settings.pop("seeds"), **settings)
        name = f"{run_name}-race"
        # at most as many trials running as the cluster runs at once, so that a trial is chosen when a slot frees,
        # on the results in by then; an autoscaling cluster's room is not known: Ray Tune keeps one trial waiting
        slots = None if self.options.autoscaling else trial_slots(self.options.cpus_per_trial, self.gpus_per_trial,
                                                                 cluster_nodes())
        searcher = RaceSearcher(name, race, by_label, self.definition.selection_metric, slots)
        bound = min(len(by_label) * len(self.seeds), self.options.race_budget or math.inf)
        results = self._tune(tracker, name, dict(constants), tune.TuneConfig(
            search_alg=searcher, scheduler=RaceScheduler(name, slots), num_samples=-1, reuse_actors=True), bound)
        race = searcher.race  # (restored with a resumed run)
        self.race_status = race.status()
        self.race_hashes = {label: config_hash(constants | config) for label, config in by_label.items()}
        self.race_counted = {(self.race_hashes[label], str(seed))
                             for label, seeds in race.counted_seeds().items() for seed in seeds}
        self.race_stopped = {searcher.trial_ids[trial]: step  # (a race over steps: the trials a rung stopped)
                             for trial, step in getattr(race, "stopped_at", dict)().items()}
        return list(results)

    def counted_runs(self, tracker, runs):
        """The runs of a race's cells that its decisions counted; a run beyond them (a seed run ahead for a
        configuration its level then dropped: `sentsweep.analysis.async_racing`; finished, or stopped for the
        race) is tagged and left out of the table, which so depends on the race's results alone, not on the order
        they came in. The runs a rung stopped (a race over steps) are tagged with the step the race counted, and
        read at it (`sentsweep.analysis.runs.values_at_race_stops`)."""
        runs = runs.assign(counted=[(config, str(seed)) in self.race_counted
                                    for config, seed in zip(runs["config_hash"], runs["seed"])])
        for trial_id in runs[~runs["counted"] & runs["status"].isin(["FINISHED", "KILLED"])
                             & runs["ray_trial_id"].notna()]["ray_trial_id"]:
            tracker.writer.submit({"op": "tag", "trial": trial_id, "key": RACE_NOT_COUNTED_TAG, "value": (
                "a seed run ahead for a configuration the race dropped on the seeds before, or after its end")})
        stopped = runs["ray_trial_id"].map(self.race_stopped)
        for trial_id, step in zip(runs["ray_trial_id"][stopped.notna()], stopped.dropna()):
            tracker.writer.submit({"op": "tag", "trial": trial_id, "key": RACE_STOPPED_TAG, "value": str(int(step))})
        runs = runs.assign(race_stopped_at_step=stopped.where(stopped.notna(), runs["race_stopped_at_step"]))
        return tracker.writer.call("reading the metric histories of the runs the race stopped", values_at_race_stops,
                                   tracker.writer.client, runs[runs["counted"]].drop(columns="counted"))

    def _tune(self, tracker, run_name: str, param_space: dict, tune_config, race_bound: int | None = None):
        """One Ray Tune run of `param_space` under `run_name` (restored from its saved state with --resume);
        `race_bound`: a race's most trials, for its progress line."""
        from ray import tune

        trainable = tune.with_resources(
            train, {"cpu": self.options.cpus_per_trial, "gpu": self.gpus_per_trial}
        )
        # Ray Tune warns about every trial an interruption left without results; the driver says it once, below
        logging.getLogger("ray.tune.analysis.experiment_analysis").setLevel(logging.ERROR)
        experiment_path = f"{self.storage_path.rstrip('/')}/{run_name}"
        # --pending-timeout (created before a restore unpickles it)
        watch = pending_watch(self.options, run_name, self.gpus_per_trial)
        budget = budget_watch(self.budget, run_name)  # --time-budget, --gpu-hours (a watch restored as above)
        progress = [] if self.options.verbose else [SweepProgress(self.stage_title, self.stage_axes,
                                                                  self.definition.selection_metric,
                                                                  self.options.progress_interval, race_bound)]
        callbacks = [tracker, *progress, *([watch] if watch else []), budget]
        if os.environ.get(FAULT_ENV):  # the fault matrix's tests only
            from sentsweep.sweep.fault_injection import TrialFaultPoint  # lazy: imports Ray Tune, as above

            callbacks.append(TrialFaultPoint(self.stage_index))
        if self.options.resume and tune.Tuner.can_restore(experiment_path):
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
                    callbacks=callbacks,
                    failure_config=tune.FailureConfig(max_failures=self.options.max_failures),
                    # two, not one: Ray Tune deletes a trial's older checkpoint as it registers a new one and
                    # saves its experiment state after every num_to_keep checkpoints, on its next step; a driver
                    # killed in between left a state naming a deleted checkpoint, and the resumed trial failed
                    # ("does not exist on storage anymore"; ray-project/ray#27790). The older one is deleted
                    # once the stage ends (delete_superseded_checkpoints).
                    checkpoint_config=tune.CheckpointConfig(num_to_keep=2),
                    verbose=tune_verbosity(self.options.verbose),
                ),
            )
        # Ray Tune installs its own SIGINT handler for the run and puts the previous one back only when a SIGINT
        # came: left in place, it would swallow a Ctrl-C after the stage (while models are logged, tables written)
        sigint_handler = signal.getsignal(signal.SIGINT)
        no_retry_of_deterministic_failures()  # --max-failures retries what a retry can mend, not a nan loss
        storage = StorageWatch(sweep_folders(self.options.output_dir, self.storage_path, experiment_path))
        watch_storage(storage)  # a full disk or a folder removed stops the sweep resumably
        try:
            results = tuner.fit()
            stopped_by_signal = stop_signal_came(sigint_handler)
        finally:
            signal.signal(signal.SIGINT, sigint_handler)
            stop_watching()
        storage.after_run(results)
        if storage.message:
            runs = self.trial_runs(tracker, "reading which trials finished")
            finished = set(runs[runs["status"] == "FINISHED"]["ray_trial_id"]) if len(runs) else set()
            raise StorageFault(storage.message, unfinished_points(storage.unfinished(finished), self.stage_axes),
                               storage.failed)
        if watch is not None and watch.message:
            raise PendingTimeout(watch.message)
        if budget.message:
            raise BudgetSpent(budget.message)
        # Ray Tune returned early (Ctrl-C or SIGTERM), or every trial ended before the signal took effect
        if stopped_by_signal or not self._all_ended(tracker, results):
            raise Interrupted()
        return results

    def _all_ended(self, tracker, results) -> bool:
        """Whether every trial of a Ray Tune run ended (finished, failed or stopped by the scheduler), as its
        MLflow run says: after an interruption Ray Tune reports every trial TERMINATED, those that never started
        included, while their runs are RUNNING or missing."""
        trial_ids = {result.metrics.get("trial_id") for result in results} - {None}
        if len(trial_ids) < len(results):
            return False  # trials that never reported anything
        runs = self.trial_runs(tracker, "reading whether the stage's trials ended")
        ended = runs[runs["ray_trial_id"].isin(trial_ids) & (runs["status"] != "RUNNING")] if len(runs) else runs
        return len(ended) >= len(trial_ids)

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

    def _table(self, runs, axes: dict):
        """The stage's comparison table of its trial `runs`: its axes as rows, the table metrics as columns."""
        group_by = list(axes) or ["method"]  # a sweep over seeds alone still gets its one row
        return build_table(runs, group_by, [metric for metric in self.table_metrics() if f"metrics.{metric}" in runs],
                           alpha=self.options.alpha, correction=self.options.correction)

    def table_metrics(self) -> list[str]:
        """The metrics of the sweep's tables: the definition's, its selection metric, the eval tasks' main ones."""
        return list(dict.fromkeys(self.definition.table_metrics + [self.definition.selection_metric]
                                  + self.task_metrics))




class DriverStages:
    """What a definition's own driver gets to run its stages (`sentsweep.sweep.definition.SweepDriver`): the
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


def make_scheduler(name: str, metric: str):
    """The early-stopping scheduler by name, on the dev metric, judging each configuration on the mean over its
    seeds (sentsweep.sweep.seed_groups; None for fifo: every trial runs out), with the project's rung settings."""
    from sentsweep.sweep.seed_groups import PROJECT_RUNG_SETTINGS, SeedGroupScheduler  # lazy: imports Ray Tune

    if name == "fifo":
        return None
    return SeedGroupScheduler(name, metric, mode="max", **PROJECT_RUNG_SETTINGS)
