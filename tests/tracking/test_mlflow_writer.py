"""Queued MLflow writes: kept in order while the store is away, replayed later, never duplicating a run; reads that
wait for the store within a bound, then stop naming what is kept; the runs and queued writes a killed driver left
behind, completed, ended or written when the sweep is resumed."""

import gc
import json
import pickle
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from mlflow.tracking import MlflowClient

from sentsweep.tracking.callback import LOST_TRIAL_REASON, SweepTracker
from sentsweep.tracking.writer import (
    MlflowUnavailable,
    QueuedMlflowWriter,
    call_waiting,
    describe_queue,
    main as replay_main,
)
from tests.helpers.cluster_helpers import PROJECT, free_port, sqlite_store


def test_writes_queue_while_the_server_is_away_and_replay_later(tmp_path, capsys):
    store = sqlite_store(tmp_path)
    client = MlflowClient(store)
    experiment = client.create_experiment("queued")
    parent = client.create_run(experiment, tags={"role": "sweep"}).info.run_id
    pending = tmp_path / "pending.jsonl"
    unreachable = f"http://127.0.0.1:{free_port()}"
    writer = QueuedMlflowWriter(unreachable, experiment, parent, pending, retry_interval_s=60)
    operations = [
        {"op": "create", "trial": "t1", "name": "simcse-t1", "tags": {"ray_trial_id": "t1", "sweep_run_id": parent},
         "params": {"lr": "0.001"}, "config": {"lr": 0.001}},
        {"op": "metrics", "trial": "t1", "metrics": [["sts_dev", 50.0, 0, 0], ["sts_dev", 61.5, 1, 20]]},
        {"op": "terminate", "trial": "t1", "status": "FINISHED"},
    ]
    for operation in operations:
        writer.submit(operation)
    assert writer.pending == 3
    saved = pending.read_text().splitlines()
    assert json.loads(saved[0])["parent_run_id"] == parent and len(saved) == 4

    for _ in range(2):  # replaying twice must not create a second run
        assert replay_main([str(pending), "--tracking-uri", store]) == 0
        assert "all queued operations written" in capsys.readouterr().out
        assert not pending.exists()
        pending.write_text("\n".join(saved) + "\n")
    runs = [r for r in client.search_runs([experiment]) if r.info.run_id != parent]
    assert len(runs) == 1
    run = runs[0]
    assert run.info.status == "FINISHED" and run.data.params == {"lr": "0.001"}
    history = client.get_metric_history(run.info.run_id, "sts_dev")
    assert sorted((m.step, m.value) for m in history) == [(0, 50.0), (20, 61.5)]


def test_a_run_left_without_params_by_a_killed_driver_gets_them_when_its_trial_starts_again(tmp_path):
    store = sqlite_store(tmp_path)
    client = MlflowClient(store)
    experiment = client.create_experiment("resumed")
    parent = client.create_run(experiment, tags={"role": "sweep"}).info.run_id
    create = {"op": "create", "trial": "t1", "name": "tsdae-t1", "tags": {"ray_trial_id": "t1", "sweep_run_id": parent},
              "params": {"noise_ratio": "0.6", "pooling": "cls", "seed": "1"}, "config": {"noise_ratio": 0.6}}
    # what a driver killed right after creating the trial's run leaves: the run and its tags, nothing more
    orphan = client.create_run(experiment, run_name=create["name"], tags=create["tags"]).info.run_id
    client.set_terminated(orphan, status="KILLED")

    resumed = QueuedMlflowWriter(store, experiment, parent, tmp_path / "pending.jsonl")
    for _ in range(2):  # the resumed trial's start, then a retry of it: params that are there already are accepted
        resumed.submit(dict(create))
    assert resumed.pending == 0
    runs = [r for r in client.search_runs([experiment]) if r.info.run_id != parent]
    assert [r.info.run_id for r in runs] == [orphan]
    assert runs[0].data.params == create["params"] and runs[0].info.status == "RUNNING"
    config_file = client.download_artifacts(orphan, "config.json", str(tmp_path))
    assert json.loads(Path(config_file).read_text()) == create["config"]


