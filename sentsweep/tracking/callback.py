"""MLflow tracking of a sweep: one run per sweep, one child run per configuration, one grandchild per trial.

The driver-side Ray Tune callback means trials need no route to the tracking server, a retried trial keeps
its one run (looked up by its Ray trial id), and SQLite sees a single writer.

The runs follow MLflow's conventions so its UI shows them as it would its own: the source tags (driver
script, git commit, user) on every run, an experiment of kind "custom_model_development" (the UI then opens
on its runs, not on GenAI traces), each trial's data files as dataset inputs with content digests
(`sentsweep.tracking.datasets`), the trial's `system/...` usage metrics as reported
(`sentsweep.trainables.system_metrics`), the bookkeeping metrics beside them (`sentsweep.tracking.names`), and
the sweep's tables as the parent run's description (`sentsweep.tracking.sweep_run`). A trial's run is a child of
its configuration's run (`sentsweep.tracking.configurations`), named by its configuration and seed; the link a
sweep prints opens on its configurations, best first (`sentsweep.tracking.views`). The preparation cache entries a
trial used are tags of its run (`cache_tags`). A trial's params are every setting it resolved to
(`trial_params`); every run carries its provenance (`sentsweep.tracking.provenance`: the code version with the
researcher's own files, sentsweep's version and commit, Python, the packages, and the node: a trial's own, as it
reported it, a configuration's its trials', the sweep's the driver's). A configuration's and the sweep's runs have the
datasets their trials read as inputs too, and the settings a trial reports itself (a trainer script's) as it used
them (`sentsweep.tracking.configurations`, `sentsweep.tracking.used_values`).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from pathlib import Path

from ray.tune import Callback
from ray.tune.result import AUTO_RESULT_KEYS

from sentsweep.plugins import USER_CODE_KEY
from sentsweep.preparation_cache import RESULT_KEY as CACHE_RESULT_KEY
from sentsweep.random_seeds import TRIAL_INDEX_KEY, resolve_seed
from sentsweep.terminal import plain_text
from sentsweep.tracking.configurations import CONFIGURATION_OF_TAG, ConfigurationRuns, address
from sentsweep.tracking.datasets import DATA_FILE_CONTEXTS, DatasetInputs
from sentsweep.tracking.names import mlflow_metric_key, result_step
from sentsweep.tracking.provenance import (
    DRIVER_NODE,
    ConfigurationProvenance,
    provenance_operations,
    with_user_code,
)
from sentsweep.tracking.store import PER_QUERY_ARTIFACT
from sentsweep.tracking.sweep_lookup import RESUMABLE, latest_sweep_run
from sentsweep.tracking.sweep_run import SweepRecord
from sentsweep.tracking.used_values import values_used
from sentsweep.tracking.views import ANSWER_VIEW_TAG, sweep_views, view_tag
from sentsweep.tracking.writer import DEFAULT_WAIT_S, QueuedMlflowWriter, call_waiting
from sentsweep.trainables.environment import ENVIRONMENT_KEY, trial_environment
from sentsweep.trainables.resolved_settings import config_settings, param_text, reported_by_trial
from sentsweep.trainables.session import REPORTED_PARAMS_KEY, STEP_METRICS_KEY
from sentsweep.version import code_version

IGNORED_RESULT_KEYS = set(AUTO_RESULT_KEYS) | {"done", "trial_id", "experiment_tag", "should_checkpoint"}
# Config entries that are bookkeeping, not hyperparameters (the parent model's run becomes a tag, lineage; the
# preparation cache's folder changes no result, and the entries a trial used become tags; the researcher's own
# modules become part of the run's code version). A setting among them is still a param, as every resolved setting.
NON_PARAM_KEYS = {TRIAL_INDEX_KEY, "seeds", "parent_model_run_id", "__point__", "preparation_cache", USER_CODE_KEY}
# Params that do not change what a configuration is: whether its model is kept.
UNHASHED_PARAMS = {"keep_model"}
# The experiment tag the MLflow 3 UI reads to choose an experiment's pages (the server's JS bundle: its
# ExperimentKind enum, "Machine learning" = runs first); without it the UI guesses a kind from what the experiment
# holds, and may open it on GenAI traces.
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
EXPERIMENT_KIND = "custom_model_development"
# Why a trial run that a sweep's end finds RUNNING is ended (see SweepTracker.finish).
LOST_TRIAL_REASON = ("its Ray trial was not in the experiment state the sweep resumed from (the driver died before Ray "
                     "Tune saved it), so the trial never ran again under this run")


def config_hash(config: dict) -> str:
    """Hash of a trial's hyperparameters without its seed: the trials of one config over seeds share it. A trial
    that starts from another run's model (`parent_model_run_id`, a chained stage) leaves its `model` out too:
    that is the same seed's model of the earlier stage, one per seed like the seed itself."""
    params = {k: v for k, v in config.items() if k not in NON_PARAM_KEYS | UNHASHED_PARAMS | per_seed_keys(config)}
    return hashlib.sha1(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:12]


