"""One stage of a sweep run on Ray Tune: its trials (a grid, Optuna's samples, a race, or what --extend and
--resume leave), then its table with the reproduction targets' line, its record in MLflow and the models it keeps."""

from __future__ import annotations

import time
from pathlib import Path

from sentsweep.analysis.run_accounts import configuration_accounts, stage_account
from sentsweep.analysis.runs import runs_of_row
from sentsweep.analysis.tables import build_table, seed_statistics, to_frame, to_markdown
from sentsweep.faults import fault_point
from sentsweep.search_spaces.param_spaces import (
    grid_param_space,
    grid_points,
    points_param_space,
    sampled_param_space,
)
from sentsweep.sweep.execution.race_decisions import decided_runs, race_split, undecided_runs
from sentsweep.sweep.execution.stage_pareto import stage_pareto
from sentsweep.sweep.execution.stage_plots import PLOTS_FOLDER, log_stage_plots
from sentsweep.sweep.execution.stage_race import RaceOutcome, race_stage
from sentsweep.sweep.execution.stage_tune import tune_stage
from sentsweep.sweep.execution.storage_faults import points_left_without_state
from sentsweep.sweep.execution.sweep_endings import StageFailed
from sentsweep.sweep.search.objectives import sweep_objectives
from sentsweep.sweep.search.optuna_sampler import make_sampler
from sentsweep.sweep.search.target_tasks import settings_by_task
from sentsweep.sweep.search.trials import settings_by_method, stage_constants
from sentsweep.terminal import say