def test_a_run_whose_trial_the_resumed_sweep_never_knew_ends_killed_not_running_for_ever(tmp_path, monkeypatch):
    # the driver script, as a sweep has it (MLflow resolves a process's source and git tags once, from sys.argv)
    monkeypatch.setattr(sys, "argv", [str(PROJECT / "sweeps" / "tsdae_deletion.py")])
    store = sqlite_store(tmp_path)
    config = dict(method="tsdae", seed=1, noise_ratio=0.6, pooling="cls")
    trial = {trial_id: SimpleNamespace(trial_id=trial_id, config=config, error_file=None,
                                       last_result={"step": 120, "total_steps": 120}) for trial_id in "abc"}
    killed = SweepTracker(store, "lost", "tsdae_deletion", tmp_path / "out")
    for started in (trial["a"], trial["b"]):
        killed.on_trial_start(0, [], started)
    killed.on_trial_complete(0, [], trial["a"])
    # the driver dies; Ray Tune's saved state has trial a, not b: the resumed sweep runs b's cell as trial c
    resumed = SweepTracker(store, "lost", "tsdae_deletion", tmp_path / "out", resume=True)
    assert resumed.parent_run_id == killed.parent_run_id
    resumed.on_trial_start(0, [], trial["c"])
    resumed.on_trial_complete(0, [], trial["c"])
    assert resumed.finish()

    client = MlflowClient(store)
    runs = {run.data.tags["ray_trial_id"]: run for run in client.search_runs(
        [resumed.writer.experiment_id], f"tags.sweep_run_id = '{resumed.parent_run_id}'")}
    assert {trial_id: run.info.status for trial_id, run in runs.items()} == {
        "a": "FINISHED", "b": "KILLED", "c": "FINISHED"}
    assert runs["b"].data.tags["lost_trial"] == LOST_TRIAL_REASON and runs["b"].data.tags["interrupted"] == "true"
    assert "lost_trial" not in runs["a"].data.tags | runs["c"].data.tags
    assert client.get_run(resumed.parent_run_id).info.status == "FINISHED"


def test_sweeps_started_in_the_same_second_get_run_names_of_their_own(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(PROJECT / "sweeps" / "tsdae_deletion.py")])
    monkeypatch.setattr(time, "strftime", lambda *_: "20260101-120000")  # every sweep started in the same second
    store = sqlite_store(tmp_path)
    trackers = [SweepTracker(store, "same second", "tsdae_deletion", tmp_path / "out") for _ in range(3)]
    client = MlflowClient(store)
    names = {run.info.run_id: run.info.run_name for run in client.search_runs([trackers[0].writer.experiment_id])}
    assert len(names) == 3 and len(set(names.values())) == 3
    assert names == {tracker.parent_run_id: tracker.run_name for tracker in trackers}
    assert trackers[0].run_name == "tsdae_deletion-20260101-120000"
    assert [tracker.run_name for tracker in trackers[1:]] == [
        f"tsdae_deletion-20260101-120000-{tracker.parent_run_id[:6]}" for tracker in trackers[1:]]
    for tracker in trackers:
        assert tracker.finish()


def test_a_failed_trials_reason_is_tagged_as_plain_text(tmp_path, monkeypatch):
    """Ray writes a worker's traceback in colour; the failure_reason tags hold the text alone."""
    monkeypatch.setattr(sys, "argv", [str(PROJECT / "sweeps" / "tsdae_deletion.py")])
    store = sqlite_store(tmp_path)
    error_file = tmp_path / "error.txt"
    error_file.write_text("\x1b[36mray::ImplicitFunc.train()\x1b[39m (pid=7)\n"
                          "\x1b[1;31mFloatingPointError\x1b[0m: loss is nan at step 0\n", encoding="utf-8")
    trial = SimpleNamespace(trial_id="a", config=dict(method="tsdae", seed=0, noise_ratio=0.6, pooling="cls"),
                            error_file=str(error_file), last_result={})
    tracker = SweepTracker(store, "coloured", "tsdae_deletion", tmp_path / "out")
    tracker.on_trial_start(0, [], trial)
    tracker.on_trial_error(0, [], trial)
    tracker.end_failed("\x1b[31mStageFailed\x1b[0m: no trial of this stage finished")
    tracker.writer.flush()
    client = MlflowClient(store)
    reasons = {run.data.tags.get("role", "trial"): run.data.tags["failure_reason"]
               for run in client.search_runs([tracker.writer.experiment_id]) if "failure_reason" in run.data.tags}
    assert reasons == {"trial": "ray::ImplicitFunc.train() (pid=7)\nFloatingPointError: loss is nan at step 0",
                       "sweep": "StageFailed: no trial of this stage finished"}