def per_seed_keys(config: dict) -> set[str]:
    """The settings a configuration's trials differ in: the seed, and in a chained stage the seed's model."""
    return {"seed", "model"} if config.get("parent_model_run_id") else {"seed"}


def trial_params(config: dict) -> dict:
    """The MLflow params of a trial: its config's entries (the seed included) and every setting it resolves to,
    defaults included (`sentsweep.trainables.resolved_settings`: a data file the method does not read as none)."""
    reported = reported_by_trial(config)  # what a trainer script really used comes with its first result
    settings = config_settings(config)
    # a data file that is no setting of the trial's method (a corpus beside BM25) is not its data: no param, no input
    unread = {key for key in DATA_FILE_CONTEXTS if key not in settings} if settings else set()
    params = {k: v for k, v in config.items() if k not in NON_PARAM_KEYS | reported | unread} | settings
    if params.get("w", 0) is None:  # a method of one objective, in a stage beside methods of two: it has no w
        del params["w"]
    params["seed"] = resolve_seed(config)
    return params


def _param_texts(params: dict) -> dict[str, str]:
    """Params as MLflow keeps them (`param_text`: JSON for a list or a mapping, else the text, cut at MLflow's
    length)."""
    return {k: param_text(v) for k, v in params.items()}


def selection_tag(config: dict) -> str:
    """Which split chose the checkpoint the trial's final scores belong to."""
    if config.get("select_checkpoint") == "last":
        return "none (the last checkpoint after a fixed number of steps)"
    if config.get("select_checkpoint") == "best_task_dev":
        task = config.get("selection_task")
        return f"best_task_dev (the dev split of task {task}, {(config.get('eval_tasks') or {}).get(task)})"
    if config.get("select_checkpoint") == "validation_loss" and config.get("validation_file"):
        return f"validation_loss (the method's loss on the sentences of {config['validation_file']})"
    if config.get("select_checkpoint") == "validation_loss":
        return (f"validation_loss (the method's loss on {config.get('validation_size', 1000)} corpus sentences "
                "held out of training)")
    return f"best_sts_dev ({config.get('eval_format', 'stsb')} dev split of {config.get('dev_file')})"


def cache_tags(entries: dict) -> dict[str, str]:
    """The tags naming the preparation cache entries a trial used (its report's `RESULT_KEY`, see
    `sentsweep.preparation_cache`): `cache.<stage>` = the entry's key, `cache.<stage>.status` = hit, computed,
    recomputed (the entry was corrupt) or why it was not cached."""
    tags = {}
    for stage, use in entries.items():
        if use.get("key"):
            tags[f"cache.{stage}"] = use["key"]
        tags[f"cache.{stage}.status"] = use["status"]
    return tags