class StageRun:
    """One stage's run for `sweep` (a `sentsweep.sweep.execution.runner.SweepRunner`: its options, settings, seeds and
    record): `index` numbers it as it runs, `title` heads its table and progress line, `stage` is its name where
    the sweep's definition has several (its runs' param `stage`), `chain` the settings it takes from an earlier
    stage's models (`KeptModels.chained`). `race` holds what its race decided (--race)."""

    def __init__(self, sweep, tracker, index: int, title: str, constants: dict, axes: dict, stage: str | None,
                 chain: dict | None = None) -> None:
        self.sweep, self.tracker = sweep, tracker
        self.index, self.title, self.stage = index, title, stage
        self.constants, self.axes, self.chain = constants, axes, chain or {}
        self.race: RaceOutcome | None = None

    def run(self):
        """Fit the stage, write its results, log the models it keeps, print its table and return it
        (`sentsweep.analysis.tables.ComparisonTable`) with Ray Tune's results of the trials it ran."""
        sweep, tracker, axes = self.sweep, self.tracker, self.axes
        tracker.begin_stage(list(axes), sweep.table_metrics(), sweep.definition.selection_metric, seed_statistics,
                            self.stage)
        results = self._fit(f"{sweep.definition.name}-{tracker.parent_run_id[:8]}-{self.index}")
        runs = sweep.trial_runs(tracker, "reading the stage's trial runs")
        if self.stage is not None and len(runs):
            runs = runs[runs["params.stage"] == self.stage]
        stage_runs = undecided_runs(tracker.writer, runs) if self.race is None else runs
        if self.race is not None and len(runs):
            race = self.race
            split = race_split(runs, race.counted, race.stopped)
            stage_runs = decided_runs(tracker.writer, split, race.status, race.hashes)
            runs = race.counted_runs(tracker, split)
        if not len(runs) or not (runs["status"] == "FINISHED").any():
            raise StageFailed(no_trial_finished(runs), exit_code=1)
        table = self.table(runs)
        self._report(table, runs, stage_runs)
        if sweep.definition.selection_metric not in table.best:
            raise StageFailed("no trial of this stage finished; see the failure_reason tags in MLflow", exit_code=1)
        sweep.kept_models.keep(self.stage or sweep.definition.stages[0].name, runs, table, results, self.index,
                               tracker.writer)
        fault_point("stage", self.index)
        return table, results

    def _report(self, table, runs, stage_runs) -> None:
        """The stage's table printed with its targets' line and its race's status, and logged (`log_configurations`)."""
        sweep, tracker = self.sweep, self.tracker
        targets = (sweep.targets.stage_line(self.title, runs, self.stage, self.axes, self.constants)
                   if sweep.targets else "")
        markdown = to_markdown(table) + (f"\n\n{targets}" if targets else "")
        say(f"\n{self.title}: mean ± std over seeds (MLflow experiment {sweep.experiment!r}, "
            f"sweep run {tracker.parent_run_id})\n\n{markdown}", table_keys=len(table.row_params))
        fault_point("table", self.index)
        race = stage_account(stage_runs)
        say(f"\n{race}")
        log_configurations(tracker, self.title, table, stage_runs, race, targets, sweep.definition.selection_metric)
        log_stage_plots(tracker.writer, runs, list(self.axes), sweep.definition.selection_metric,
                        Path(sweep.options.output_dir) / PLOTS_FOLDER / tracker.parent_run_id[:8], self.index + 1,
                        self.title)
        if objectives := sweep_objectives(sweep.options.objective):
            say("\n" + stage_pareto(tracker.writer, runs, table.row_params, objectives, sweep.options.alpha,
                                    sweep.options.correction, Path(sweep.options.output_dir) / PLOTS_FOLDER
                                    / tracker.parent_run_id[:8], self.index + 1, self.title, PLOTS_FOLDER),
                table_keys=len(table.row_params))

    def table(self, runs):
        """The stage's comparison table of its trial `runs`: its axes as rows, the table metrics as columns."""
        group_by = list(self.axes) or ["method"]  # a sweep over seeds alone still gets its one row
        return build_table(runs, group_by, [metric for metric in self.sweep.table_metrics()
                                            if f"metrics.{metric}" in runs],
                           alpha=self.sweep.options.alpha, correction=self.sweep.options.correction)

    def _fit(self, run_name: str):
        """Run the stage's trials on Ray Tune; returns their results (Ray Tune's `Result`s: each trial's last
        result and checkpoint)."""
        from ray import tune

        sweep, options, axes, chain = self.sweep, self.sweep.options, self.axes, self.chain
        scheduler = make_scheduler(options.scheduler, sweep.definition.selection_metric)
        method_settings = sweep.resolved.method_settings
        if options.search == "grid" and scheduler is None and not (options.extend or options.race):
            left = None if chain else points_left_without_state(sweep, self.tracker, run_name, self.constants, axes)
            if left is not None:  # its Ray Tune state removed: the points without a finished run
                return tune_stage(self, f"{run_name}-resumed-{time.strftime('%Y%m%d-%H%M%S')}",
                                  points_param_space(*left), tune.TuneConfig(reuse_actors=True)) if left[1] else []
            return tune_stage(self, run_name, grid_stage_space(self.constants, axes, sweep.seeds, method_settings,
                                                               sweep.resolved.task_data) | chain,
                              tune.TuneConfig(num_samples=1, reuse_actors=True))
        constants = stage_constants(self.constants, axes, method_settings)
        if options.search == "grid" and (options.extend or options.race):
            return self._fit_points(run_name, constants)
        space, tune_config = self._searched_space(constants, scheduler, run_name)
        results = tune_stage(self, run_name, space, tune_config)
        if options.sampler == "rung-gp" and options.search == "optuna":  # its stops recorded as a race's
            self.race = RaceOutcome(**tune_config.scheduler.outcome())
        return results

    def _fit_points(self, run_name: str, constants: dict):
        """A grid stage's points one by one: raced over the seeds (--race), or those without a finished run
        (--extend)."""
        from ray import tune

        sweep, axes = self.sweep, self.axes
        by_method = settings_by_method(constants, axes, sweep.resolved.method_settings)
        by_task = settings_by_task(sweep.resolved.task_data, axes)
        if sweep.options.race:
            results, self.race = race_stage(self, run_name, constants, grid_points(axes, [None], by_method, by_task))
            return results
        every = grid_points(axes, sweep.seeds, by_method, by_task)
        points = sweep.points_not_finished(self.tracker, constants, every)
        print(f"--extend: {len(every) - len(points)} of the stage's {len(every)} trials finished before, "
              f"{len(points)} to run")
        if not points:
            return []
        return tune_stage(self, f"{run_name}-extended-{time.strftime('%Y%m%d-%H%M%S')}",
                          points_param_space(constants, points), tune.TuneConfig(reuse_actors=True))

    def _searched_space(self, constants: dict, scheduler, run_name: str) -> tuple[dict, object]:
        """(param space, TuneConfig) of a stage an early-stopping scheduler judges (a grid) or Optuna samples
        (`--sampler rung-gp`: with its own scheduler, made for Ray Tune run `run_name`)."""
        from ray import tune
        from ray.tune.search.optuna import OptunaSearch

        from sentsweep.sweep.search.multi_objective import multi_objective_searcher  # lazy: ray
        from sentsweep.sweep.search.rung_search import rung_search  # lazy: ray
        from sentsweep.sweep.search.seed_groups import SeedAveragingRepeater  # lazy: ray

        sweep, options, axes = self.sweep, self.sweep.options, self.axes
        if options.search == "grid" and scheduler is not None:
            # A configuration's seeds one after the other, so that they run side by side and the scheduler
            # judges them together (Ray Tune's grid would run every configuration's first seed first).
            points = grid_points(axes, sweep.seeds, settings_by_method(constants, axes, sweep.resolved.method_settings),
                                 settings_by_task(sweep.resolved.task_data, axes))
            return (points_param_space(constants, points) | self.chain,
                    tune.TuneConfig(num_samples=1, scheduler=scheduler, reuse_actors=True))
        sampler = make_sampler(sweep.options.sampler)
        objectives, metric = sweep_objectives(options.objective), sweep.definition.selection_metric
        if objectives:
            searcher = multi_objective_searcher(objectives, sampler, len(sweep.seeds), metric)
        else:
            optuna_search = OptunaSearch(metric=metric, mode="max", sampler=sampler)
            searcher, scheduler = (rung_search(optuna_search, len(sweep.seeds), run_name)
                                   if options.sampler == "rung-gp" else
                                   (SeedAveragingRepeater(optuna_search, repeat=len(sweep.seeds)), scheduler))
        return (sampled_param_space(constants, axes, sweep.seeds) | self.chain, tune.TuneConfig(
            search_alg=searcher, num_samples=options.num_configs * len(sweep.seeds), scheduler=scheduler,
            reuse_actors=True))