def test_the_time_writes_take_is_counted_and_logged_on_the_sweep_run(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(PROJECT / "sweeps" / "tsdae_deletion.py")])
    store = sqlite_store(tmp_path)
    tracker = SweepTracker(store, "timed", "tsdae_deletion", tmp_path / "out")
    apply, pause = tracker.writer._apply, 0.1  # every write made this much slower

    def slow_apply(operation):
        time.sleep(pause)
        apply(operation)

    monkeypatch.setattr(tracker.writer, "_apply", slow_apply)
    trial = SimpleNamespace(trial_id="a", config=dict(method="tsdae", seed=0), error_file=None,
                            last_result={"step": 1, "total_steps": 1})
    tracker.on_trial_start(0, [], trial)  # three writes: the run, its metrics, its end
    tracker.on_trial_result(0, [], trial, {"sts_dev": 50.0, "step": 1})
    tracker.on_trial_complete(0, [], trial)
    assert tracker.writer.write_seconds >= 3 * pause
    assert tracker.finish()
    logged = MlflowClient(store).get_run(tracker.parent_run_id).data.metrics["system/mlflow_write_seconds"]
    # the figure as the sweep ended: every write before it (its own write, queued, and the sweep run's end come after)
    assert 3 * pause <= logged <= tracker.writer.write_seconds


def queued_trial(writer: QueuedMlflowWriter, parent: str, trial: str = "t1") -> None:
    """A trial's run, metrics and end, submitted to `writer`."""
    for operation in (
        {"op": "create", "trial": trial, "name": f"tsdae-{trial}", "tags": {"ray_trial_id": trial,
                                                                          "sweep_run_id": parent},
         "params": {"lr": "0.001"}, "config": {"lr": 0.001}},
        {"op": "metrics", "trial": trial, "metrics": [["sts_dev", 61.5, 1, 20]]},
        {"op": "terminate", "trial": trial, "status": "FINISHED"},
    ):
        writer.submit(operation)