class SweepTracker(Callback):
    """Ray Tune callback: a parent MLflow run for the sweep and exactly one child run per trial.

    With `resume`, the latest unfinished parent run of this sweep is reused (with `extend`, the latest one,
    finished or not: new trials join it), and a trial that already has a run (found by its Ray trial id) keeps
    logging to it, so a resumed sweep has no duplicate runs. Writes
    go through a `QueuedMlflowWriter`, so a tracking server lost mid-sweep loses no result.
    """

    def __init__(self, tracking_uri: str, experiment_name: str, sweep_name: str, pending_dir: str | Path,
                 resume: bool = False, extend: bool = False, wait_s: float = DEFAULT_WAIT_S) -> None:
        from mlflow.tracking import MlflowClient
        from mlflow.tracking.context.registry import resolve_tags

        # MLflow's client opens its store as it is made: a store that cannot be reached is waited for from here
        client = call_waiting(tracking_uri, "opening the tracking store",
                              lambda: MlflowClient(tracking_uri=tracking_uri), wait_s=wait_s)
        self.sweep_name = sweep_name
        self.version = code_version()
        # mlflow.source.name (the driver script), .type, .git.commit, mlflow.user, ...: what MLflow itself tags
        # a run started here with; resolved once, since the driver's script and checkout stay the same.
        self.source_tags = resolve_tags()
        # before the sweep's writer exists, the same bounded wait for a store that went away (see its module)
        experiment_id = call_waiting(tracking_uri, "opening the experiment", _experiment_id, client, experiment_name,
                                     wait_s=wait_s)
        latest, self.parent_run_id, self.run_name = _open_sweep_run(
            tracking_uri, client, experiment_id, sweep_name, self.source_tags | {
                "sweep": sweep_name, "code_version": self.version, "role": "sweep"}, resume, extend, wait_s)
        unfinished = [latest] if latest is not None else []
        # takes over the writes a stopped or killed driver of this sweep run left queued in its pending file, and
        # writes them before anything else
        self.writer = QueuedMlflowWriter(
            tracking_uri, experiment_id, self.parent_run_id,
            Path(pending_dir) / f"mlflow-pending-{self.parent_run_id[:8]}.jsonl", wait_s=wait_s,
        )
        if self.writer.pending:
            print(f"writing the {self.writer.describe()}, left by the sweep's last driver")
        if unfinished:
            self.writer.call("reopening the sweep's run", self.writer.client.update_run, self.parent_run_id,
                             status="RUNNING")
        # the driver's code and environment (its own files: `record_user_code`)
        for operation in provenance_operations(None, trial_environment(), DRIVER_NODE):
            self.writer.submit(operation)
        self.configurations = ConfigurationRuns(self.writer, self.source_tags | {
            "sweep": sweep_name, "code_version": self.version})
        self.configuration_provenance = ConfigurationProvenance()
        self.record = SweepRecord(self.writer, unfinished[0].data.params if unfinished else {})
        self.reported_names: frozenset[str] = frozenset()  # settings the sweep's trials report (record_values_used)
        # of the saved view the printed link opens (sentsweep.tracking.views): the sweep's configurations, or in a
        # sweep of several stages the latest stage's
        self.view_key = self.parent_run_id
        self._hashes: dict[str, str] = {}  # Ray trial id -> config hash
        self.dataset_inputs = DatasetInputs(self.writer)

    def log_sweep_metrics(self, metrics: dict) -> None:
        """Metrics of the sweep as a whole (for example the untrained baseline), on the parent run."""
        now = int(time.time() * 1000)
        self.writer.submit({"op": "metrics", "trial": None,
                            "metrics": [(mlflow_metric_key(key), float(value), now, 0)
                                        for key, value in metrics.items()]})

    def record_user_code(self, user_code: list[dict] | None) -> None:
        """The researcher's own modules the sweep's trials run ({path, digest} each, `sentsweep.plugins`) in the sweep
        run's code version, as in its trials'."""
        self.tag_sweep("code_version", with_user_code(self.version, user_code))

    def record_values_used(self, names: frozenset[str], wait_s: float | None = None) -> None:
        """The sweep run's params `names` (settings its trials report themselves, `sentsweep.tracking.used_values`)
        as its trials recorded them; `finish` records `reported_names` so."""
        if not names:
            return
        runs = self.writer.call("reading the settings the sweep's trials used", self.writer.client.search_runs,
                                [self.writer.experiment_id], f"tags.sweep_run_id = '{self.parent_run_id}'",
                                max_results=10_000, wait_s=wait_s)
        self.record.log_params(values_used([run.data.params for run in runs], names))

    def tag_sweep(self, key: str, value: str) -> None:
        """A tag of the sweep's parent run."""
        self.writer.submit({"op": "tag", "trial": None, "key": key, "value": value})

    def begin_stage(self, axes: list[str], metrics: list[str], selection_metric: str, summarize,
                    stage: str | None = None) -> None:
        """A stage starts: its configuration runs are named by `axes`, summarized on `metrics` (`summarize`:
        values -> {statistic: value}), and the saved views of the sweep show its axes beside the earlier stages'
        (and the param `stage`, in a sweep of several: `stage` names this one)."""
        self.configurations.begin_stage(axes, metrics, summarize)
        self._view_axes = list(dict.fromkeys(getattr(self, "_view_axes", []) + (["stage"] if stage else [])
                                             + self.configurations.axes))
        common = getattr(self, "_common_axes", None)  # the axes every stage so far sweeps
        self._common_axes = [axis for axis in (self.configurations.axes if common is None else common)
                             if axis in self.configurations.axes]
        views = sweep_views(self.parent_run_id, self.run_name, selection_metric, metrics, self._view_axes, stage,
                            self.configurations.axes, self._common_axes)
        if stage:  # the printed link opens the latest stage's view (the final one's, at the end)
            self.view_key = views[-1][0]
        for key, name, state in views:
            tag, value = view_tag(key, name, state)
            self.writer.submit({"op": "experiment_tag", "trial": None, "key": tag, "value": value})
        self.tag_sweep(ANSWER_VIEW_TAG, self.view_key)

    def on_trial_start(self, iteration, trials, trial, **info):
        config = trial.config
        params = trial_params(config)
        key = self._hashes.setdefault(trial.trial_id, config_hash(config))
        code = with_user_code(self.version, config.get(USER_CODE_KEY))
        parent, name = self.configurations.trial_started(key, config, {
            name: text for name, text in _param_texts(params).items() if name not in per_seed_keys(config)},
            resolve_seed(config), {"code_version": code})
        self.writer.submit({
            "op": "create",
            "trial": trial.trial_id,
            "name": name,
            "parent": parent,
            "tags": self.source_tags | {
                "sweep": self.sweep_name,
                "sweep_run_id": self.parent_run_id,
                "method": str(config.get("method")),
                "seed": str(resolve_seed(config)),
                "config_hash": key,
                "code_version": code,
                "ray_trial_id": trial.trial_id,
                "selected_on": selection_tag(config),
            } | ({"parent_model_run_id": config["parent_model_run_id"]} if config.get("parent_model_run_id") else {}),
            "params": _param_texts(params),
            "config": json.loads(json.dumps(params, default=str)),
        })
        self.configurations.trial_nested(trial.trial_id)
        self.dataset_inputs.trial_read(trial.trial_id, key, params)

    def on_trial_result(self, iteration, trials, trial, result, **info):
        step = result_step(result)
        now = int(time.time() * 1000)
        metrics = [
            (mlflow_metric_key(key), float(value), now, step)
            for key, value in result.items()
            if key not in IGNORED_RESULT_KEYS
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
            and math.isfinite(value)
        ]
        metrics += [(key, float(value), now, int(at)) for key, value, at in result.get(STEP_METRICS_KEY) or []]
        self.writer.submit({"op": "metrics", "trial": trial.trial_id, "metrics": metrics})
        key = self._hashes.setdefault(trial.trial_id, config_hash(trial.config))
        if result.get(ENVIRONMENT_KEY):  # the trial's first report: the node, devices and packages it runs with
            for operation in provenance_operations(trial.trial_id, result[ENVIRONMENT_KEY]) + \
                    self.configuration_provenance.report(address(key), trial.trial_id, result[ENVIRONMENT_KEY]):
                self.writer.submit(operation)
        if result.get(REPORTED_PARAMS_KEY):  # settings only the trial knows (what a trainer script really used)
            reported = result[REPORTED_PARAMS_KEY]
            self.writer.submit({"op": "params", "trial": trial.trial_id,
                                "params": {k: param_text(v) for k, v in reported.items()}})
            # the configuration's: its resolved settings (not the trainer's every argument, `trainer.*`)
            self.configurations.trial_reported(key, resolve_seed(trial.config), {
                k: param_text(v) for k, v in reported.items() if k in reported_by_trial(trial.config)})
            self.writer.submit({"op": "artifact", "trial": trial.trial_id, "file": "reported_config.json",
                                "content": json.loads(json.dumps(reported, default=str))})
            self.dataset_inputs.trial_read(trial.trial_id, key, reported)
        if result.get("per_query"):
            self.writer.submit({"op": "artifact", "trial": trial.trial_id, "file": PER_QUERY_ARTIFACT,
                                "content": result["per_query"]})
        for name, content in (result.get("artifacts") or {}).items():  # e.g. AugSBERT's silver_scores.json
            self.writer.submit({"op": "artifact", "trial": trial.trial_id, "file": name, "content": content})
        for key, value in cache_tags(result.get(CACHE_RESULT_KEY) or {}).items():
            self.writer.submit({"op": "tag", "trial": trial.trial_id, "key": key, "value": value})

    def on_trial_complete(self, iteration, trials, trial, **info):
        if _stopped_early(trial):
            self.writer.submit({"op": "tag", "trial": trial.trial_id, "key": "stopped_early", "value": "true"})
            self.writer.submit({"op": "terminate", "trial": trial.trial_id, "status": "KILLED"})
            return
        self.writer.submit({"op": "terminate", "trial": trial.trial_id, "status": "FINISHED"})
        # its configuration's statistics on the seeds finished so far: this Ray Tune run's (a restored one's too)
        key = self._hashes.setdefault(trial.trial_id, config_hash(trial.config))
        finished = {resolve_seed(other.config): other.last_result for other in [*trials, trial]
                    if (other is trial or other.status == "TERMINATED" and not _stopped_early(other))
                    and self._hashes.setdefault(other.trial_id, config_hash(other.config)) == key}
        self.configurations.trial_finished(key, finished)

    def on_trial_error(self, iteration, trials, trial, **info):
        reason = _error_text(trial)
        self.writer.submit({"op": "tag", "trial": trial.trial_id, "key": "failure_reason", "value": reason})
        self.writer.submit({"op": "terminate", "trial": trial.trial_id, "status": "FAILED"})

    def end_interrupted(self) -> list[str]:
        """End the runs a stopped driver left RUNNING (its trials' and the sweep's) as KILLED, the trials' with the
        tag `interrupted`; `--resume` reopens them. Returns what those trials were. (Found in MLflow, not in this
        object: a restored Ray Tune run calls back a copy of it, restored with the experiment's state.) One attempt,
        no wait (the driver is being stopped): `MlflowUnavailable` when the store cannot be reached, every run then
        left as it is and the writes kept in the pending file."""
        stopped = self._end_running_trial_runs({"interrupted": "true"}, wait_s=0)
        self.writer.call("ending the sweep's run KILLED", self.writer.client.set_terminated, self.parent_run_id,
                         status="KILLED", wait_s=0)
        return stopped

    def end_failed(self, reason: str) -> None:
        """End the sweep's run FAILED (tag `failure_reason`) after an error outside any trial, and its trials' runs
        left RUNNING KILLED (tag `interrupted`); `--resume` reopens them. One attempt, as `end_interrupted`."""
        self._end_running_trial_runs({"interrupted": "true"}, wait_s=0)
        self.writer.submit({"op": "tag", "trial": None, "key": "failure_reason", "value": plain_text(reason)[:5000]})
        self.writer.call("ending the sweep's run FAILED", self.writer.client.set_terminated, self.parent_run_id,
                         status="FAILED", wait_s=0)

    def finish(self) -> bool:
        """Write what is still queued and mark the sweep's parent run finished, waiting for a store that went away
        as long as the writer's bound (`MlflowUnavailable` past it, the sweep's run still RUNNING). True.

        The sweep's run ends by a call, never a queued operation: a resumed sweep must find it unfinished until every
        write before its end is in the store.

        A trial run still RUNNING then has lost its trial: a driver killed before Ray Tune saved the trial in its
        experiment state left the run, and the resumed sweep, which never knew the trial, ran its configuration
        and seed again (or, searching, another). Such runs end KILLED with the tags `interrupted` and `lost_trial`,
        rather than stay RUNNING in MLflow for ever; the tables count them as runs left out."""
        self._end_running_trial_runs({"interrupted": "true", "lost_trial": LOST_TRIAL_REASON})
        self.record_values_used(self.reported_names)
        self.log_sweep_metrics({"mlflow_write_seconds": self.writer.write_seconds})  # the writer's docstring
        self.writer.call("ending the sweep's run FINISHED", self.writer.client.set_terminated, self.parent_run_id,
                         status="FINISHED")
        return True

    def _end_running_trial_runs(self, tags: dict[str, str], wait_s: float | None = None) -> list[str]:
        """End this sweep's trial runs that are RUNNING as KILLED, with `tags`, and its configuration runs still
        RUNNING (a stage without its table: they end with it, `ConfigurationRuns.stage_done`) as KILLED; returns
        what those trials were."""
        client = self.writer.client
        running = self.writer.call(
            "finding the sweep's trial runs left RUNNING", client.search_runs, [self.writer.experiment_id],
            f"tags.sweep_run_id = '{self.parent_run_id}' and attributes.status = 'RUNNING'", wait_s=wait_s)
        configurations = self.writer.call(
            "finding the sweep's configuration runs left RUNNING", client.search_runs, [self.writer.experiment_id],
            f"tags.{CONFIGURATION_OF_TAG} = '{self.parent_run_id}' and attributes.status = 'RUNNING'", wait_s=wait_s)
        for run in configurations:
            self.writer.submit({"op": "terminate", "trial": address(run.data.tags["config_hash"]), "status": "KILLED"})
        stopped = []
        for run in running:
            run_tags = run.data.tags
            for key, value in tags.items():
                self.writer.submit({"op": "tag", "trial": run_tags["ray_trial_id"], "key": key, "value": value})
            self.writer.submit({"op": "terminate", "trial": run_tags["ray_trial_id"], "status": "KILLED"})
            stopped.append(f"{run_tags.get('ray_trial_id')}: {run_tags.get('method')} seed {run_tags.get('seed')} "
                           f"(config {run_tags.get('config_hash')})")
        return stopped