def log_configurations(tracker, title: str, table, stage_runs, race: str, reproduction: str, metric: str) -> None:
    """The stage's table on the sweep's run, and on each configuration's run its row (its cells, standing, the
    race's decision, the seeds left out): `stage_runs` are the stage's trial runs, those the table left out
    included; `metric` the selection metric."""
    cells = to_frame(table)
    tracker.record.log_stage(title, to_markdown(table), cells, table.row_params, metric, race, reproduction)
    rows = {config: row for row in table.rows
            for config in runs_of_row(stage_runs, table.row_params, row)["config_hash"].unique()}
    tracker.configurations.stage_done(cells, table.row_params, rows, stage_runs, metric,
                                      configuration_accounts(stage_runs))


def grid_stage_space(constants: dict, axes: dict, seeds: list[int], method_settings: dict[str, dict],
                     task_data: dict | None = None) -> dict:
    """The Ray Tune param space of a grid stage: the fixed settings, each trial's method's own protocol settings
    (those no axis sweeps) and its target task's data (`task_data`), the axes and the seeds."""
    constants = stage_constants(constants, axes, method_settings)
    return grid_param_space(constants, axes, seeds, settings_by_method(constants, axes, method_settings),
                            settings_by_task(task_data or {}, axes))


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
    seeds (sentsweep.sweep.search.seed_groups; None for fifo: every trial runs out), with the project's rung
    settings."""
    from sentsweep.sweep.search.seed_groups import PROJECT_RUNG_SETTINGS, SeedGroupScheduler  # lazy: ray

    if name == "fifo":
        return None
    return SeedGroupScheduler(name, metric, mode="max", **PROJECT_RUNG_SETTINGS)
