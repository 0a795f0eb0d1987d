"""MLflow sees a sweep as it sees its own runs: source tags, the experiment's kind, dataset inputs with digests,
system metrics, and the sweep's tables on its parent run. Read back through the REST API of a real server."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import urllib.parse
import urllib.request
from types import SimpleNamespace

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from sentsweep.analysis.tables import build_table, to_frame, to_markdown
from sentsweep.tracking.callback import SweepTracker
from sentsweep.tracking.datasets import DatasetInputs, _file_digest, content_digest, data_source, trial_datasets
from sentsweep.trainables.session import TuneSession
from sentsweep.trainables.system_metrics import process_sampler
from tests.helpers.cluster_helpers import PROJECT

pytestmark = pytest.mark.slow  # starts Ray, an MLflow server or sweeps (make test-fast leaves it out)

DRIVER = str(PROJECT / "sweeps" / "nm_weight.py")


@pytest.fixture()
def server(mlflow_server):
    return mlflow_server


def rest(server, endpoint: str, body: dict | None = None, **query) -> dict:
    """GET (or POST `body` to) /api/2.0/mlflow/<endpoint>."""
    url = f"{server.uri}/api/2.0/mlflow/{endpoint}?{urllib.parse.urlencode(query)}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def tags_of(entity: dict) -> dict:
    return {tag["key"]: tag["value"] for tag in entity.get("tags", [])}


def git_commit() -> str | None:
    result = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT, capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else None


def sha256_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:36]


def test_a_sweep_looks_in_mlflow_as_its_users_expect(server, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", [DRIVER])  # the driver script MLflow names as the runs' source
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("a sentence\nanother sentence\n")
    (tmp_path / "sts-dev.csv").write_text("dev")
    (tmp_path / "sts-test.csv").write_text("test")
    task = tmp_path / "task"
    task.mkdir()
    (task / "dev.txt").write_text("task dev")
    config = dict(method="tsdae", seed=0, lr=1e-3, corpus=str(corpus), dev_file=str(tmp_path / "sts-dev.csv"),
                  test_file=str(tmp_path / "sts-test.csv"), eval_tasks={"askubuntu": str(task)})
    trial = SimpleNamespace(trial_id="t1", config=config, error_file=None,
                            last_result={"step": 10, "total_steps": 10})

    tracker = SweepTracker(server.uri, "conventions", "nm_weight", tmp_path / "out")
    tracker.on_trial_start(0, [], trial)
    tracker.on_trial_result(0, [], trial, {"step": 10, "total_steps": 10, "sts_dev": 61.5,
                                           **process_sampler().take()})
    tracker.on_trial_complete(0, [], trial)
    stage_1, stage_2 = stage_table("lr", ["0.001", "0.01"], 61.5), stage_table("pooling", ["cls", "mean"], 62.0)
    tracker.record.log_stage("stage 1/2 'lr'", to_markdown(stage_1), to_frame(stage_1), ["lr"], "sts_dev")
    tracker.record.log_stage("stage 2/2 'pooling'", to_markdown(stage_2), to_frame(stage_2), ["pooling"], "sts_dev")
    assert tracker.finish()

    experiment = rest(server, "experiments/get-by-name", experiment_name="conventions")["experiment"]
    assert tags_of(experiment)["mlflow.experimentKind"] == "custom_model_development"
    child = rest(server, "runs/search", {"experiment_ids": [experiment["experiment_id"]],
                                         "filter": "tags.ray_trial_id = 't1'"})["runs"][0]
    child = rest(server, "runs/get", run_id=child["info"]["run_id"])["run"]
    parent = rest(server, "runs/get", run_id=tracker.parent_run_id)["run"]
    commit = git_commit()
    for run in (parent, child):
        tags = tags_of(run["data"])
        assert tags["mlflow.source.name"] == DRIVER and tags["mlflow.source.type"] == "LOCAL"
        assert tags["mlflow.user"]
        if commit:
            assert tags["mlflow.source.git.commit"] == commit
    assert tags_of(child["data"])["method"] == "tsdae"  # the project's own tags are kept

    inputs = {item["dataset"]["name"]: item for item in child["inputs"]["dataset_inputs"]}
    assert set(inputs) == {"corpus.txt", "sts-dev.csv", "sts-test.csv", "askubuntu"}
    assert inputs["corpus.txt"]["dataset"]["digest"] == sha256_digest(corpus.read_bytes())
    assert inputs["corpus.txt"]["dataset"]["source_type"] == "local"
    assert json.loads(inputs["corpus.txt"]["dataset"]["source"]) == {"uri": str(corpus.resolve())}
    assert {name: tags_of(item)["mlflow.data.context"] for name, item in inputs.items()} == {
        "corpus.txt": "training", "sts-dev.csv": "dev", "sts-test.csv": "test", "askubuntu": "evaluation"}

    metrics = {metric["key"]: metric["value"] for metric in child["data"]["metrics"]}
    assert 0 <= metrics["system/cpu_utilization_percentage"] <= 100
    assert metrics["system/system_memory_usage_megabytes"] > 0

    # the final stage's answer first (its table, then its best configuration), the earlier stage after it
    description = tags_of(parent["data"])["mlflow.note.content"]
    assert description.index("## stage 2/2 'pooling'") < description.index(to_markdown(stage_2)) < description.index(
        "**Best on sts_dev** (mean over 2 seeds): **pooling=mean**") < description.index(
        "## stage 1/2 'lr'") < description.index(to_markdown(stage_1))
    files = rest(server, "artifacts/list", run_id=tracker.parent_run_id, path="tables")["files"]
    assert sorted(file["path"] for file in files) == ["tables/01-stage_1_2_lr.html", "tables/01-stage_1_2_lr.json",
                                                      "tables/01-stage_1_2_lr.md", "tables/02-stage_2_2_pooling.html",
                                                      "tables/02-stage_2_2_pooling.json",
                                                      "tables/02-stage_2_2_pooling.md"]
    text = MlflowClient(server.uri).download_artifacts(tracker.parent_run_id, "tables/01-stage_1_2_lr.md", tmp_path)
    assert open(text).read() == to_markdown(stage_1)
    assert {"path": "tables/01-stage_1_2_lr.json", "type": "table"} in json.loads(
        tags_of(parent["data"])["mlflow.loggedArtifacts"])  # the run's Artifacts tab shows it as a table


def stage_table(axis: str, values: list[str], score: float):
    """The table of a stage over `axis` of two seeds per value, the last value the best."""
    runs = pd.DataFrame([{"run_id": f"{value}-{seed}", "status": "FINISHED", "seed": str(seed),
                          f"params.{axis}": value, "metrics.sts_dev": score + index + seed / 10}
                         for index, value in enumerate(values) for seed in (0, 1)])
    return build_table(runs, [axis], ["sts_dev"])


def test_an_existing_experiment_gets_a_kind_but_keeps_its_own(server, tmp_path):
    client = MlflowClient(server.uri)
    client.create_experiment("untagged")
    client.create_experiment("genai", tags={"mlflow.experimentKind": "genai_development"})
    for name in ("untagged", "genai"):
        SweepTracker(server.uri, name, "sweep", tmp_path)
    assert client.get_experiment_by_name("untagged").tags["mlflow.experimentKind"] == "custom_model_development"
    assert client.get_experiment_by_name("genai").tags["mlflow.experimentKind"] == "genai_development"


def test_a_changed_file_changes_its_digest_and_an_unchanged_one_is_hashed_once(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("first version\n")
    first = content_digest(corpus)
    assert first == sha256_digest(b"first version\n")
    hashed = _file_digest.cache_info().misses
    assert content_digest(corpus) == first and _file_digest.cache_info().misses == hashed

    corpus.write_text("second version, longer\n")
    assert content_digest(corpus) == sha256_digest(b"second version, longer\n") != first
    same_size = "second version, LONGER\n"
    corpus.write_text(same_size)
    later = corpus.stat().st_mtime_ns + 1_000_000_000
    os.utime(corpus, ns=(later, later))  # a same-size rewrite is told apart by its modification time
    assert content_digest(corpus) == sha256_digest(same_size.encode())

    folder_digest = content_digest(tmp_path)
    (tmp_path / "more.txt").write_text("another file")
    assert content_digest(tmp_path) != folder_digest


def test_one_file_in_two_roles_is_one_dataset_and_a_hub_name_is_recorded_by_name(tmp_path):
    sick = tmp_path / "SICK.txt"
    sick.write_text("pairs")
    datasets = trial_datasets({"corpus": "sentence-transformers/stsb", "dev_file": str(sick), "test_file": str(sick)})
    assert [(dataset.name, dataset.source_type, context) for dataset, context in datasets] == [
        ("sentence-transformers/stsb", "hugging_face", "training"), ("SICK.txt", "local", "dev,test")]
    hub = data_source("sentence-transformers/stsb")
    assert hub.digest == sha256_digest(b"sentence-transformers/stsb")
    assert json.loads(hub.source) == {"path": "sentence-transformers/stsb"}


def test_a_configurations_and_the_sweeps_inputs_are_written_once_per_driver_and_each_trials_on_its_run(tmp_path):
    corpus, other = tmp_path / "corpus.txt", tmp_path / "other.txt"
    corpus.write_text("a sentence\n"), other.write_text("another sentence\n")
    writer = SimpleNamespace(operations=[])
    writer.submit = writer.operations.append
    inputs = DatasetInputs(writer)
    for trial, configuration, data in (("t0", "c1", corpus), ("t1", "c1", corpus), ("t2", "c2", corpus),
                                       ("t3", "c2", other), ("t4", "c3", None)):
        inputs.trial_read(trial, configuration, {"corpus": str(data)} if data else {"seed": 0})
    written = [(operation["trial"], operation["datasets"][0]["dataset"]["name"]) for operation in writer.operations]
    assert all(operation["op"] == "inputs" for operation in writer.operations)
    assert written == [("t0", "corpus.txt"), ({"configuration": "c1"}, "corpus.txt"), (None, "corpus.txt"),
                       ("t1", "corpus.txt"),
                       ("t2", "corpus.txt"), ({"configuration": "c2"}, "corpus.txt"),
                       ("t3", "other.txt"), ({"configuration": "c2"}, "other.txt"), (None, "other.txt")]


def test_every_report_carries_the_system_metrics_since_the_last(monkeypatch, tmp_path):
    from ray import tune

    reports = []
    monkeypatch.setattr(tune, "report", lambda metrics, checkpoint: reports.append(metrics))
    # outside a Tuner Ray Tune gives no trial resources; a trial on CPU holds no GPU
    monkeypatch.setattr("sentsweep.trainables.session.trial_gpu_fraction", lambda: 0.0)
    session = TuneSession()
    session.report({"step": 0}, tmp_path)
    session.report({"step": 1}, tmp_path)
    assert [report["step"] for report in reports] == [0, 1]
    for report in reports:
        assert {"system/cpu_utilization_percentage", "system/system_memory_usage_megabytes",
                "system/system_memory_usage_percentage", "system/disk_usage_percentage"} <= set(report)


def test_a_sqlite_stores_artifacts_live_beside_its_file_not_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "store"
    store.mkdir()
    tracker = SweepTracker(f"sqlite:///{store / 'mlflow.db'}", "beside", "nm_weight", tmp_path / "out")
    table = stage_table("w", ["0.01", "1.0"], 60.0)
    tracker.record.log_stage("nm_weight", to_markdown(table), to_frame(table), ["w"], "sts_dev")
    assert tracker.finish()
    assert (store / "mlartifacts" / "beside").is_dir() and not (tmp_path / "mlruns").exists()