def _open_sweep_run(tracking_uri: str, client, experiment_id: str, sweep_name: str, tags: dict, resume: bool,
                    extend: bool, wait_s: float):
    """(the run reopened or None, its id, its name): with `resume`, the latest unfinished run of the sweep (with
    `extend`, the latest, finished or not), else a new run tagged `tags`, named by the sweep and the time (a name
    the experiment already has gets the run id's head, `_unique_run_name`)."""
    reopened = RESUMABLE + (("FINISHED",) if extend else ())
    latest = call_waiting(tracking_uri, "finding the sweep's run to resume", latest_sweep_run, client,
                          experiment_id, sweep_name, reopened, wait_s=wait_s) if resume or extend else None
    if latest is not None:  # a crashed driver's sweep (RUNNING), an interrupted or failed one, one extended (FINISHED)
        return latest, latest.info.run_id, latest.info.run_name
    name = f"{sweep_name}-{time.strftime('%Y%m%d-%H%M%S')}"
    run_id = call_waiting(tracking_uri, "creating the sweep's run", client.create_run, experiment_id, run_name=name,
                          tags=tags, wait_s=wait_s).info.run_id
    return None, run_id, _unique_run_name(tracking_uri, client, experiment_id, run_id, name, wait_s)


def _experiment_id(client, name: str) -> str:
    """The experiment `name`, created if need be, with its kind tag (unless it has a kind already). Two sweeps
    that start together may both find it missing: the one whose creation the store refuses as existing takes the
    other's."""
    from mlflow.exceptions import MlflowException

    experiment = client.get_experiment_by_name(name)
    if experiment is None:
        try:
            return client.create_experiment(name, artifact_location=artifact_location(client.tracking_uri, name),
                                            tags={EXPERIMENT_KIND_TAG: EXPERIMENT_KIND})
        except MlflowException as error:
            experiment = client.get_experiment_by_name(name)
            if error.error_code != "RESOURCE_ALREADY_EXISTS" or experiment is None:
                raise
    if EXPERIMENT_KIND_TAG not in experiment.tags:
        client.set_experiment_tag(experiment.experiment_id, EXPERIMENT_KIND_TAG, EXPERIMENT_KIND)
    return experiment.experiment_id