def test_a_write_that_fails_on_the_way_is_tried_again_and_one_the_store_refuses_is_set_aside(tmp_path, monkeypatch):
    """A trial's run is not dropped for an exception in MLflow's client while the store answers (the fault matrix's
    multistage-trial:0-OUTAGE lost one: a search in the replay of its pending file failed in MLflow's client with
    KeyError '_MLFLOW_TELEMETRY_SESSION_ID', the name of an environment variable of MLflow's telemetry): the write is
    tried again. A write the store refuses (a 4xx kind) is set aside at once, and one that keeps failing on the way
    after ATTEMPTS_ON_THE_WAY tries."""
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import INVALID_PARAMETER_VALUE

    import sentsweep.tracking.writer as writer_module

    monkeypatch.setattr(writer_module, "RETRY_PAUSE_S", 0.0)
    store = sqlite_store(tmp_path)
    client = MlflowClient(store)
    experiment = client.create_experiment("flaky")
    parent = client.create_run(experiment, tags={"role": "sweep"}).info.run_id
    writer = QueuedMlflowWriter(store, experiment, parent, tmp_path / "pending.jsonl")
    search, set_tag = writer.client.search_runs, writer.client.set_tag
    on_the_way = MlflowException("API request to http://127.0.0.1:5000/api/2.0/mlflow/runs/search failed with "
                                 "exception '_MLFLOW_TELEMETRY_SESSION_ID'")  # INTERNAL_ERROR: HTTP 500
    failures = [on_the_way, on_the_way]

    def flaky_search(*args, **kwargs):
        if failures:
            raise failures.pop(0)
        return search(*args, **kwargs)

    refusals = []

    def refusing_set_tag(run_id, key, value):
        if key == "refused":
            refusals.append(key)
            raise MlflowException("Invalid tag name: 'refused'", error_code=INVALID_PARAMETER_VALUE)
        return set_tag(run_id, key, value)

    monkeypatch.setattr(writer.client, "search_runs", flaky_search)
    monkeypatch.setattr(writer.client, "set_tag", refusing_set_tag)
    queued_trial(writer, parent)  # its create fails on the way twice, then goes through
    writer.submit({"op": "tag", "trial": "t1", "key": "refused", "value": "x"})
    writer.submit({"op": "tag", "trial": "t1", "key": "kept", "value": "y"})
    assert writer.pending == 0 and not failures and refusals == ["refused"]  # refused at the first try
    run, = client.search_runs([experiment], f"tags.sweep_run_id = '{parent}'")
    assert run.info.status == "FINISHED" and run.data.metrics == {"sts_dev": 61.5} and run.data.tags["kept"] == "y"
    rejected = [json.loads(line) for line in (tmp_path / "pending.rejected.jsonl").read_text().splitlines()]
    assert [entry["operation"]["key"] for entry in rejected] == ["refused"]

    failures.extend([on_the_way] * writer_module.ATTEMPTS_ON_THE_WAY)  # failing on the way every time: set aside
    writer.submit({"op": "create", "trial": "t2", "name": "tsdae-t2", "tags": {"ray_trial_id": "t2",
                                                                               "sweep_run_id": parent}})
    assert writer.pending == 0 and not failures
    rejected = [json.loads(line) for line in (tmp_path / "pending.rejected.jsonl").read_text().splitlines()]
    assert rejected[-1]["operation"]["trial"] == "t2" and "_MLFLOW_TELEMETRY_SESSION_ID" in rejected[-1]["error"]


def test_a_read_waits_for_the_store_within_its_bound_then_stops_naming_what_is_kept(tmp_path):
    pending = tmp_path / "out" / "mlflow-pending-run12345.jsonl"
    unreachable = f"http://127.0.0.1:{free_port()}"
    writer = QueuedMlflowWriter(unreachable, "1", "run12345", pending, retry_interval_s=0.05, wait_s=0.2)
    queued_trial(writer, "run12345")
    calls = []
    with pytest.raises(MlflowUnavailable) as stopped:
        writer.call("reading the stage's trial runs", calls.append, "never")
    assert calls == []  # a read runs only once every queued write is in the store
    assert str(stopped.value) == (
        f"MLflow at {unreachable} stayed unreachable for 0.2 s while reading the stage's trial runs: the sweep's "
        f"MLflow run run12345 stays RUNNING, and 3 queued writes (1 run starts, 1 metric batches, 1 run ends) of "
        f"1 trial runs in {pending}")
    assert "\n" not in str(stopped.value)
    assert len(pending.read_text().splitlines()) == 4  # kept: the header and the three writes


def test_a_read_is_retried_while_the_store_is_away_and_an_error_of_a_reachable_store_is_not(tmp_path):
    unreachable = f"http://127.0.0.1:{free_port()}"
    answers = iter([ConnectionError("connection refused"), ConnectionError("connection refused"), "runs"])

    def read():
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert call_waiting(unreachable, "reading", read, wait_s=60, interval_s=0.01) == "runs"


