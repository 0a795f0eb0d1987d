"""The models a sweep keeps (`--keep-models`) and the stages chained to them (`Stage.init_from`).

After each stage the models of its best configuration on dev (`--keep-models best`, the default), of all its
trials (`all`) or of none are logged to their trials' MLflow runs (see `sentsweep.tracking.models`); the other
trials' model folders and every checkpoint but a trial's last are deleted. A stage chained to an earlier one
starts each seed from the same seed's logged model of that stage, and its runs carry the parent model's run id
as the tag `parent_model_run_id`.
"""

from __future__ import annotations

from pathlib import Path

from sentsweep.analysis.runs import runs_of_row
from sentsweep.faults import fault_point
from sentsweep.models import saved_pooling
from sentsweep.random_seeds import resolve_seed
from sentsweep.sweep.config.definition import Stage, SweepDefinition
from sentsweep.sweep.config.options import SweepOptions
from sentsweep.tracking.models import LOGGED_MODEL_NAME, log_trial_model, materialize_model
from sentsweep.trainables.loop import MODEL_FOLDER
from sentsweep.trainables.settings import TASK_AXIS


class MissingModels(Exception):
    """A chained stage's earlier stage logged no model for some configuration or seed."""


class KeptModels:
    """The models each stage of one sweep logged, {stage: {table row: {seed: run id}}}, and what a chained stage
    takes from them."""

    def __init__(self, definition: SweepDefinition, options: SweepOptions, tracking_uri: str, seeds: list[int]):
        self.selection_metric = definition.selection_metric
        self.requested = options.keep_models
        self.models_dir = Path(options.output_dir, "models")
        self.tracking_uri = tracking_uri
        self.seeds = seeds
        self.logged: dict[str, dict[tuple, dict[int, str]]] = {}
        # each stage's table row params and best row on the selection metric
        self.row_names: dict[str, list[str]] = {}
        self.best_rows: dict[str, dict[str | None, tuple]] = {}  # {stage: {target task (None: all): best row}}
        # the stages later stages start from, and which of their configurations they need ("best" or "each")
        self.chain_sources = {stage.init_from: stage.init_rows for stage in definition.stages if stage.init_from}

    def policy(self, stage: str) -> str:
        """--keep-models, widened where a later stage starts from this one's models."""
        needed = self.chain_sources.get(stage)
        if needed == "each" or self.requested == "all":
            return "all"
        return "best" if needed == "best" else self.requested

    def keep(self, stage: str, runs, table, results, stage_index: int, writer) -> None:
        """After stage `stage` (its MLflow runs, its table, Ray Tune's results): log the models its policy keeps
        through the sweep's `writer` (`QueuedMlflowWriter.call`), delete the other model folders and every
        superseded checkpoint."""
        self.row_names[stage] = table.row_params
        self.best_rows[stage] = best_rows(table, self.selection_metric)
        self.logged[stage] = self._log_models(runs, table, results, self.policy(stage), stage_index, writer)
        delete_superseded_checkpoints(results)

    def _log_models(self, runs, table, results, policy: str, stage_index: int,
                    writer) -> dict[tuple, dict[int, str]]:
        """Log the selected model of each finished trial the policy keeps (those of the table's best row on the
        selection metric, or all) to its MLflow run, and delete the others' model folders from their Ray
        checkpoints; returns {table row: {seed: run id}} of the models logged."""
        by_trial = {result.metrics.get("trial_id"): result for result in results if result.checkpoint is not None}
        finished = runs[runs["status"] == "FINISHED"]
        rows = {row: runs_of_row(finished, table.row_params, row) for row in table.rows}
        kept: dict[tuple, dict[int, str]] = {}
        best = set(best_rows(table, self.selection_metric).values())
        for row, row_runs in rows.items():
            if policy == "none" or (policy == "best" and row not in best):
                continue
            for _, run in row_runs.iterrows():
                if isinstance(run["logged_model_id"], str):  # logged before the sweep was resumed or extended
                    kept.setdefault(row, {})[int(run["seed"])] = run["run_id"]
                    continue
                result = by_trial.get(run["ray_trial_id"])
                if result is None:
                    continue
                with result.checkpoint.as_directory() as directory:
                    folder = Path(directory) / MODEL_FOLDER
                    if folder.is_dir():
                        writer.call(f"logging the model of run {run['run_id']}", log_trial_model, self.tracking_uri,
                                    run["run_id"], folder, result.metrics)
                        kept.setdefault(row, {})[int(run["seed"])] = run["run_id"]
                        fault_point("model", stage_index)
        kept_trials = {run["ray_trial_id"] for row in kept for _, run in rows[row].iterrows()}
        for trial_id, result in by_trial.items():
            if trial_id not in kept_trials:
                _delete_model_folder(result.checkpoint)
        return kept

    def chained(self, stage: Stage | None, axes: dict, writer) -> tuple[dict, dict]:
        """(axes, chain) of a chained stage: its `chain` sets, for each seed, `model` to the same seed's logged model
        of its earlier stage (of that stage's best configuration on dev, or of each: the axis `pretrained` naming
        the row), its pooling to that model's own, and `parent_model_run_id` to the run that logged it. Where both
        stages train per target task (`target_task` a row of the earlier stage and an axis of this one), each task
        starts from that task's models: its best configuration, or each of its configurations. `MissingModels`
        where the earlier stage logged none for a configuration or seed. The models are read through the sweep's
        `writer` (`QueuedMlflowWriter.call`)."""
        if stage is None or not stage.init_from:
            return axes, {}
        names = self.row_names.get(stage.init_from, [])
        per_task = TASK_AXIS in names and TASK_AXIS in axes
        kept = self.logged.get(stage.init_from, {})
        if stage.init_rows == "best":
            best = self.best_rows.get(stage.init_from, {})
            kept = {row: seeds for row, seeds in kept.items() if row in best.values()}

        def key(row: tuple) -> tuple[str | None, str | None]:
            """(label, task) of an earlier row: its params but the task (None for a best row), and its task."""
            params = dict(zip(names, row))
            task = str(params.pop(TASK_AXIS)) if per_task else None
            label = ", ".join(f"{name}={value}" for name, value in params.items())
            return (label if stage.init_rows == "each" else None), task

        labels = sorted({key(row)[0] for row in kept}, key=str)
        tasks = [str(task) for task in axes[TASK_AXIS]] if per_task else [None]
        found = {(*key(row), seed) for row, seeds in kept.items() for seed in seeds}
        missing = [", ".join(part for part in (label, task and f"{TASK_AXIS}={task}") if part) + f" seed {seed}"
                   for label in labels for task in tasks for seed in self.seeds if (label, task, seed) not in found]
        if not kept or missing:
            raise MissingModels(f"stage {stage.name!r} starts from the models of stage {stage.init_from!r}, which has "
                                f"none for {', '.join(missing) or 'any configuration'} (a failed trial?)")
        runs = {(*key(row), seed): run_id for row, seeds in kept.items() for seed, run_id in seeds.items()}
        folders = {cell: str(writer.call(f"reading the model of run {run_id}", materialize_model, self.tracking_uri,
                                         f"runs:/{run_id}/{LOGGED_MODEL_NAME}", self.models_dir))
                   for cell, run_id in runs.items()}
        poolings = {cell: saved_pooling(folder) for cell, folder in folders.items()}
        if stage.init_rows == "each":
            axes = {"pretrained": labels} | axes

        from ray import tune  # lazy: ray

        def of_trial(table: dict):
            return tune.sample_from(lambda config: table[(config.get("pretrained"),
                                                          config.get(TASK_AXIS) if per_task else None,
                                                          resolve_seed(config))])

        chain = {"model": of_trial(folders), "parent_model_run_id": of_trial(runs)}
        if "pooling" not in axes and None not in poolings.values():
            chain["pooling"] = of_trial(poolings)
        return axes, chain