def _unique_run_name(tracking_uri: str, client, experiment_id: str, run_id: str, name: str, wait_s: float) -> str:
    """`name`, the sweep's new run's, where no other run of the experiment has it; else `name` and the head of
    the run's id, which the run is renamed to. Looked up after the run exists, so of two sweeps started in the
    same second the later one at least sees the earlier and takes the suffix."""
    namesakes = call_waiting(tracking_uri, "naming the sweep's run", client.search_runs, [experiment_id],
                             f"attributes.run_name = '{name}'", max_results=2, wait_s=wait_s)
    if all(run.info.run_id == run_id for run in namesakes):
        return name
    unique = f"{name}-{run_id[:6]}"
    call_waiting(tracking_uri, "naming the sweep's run", client.update_run, run_id, name=unique, wait_s=wait_s)
    return unique


def artifact_location(tracking_uri: str, experiment_name: str) -> str | None:
    """Where a new experiment's artifacts (tables, per-query outcomes, models) go: beside a SQLite store's file,
    in `mlartifacts/<experiment>` (MLflow's own default is ./mlruns of whichever folder the driver started in,
    shared by every store's experiment 1); a server's own artifact store otherwise (None)."""
    if not tracking_uri.startswith("sqlite:///"):
        return None
    folder = Path(tracking_uri[len("sqlite:///"):]).resolve().parent / "mlartifacts" / experiment_name
    return folder.as_uri()


def _error_text(trial) -> str:
    """The trial's traceback from the error file Ray Tune writes beside it (the last failure's tail), as plain text
    (Ray's colour codes removed)."""
    path = trial.error_file
    if path and Path(path).is_file():
        return plain_text(Path(path).read_text(encoding="utf-8", errors="replace")).strip()[-5000:]
    return "trial raised an error (no error file)"


def _stopped_early(trial) -> bool:
    """A trial ended by a scheduler before its last step (ASHA, median stopping)."""
    result = trial.last_result
    return "step" in result and "total_steps" in result and result["step"] < result["total_steps"]
