"""Models out and stages chained, on a real `mlflow server` on 127.0.0.1: a two-stage sweep whose second stage
starts each seed from the same seed's model of the first; its lineage, its trial runs as MLflow shows them, and
model URIs that name nothing."""

from __future__ import annotations

import contextlib
import hashlib
import io
import sys
from pathlib import Path

import pytest
import ray
from mlflow.tracking import MlflowClient

from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id
from sentsweep.demo_data import DEMO_DIR
from sentsweep.search_spaces.protocol import project_protocol
from sentsweep.sweep import Stage, SweepDefinition, run_sweep
from tests.tracking.test_mlflow_conventions import rest, tags_of

pytestmark = pytest.mark.slow  # starts Ray, an MLflow server or sweeps (make test-fast leaves it out)

CHAIN = SweepDefinition(
    name="chain",
    description="SBERT on the demo pairs, then SBERT again from each seed's model of the first stage",
    protocol=project_protocol(dict(method="sbert", pooling="mean", lr=1e-3, batch_size=16, max_seq_length=32,
                                   max_steps=12, eval_steps=4, seeds=2)),
    stages=[Stage("first", lambda args: {"method": ["sbert"]}),
            Stage("second", lambda args: {"method": ["sbert"]}, init_from="first")],
    trains_on_gold_pairs=True,
)


def run_chain(server, workdir: Path, *extra: str) -> tuple[int, str]:
    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        code = run_sweep(CHAIN, ["--quick", "--tracking-uri", server.uri, "--output-dir", str(workdir), *extra])
    return code, output.getvalue()


@pytest.fixture(scope="module")
def chained(tmp_path_factory, mlflow_server, session_ray):
    """The chain sweep run once against a real MLflow server, on the session's Ray; yields (server, its trial runs by
    stage)."""
    server = mlflow_server
    argv = sys.argv
    sys.argv = [__file__]  # the driver script MLflow names as the runs' source: this test, in a git checkout
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("RAY_ADDRESS", session_ray.address)
            code, output = run_chain(server, tmp_path_factory.mktemp("chain"))
    finally:
        sys.argv = argv
        ray.shutdown()
    assert code == 0, output
    return server, stage_runs(server)


def stage_runs(server) -> dict:
    """{stage: its trial runs indexed by seed} of the experiment's latest sweep."""
    runs = fetch_trial_runs(server.uri, "chain", latest_sweep_run_id(server.uri, "chain"))
    return {stage: runs[runs["params.stage"] == stage].set_index("seed") for stage in ("first", "second")}


def test_each_second_stage_run_starts_from_the_first_stages_model_of_its_seed(chained):
    server, runs = chained
    first, second = runs["first"], runs["second"]
    client = MlflowClient(server.uri)
    assert sorted(second.index) == sorted(first.index) == ["0", "1"]
    for seed in first.index:
        parent = first.loc[seed]
        assert second.loc[seed, "parent_model_run_id"] == parent["run_id"]  # lineage: the same seed's run
        assert isinstance(parent["logged_model_id"], str)
        selected = parent["metrics.best_sts_dev"]  # its selected checkpoint's dev score...
        untrained = [m.value for m in client.get_metric_history(second.loc[seed, "run_id"], "sts_dev") if m.step == 0]
        assert untrained == [pytest.approx(selected, abs=1e-4)]  # ...is where stage 2 starts
    assert second["config_hash"].nunique() == 1  # each seed's own start model does not split the configuration


def test_a_trial_run_carries_source_tags_its_data_as_datasets_and_system_metrics(chained):
    server, runs = chained
    run = rest(server, "runs/get", run_id=runs["second"].iloc[0]["run_id"])["run"]
    tags = tags_of(run["data"])
    assert tags["mlflow.source.name"] == __file__ and tags["mlflow.source.type"] == "LOCAL"
    assert tags.get("mlflow.source.git.commit")
    inputs = {item["dataset"]["name"]: item["dataset"] for item in run["inputs"]["dataset_inputs"]}
    train_digest = hashlib.sha256((DEMO_DIR / "sts-train.csv").read_bytes()).hexdigest()[:36]
    assert inputs["sts-train.csv"]["digest"] == train_digest
    # SBERT trains on the gold pairs: the sweep's corpus is no setting of its method, so no data of its run
    assert set(inputs) == {"sts-train.csv", "sts-dev.csv", "sts-test.csv"}
    metrics = {metric["key"] for metric in run["data"]["metrics"]}
    assert {"system/cpu_utilization_percentage", "system/system_memory_usage_megabytes"} <= metrics
    experiment = rest(server, "experiments/get-by-name", experiment_name="chain")["experiment"]
    assert tags_of(experiment)["mlflow.experimentKind"] == "custom_model_development"


def test_a_model_uri_that_names_nothing_fails_before_ray_starts(chained, tmp_path):
    server, runs = chained
    client = MlflowClient(server.uri)
    without_model = client.create_run(client.get_experiment_by_name("chain").experiment_id).info.run_id
    for uri in ("runs:/0123456789abcdef0123456789abcdef/model", f"runs:/{without_model}/model",
                "models:/no-such-model/1"):
        code, output = run_chain(server, tmp_path, "--model", uri)
        assert code == 2 and f"model URI {uri!r}" in output, output
        assert not ray.is_initialized()
    assert len(fetch_trial_runs(server.uri, "chain")) == len(runs["first"]) + len(runs["second"])  # nothing new



def test_a_race_of_chained_stages_is_refused_before_ray_starts(chained, tmp_path):
    """A race may end before the last seed, and the second stage needs the first stage's model of every seed. Before
    this check a race whose first stage ran every seed trained the second from the released model (the race's
    trials left the chain out), and one that ended earlier failed after running its first stage."""
    server, runs = chained
    code, output = run_chain(server, tmp_path, "--race", "--seeds", "3")
    assert code == 2 and "--race cannot race chained stages" in output, output
    assert not ray.is_initialized()
    assert len(fetch_trial_runs(server.uri, "chain")) == len(runs["first"]) + len(runs["second"])  # nothing new