def test_a_reachable_stores_refusal_is_raised_at_once_and_a_failure_on_the_way_after_its_tries(tmp_path, monkeypatch):
    """A driver's reads and its sweep run's creation (`call_waiting`) meet the same failures on the way as its queued
    writes: MLflow 3.17's client failed a joined driver's first request to its server with KeyError
    '_MLFLOW_TELEMETRY_SESSION_ID' (its telemetry thread removed that environment variable while the request read
    the environment), which stopped the sweep at its start. Such a call is tried again, ATTEMPTS_ON_THE_WAY times in
    all; a refusal of the store (4xx) is the answer at the first try."""
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import RESOURCE_DOES_NOT_EXIST

    import sentsweep.tracking.writer as writer_module

    monkeypatch.setattr(writer_module, "RETRY_PAUSE_S", 0.0)
    store = sqlite_store(tmp_path)  # reachable
    on_the_way = MlflowException("API request to http://127.0.0.1:5000/api/2.0/mlflow/runs/create failed with "
                                 "exception '_MLFLOW_TELEMETRY_SESSION_ID'")  # INTERNAL_ERROR: HTTP 500
    refusal = MlflowException("Run 'x' not found", error_code=RESOURCE_DOES_NOT_EXIST)  # HTTP 404
    calls = []

    def answering(*answers):
        def call():
            answer = answers[len(calls)]
            calls.append(answer)
            if isinstance(answer, Exception):
                raise answer
            return answer
        return call

    assert call_waiting(store, "creating the sweep's run", answering(on_the_way, on_the_way, "run"), wait_s=60) == "run"
    assert calls == [on_the_way, on_the_way, "run"]
    calls.clear()
    with pytest.raises(MlflowException, match="not found"):
        call_waiting(store, "reading a run", answering(refusal, "never"), wait_s=60)
    assert calls == [refusal]
    calls.clear()
    with pytest.raises(MlflowException, match="_MLFLOW_TELEMETRY_SESSION_ID"):
        call_waiting(store, "reading runs", answering(*[on_the_way] * writer_module.ATTEMPTS_ON_THE_WAY, "never"),
                     wait_s=60)
    assert len(calls) == writer_module.ATTEMPTS_ON_THE_WAY == 3


def test_a_resumed_sweep_writes_what_its_dead_driver_queued_before_anything_else(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(PROJECT / "sweeps" / "tsdae_deletion.py")])
    store = sqlite_store(tmp_path)
    crashed = SweepTracker(store, "crashed", "tsdae_deletion", tmp_path / "out")
    # the store went away (the same sweep run's writer, pointed at a closed port), the driver queued a trial's
    # writes in its pending file and died
    away = QueuedMlflowWriter(f"http://127.0.0.1:{free_port()}", crashed.writer.experiment_id, crashed.parent_run_id,
                              crashed.writer.pending_file, retry_interval_s=60)
    queued_trial(away, crashed.parent_run_id)
    saved = crashed.writer.pending_file.read_text()
    del away, crashed

    resumed = SweepTracker(store, "crashed", "tsdae_deletion", tmp_path / "out", resume=True)
    assert capsys.readouterr().out.startswith(
        "writing the 3 queued writes (1 run starts, 1 metric batches, 1 run ends) of 1 trial runs in "
        f"{resumed.writer.pending_file}, left by the sweep's last driver")
    assert not resumed.writer.pending_file.exists() and resumed.writer.pending == 0
    run, = MlflowClient(store).search_runs([resumed.writer.experiment_id],
                                           f"tags.sweep_run_id = '{resumed.parent_run_id}'")
    assert run.info.status == "FINISHED" and run.data.metrics == {"sts_dev": 61.5}
    assert json.loads(saved.splitlines()[0])["parent_run_id"] == resumed.parent_run_id


def test_a_writer_unpickled_in_its_process_is_that_process_writer_of_the_same_file(tmp_path):
    unreachable = f"http://127.0.0.1:{free_port()}"
    writer = QueuedMlflowWriter(unreachable, "1", "run12345", tmp_path / "pending.jsonl", retry_interval_s=60)
    queued_trial(writer, "run12345")
    pickled = pickle.dumps(writer)
    assert pickle.loads(pickled) is writer  # Ray Tune's restored callbacks write to the sweep's one queue
    del writer
    gc.collect()
    assert pickle.loads(pickled).pending == 3  # no live writer: a new one takes the file over, never replaces it


