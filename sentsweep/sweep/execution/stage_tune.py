"""A stage's Ray Tune run: its Tuner (restored from its saved state with --resume), its callbacks and watches, and
how the run ended (a full disk, the pending timeout, the budget, Ctrl-C or SIGTERM each stop the sweep)."""

from __future__ import annotations

import logging
import os
import signal

from sentsweep.faults import FAULT_ENV
from sentsweep.sweep.compute.cluster import PendingTimeout, pending_watch
from sentsweep.sweep.execution.budget import BudgetSpent, budget_watch
from sentsweep.sweep.execution.deterministic_failures import no_retry_of_deterministic_failures
from sentsweep.sweep.execution.interrupts import stop_signal_came
from sentsweep.sweep.execution.library_output import tune_verbosity
from sentsweep.sweep.execution.notebook_progress import stage_progress
from sentsweep.sweep.execution.storage_faults import (
    StorageFault,
    StorageWatch,
    stop_watching,
    sweep_folders,
    unfinished_points,
    watch_storage,
)
from sentsweep.sweep.execution.sweep_endings import Interrupted
from sentsweep.trainables.catalog import train


def tune_stage(stage, run_name: str, param_space: dict, tune_config, race_bound: int | None = None):
    """One Ray Tune run of `param_space` under `run_name` for `stage` (a
    `sentsweep.sweep.execution.stage_run.StageRun`), restored from its saved state with --resume; `race_bound`: a race's
    most trials, for its progress line. Returns Ray Tune's results; raises what stops the sweep (`StorageFault`,
    `PendingTimeout`, `BudgetSpent`, `Interrupted`)."""
    sweep = stage.sweep
    # Ray Tune warns about every trial an interruption left without results; the driver says it once, below
    logging.getLogger("ray.tune.analysis.experiment_analysis").setLevel(logging.ERROR)
    experiment_path = f"{sweep.storage_path.rstrip('/')}/{run_name}"
    # --pending-timeout (created before a restore unpickles it)
    watch = pending_watch(sweep.options, run_name, sweep.gpus_per_trial)
    budget = budget_watch(sweep.budget, run_name)  # --time-budget, --gpu-hours (a watch restored as above)
    tuner = _tuner(stage, run_name, param_space, tune_config, [watch] if watch else [], budget, race_bound)
    # Ray Tune installs its own SIGINT handler for the run and puts the previous one back only when a SIGINT
    # came: left in place, it would swallow a Ctrl-C after the stage (while models are logged, tables written)
    sigint_handler = signal.getsignal(signal.SIGINT)
    no_retry_of_deterministic_failures()  # --max-failures retries what a retry can mend, not a nan loss
    storage = StorageWatch(sweep_folders(sweep.options.output_dir, sweep.storage_path, experiment_path))
    watch_storage(storage)  # a full disk or a folder removed stops the sweep resumably
    try:
        results = tuner.fit()
        stopped_by_signal = stop_signal_came(sigint_handler)
    finally:
        signal.signal(signal.SIGINT, sigint_handler)
        stop_watching()
    storage.after_run(results)
    if storage.message:
        runs = sweep.trial_runs(stage.tracker, "reading which trials finished")
        finished = set(runs[runs["status"] == "FINISHED"]["ray_trial_id"]) if len(runs) else set()
        raise StorageFault(storage.message, unfinished_points(storage.unfinished(finished), list(stage.axes)),
                           storage.failed)
    if watch is not None and watch.message:
        raise PendingTimeout(watch.message)
    if budget.message:
        raise BudgetSpent(budget.message)
    # Ray Tune returned early (Ctrl-C or SIGTERM), or every trial ended before the signal took effect
    if stopped_by_signal or not all_ended(stage, results):
        raise Interrupted()
    return results


def _tuner(stage, run_name: str, param_space: dict, tune_config, watches: list, budget, race_bound: int | None):
    """The stage's Tuner: restored from `run_name`'s saved state with --resume where there is one, else new, with
    the sweep's callbacks (its MLflow tracker, progress line, watches and the fault matrix's point)."""
    from ray import tune

    sweep = stage.sweep
    options = sweep.options
    trainable = tune.with_resources(
        train, {"cpu": options.cpus_per_trial, "gpu": sweep.gpus_per_trial}
    )
    experiment_path = f"{sweep.storage_path.rstrip('/')}/{run_name}"
    progress = [] if options.verbose else [stage_progress(stage.title, list(stage.axes),
                                                          sweep.definition.selection_metric,
                                                          options.progress_interval, race_bound)]
    callbacks = [stage.tracker, *progress, *watches, budget]
    if os.environ.get(FAULT_ENV):  # the fault matrix's tests only
        from sentsweep.sweep.execution.fault_injection import TrialFaultPoint  # lazy: ray

        callbacks.append(TrialFaultPoint(stage.index))
    if options.resume and tune.Tuner.can_restore(experiment_path):
        return tune.Tuner.restore(
            experiment_path, trainable, resume_errored=True, param_space=param_space
        )
    return tune.Tuner(
        trainable,
        param_space=param_space,
        tune_config=tune_config,
        run_config=tune.RunConfig(
            name=run_name,
            storage_path=sweep.storage_path,
            callbacks=callbacks,
            failure_config=tune.FailureConfig(max_failures=options.max_failures),
            # two, not one: Ray Tune deletes a trial's older checkpoint as it registers a new one and
            # saves its experiment state after every num_to_keep checkpoints, on its next step; a driver
            # killed in between left a state naming a deleted checkpoint, and the resumed trial failed
            # ("does not exist on storage anymore"; ray-project/ray#27790). The older one is deleted
            # once the stage ends (delete_superseded_checkpoints).
            checkpoint_config=tune.CheckpointConfig(num_to_keep=2),
            verbose=tune_verbosity(options.verbose),
        ),
    )


def all_ended(stage, results) -> bool:
    """Whether every trial of a Ray Tune run ended (finished, failed or stopped by the scheduler), as its
    MLflow run says: after an interruption Ray Tune reports every trial TERMINATED, those that never started
    included, while their runs are RUNNING or missing."""
    trial_ids = {result.metrics.get("trial_id") for result in results} - {None}
    if len(trial_ids) < len(results):
        return False  # trials that never reported anything
    runs = stage.sweep.trial_runs(stage.tracker, "reading whether the stage's trials ended")
    ended = runs[runs["ray_trial_id"].isin(trial_ids) & (runs["status"] != "RUNNING")] if len(runs) else runs
    return len(ended) >= len(trial_ids)