def best_rows(table, metric: str) -> dict[str | None, tuple]:
    """{target task: its best row on `metric`} where the table's rows are per target task, else {None: the best
    row}."""
    if TASK_AXIS not in table.row_params:
        return {None: table.best[metric]}
    position = table.row_params.index(TASK_AXIS)
    best = {}
    for row in table.rows:
        cell = table.cells.get((row, metric))
        if cell is None or cell.mean != cell.mean:  # no value, or nan
            continue
        task = str(row[position])
        if task not in best or cell.mean > table.cells[(best[task], metric)].mean:
            best[task] = row
    return best


def delete_superseded_checkpoints(results) -> None:
    """Remove every checkpoint of the stage's ended trials but the last (a resume restores a trial from its last).
    Idempotent: a restored stage's results still name the checkpoints its first end deleted, which are skipped."""
    from pyarrow.fs import FileType

    for result in results:
        for checkpoint, _ in result.best_checkpoints or []:
            if result.checkpoint is not None and checkpoint.path != result.checkpoint.path and (
                    checkpoint.filesystem.get_file_info(checkpoint.path).type != FileType.NotFound):
                checkpoint.filesystem.delete_dir(checkpoint.path)


def _delete_model_folder(checkpoint) -> None:
    """Remove the model folder from a trial's Ray checkpoint (local disk or cloud storage alike)."""
    from pyarrow.fs import FileType

    path = f"{checkpoint.path.rstrip('/')}/{MODEL_FOLDER}"
    if checkpoint.filesystem.get_file_info(path).type == FileType.Directory:
        checkpoint.filesystem.delete_dir(path)