# What reads or writes MLflow when called (the sweep writer's own module aside): during a sweep each goes to
# QueuedMlflowWriter.call as a function, never called directly (sentsweep.tracking.writer's rule).
MLFLOW_ACCESSES = {"fetch_trial_runs", "fetch_sweep_runs", "latest_sweep_run_id", "run_artifact_text",
                   "log_trial_model", "materialize_model", "check_model_uri", "export_model", "MlflowClient"}


def test_the_sweep_layer_reaches_mlflow_only_through_the_sweeps_writer():
    """sentsweep.sweep and the experiments call no MLflow client method and no function that reads or writes MLflow
    (they hand them to `writer.call`, or submit operations); the launcher's checks before a sweep starts aside."""
    import ast

    modules = [path for folder in ("sweep", "experiments") for path in (PROJECT / "sentsweep" / folder).rglob("*.py")
               if path.name != "launcher.py"]
    direct = []
    for path in modules:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            function = node.func
            name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)
            on_client = isinstance(function, ast.Attribute) and (
                getattr(function.value, "attr", None) == "client" or getattr(function.value, "id", None) == "client")
            if name in MLFLOW_ACCESSES or on_client or (isinstance(function, ast.Attribute) and getattr(
                    function.value, "id", None) == "mlflow"):
                direct.append(f"{path.relative_to(PROJECT)}:{node.lineno}: {ast.unparse(node)[:80]}")
    assert direct == []
    assert len(modules) > 20  # the layer was read


def test_a_sweep_stopped_while_mlflow_is_away_says_its_runs_are_left_running(tmp_path, monkeypatch):
    from sentsweep.sweep.execution.sweep_endings import end_stopped

    monkeypatch.setattr(sys, "argv", [str(PROJECT / "sweeps" / "tsdae_deletion.py")])
    store = sqlite_store(tmp_path)
    tracker = SweepTracker(store, "stopped", "tsdae_deletion", tmp_path / "out")
    trial = SimpleNamespace(trial_id="a", config=dict(method="tsdae", seed=0), error_file=None,
                            last_result={"step": 1, "total_steps": 1})
    tracker.on_trial_start(0, [], trial)
    # the store goes away (the sweep run's writer pointed at a closed port); the trial's result queues; Ctrl-C
    tracker.writer = QueuedMlflowWriter(f"http://127.0.0.1:{free_port()}", tracker.writer.experiment_id,
                                        tracker.parent_run_id, tracker.writer.pending_file, retry_interval_s=60)
    tracker.on_trial_result(0, [], trial, {"sts_dev": 50.0, "step": 1})
    stopped, ended = end_stopped(tracker)
    assert stopped == [] and ended.startswith("their MLflow runs and the sweep's are left as they were: MLflow at ")
    assert ended.endswith(f"cannot be reached while finding the sweep's trial runs left RUNNING: the sweep's MLflow "
                          f"run {tracker.parent_run_id} stays RUNNING, and 1 queued writes (1 metric batches) of 1 "
                          f"trial runs in {tracker.writer.pending_file}")
    client = MlflowClient(store)
    assert client.get_run(tracker.parent_run_id).info.status == "RUNNING"  # as the message says
    assert {run.info.status for run in client.search_runs([tracker.writer.experiment_id])} == {"RUNNING"}
    assert tracker.writer.pending_file.exists()


def test_queued_writes_of_configuration_runs_are_counted_as_such():
    """A configuration run's operations address it as {"configuration": config hash}: the stop line counts those
    runs beside the trials' (a driver stopped while MLflow was away with such writes queued crashed on them)."""
    queue = [{"op": "create", "trial": "t1"}, {"op": "metrics", "trial": "t1"},
             {"op": "create", "trial": {"configuration": "abc"}}, {"op": "tags", "trial": {"configuration": "abc"}},
             {"op": "terminate", "trial": {"configuration": "def"}}, {"op": "tag", "trial": None}]
    assert describe_queue(queue) == ("6 queued writes (2 run starts, 1 metric batches, 1 tag batches, 1 run ends, "
                                     "1 tags) of 1 trial runs, 2 configuration runs and the sweep's run")
