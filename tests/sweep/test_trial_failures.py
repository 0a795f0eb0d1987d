"""A trial whose loss turns NaN fails alone, recorded in MLflow; early-stopped trials are counted, not averaged."""

import contextlib
import io

import pytest
import ray
from mlflow.tracking import MlflowClient

from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id
from sentsweep.search_spaces.protocol import project_protocol
from sentsweep.search_spaces.tsdae import QUICK_SETTINGS
from sentsweep.sweep import Stage, SweepDefinition, run_sweep
from tests.helpers.cluster_helpers import sqlite_store

pytestmark = pytest.mark.slow  # starts Ray, an MLflow server or sweeps (make test-fast leaves it out)


def run(definition, workdir, *extra):
    uri = sqlite_store(workdir)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        code = run_sweep(definition, ["--quick", "--tracking-uri", uri, "--output-dir", str(workdir / "out"), *extra])
    ray.shutdown()
    return code, uri, output.getvalue()


def test_nan_loss_fails_its_trial_with_the_reason_and_the_sweep_goes_on(tmp_path, shared_ray):
    definition = SweepDefinition(
        name="temperature",
        description="SimCSE temperature, one value so small that the logits overflow",
        protocol=project_protocol(dict(method="simcse", pooling="mean", batch_size=8, seeds=2),
                                  QUICK_SETTINGS | {"max_steps": 20, "eval_steps": 10}),
        stages=[Stage("temperature", lambda args: {"temperature": [0.05, 1e-300]})],
    )
    code, uri, printed = run(definition, tmp_path, "--max-failures", "0")
    assert code == 0
    runs = fetch_trial_runs(uri, "temperature", latest_sweep_run_id(uri, "temperature"))
    failed = runs[runs["status"] == "FAILED"]
    assert len(runs) == 4 and len(failed) == 2
    assert set(failed["params.temperature"]) == {"1e-300"}
    assert all("loss is nan" in reason for reason in failed["failure_reason"])
    assert "Runs left out: 2 failed." in printed
    assert "| 0.05 |" in printed and "| 1e-300 |" not in printed


def test_asha_stops_every_seed_of_a_configuration_together_and_the_table_counts_them(tmp_path, shared_ray):
    definition = SweepDefinition(
        name="asha",
        description="TSDAE deletion ratios under config-level ASHA",
        protocol=project_protocol(dict(method="tsdae", noise_type="delete", pooling="cls", tie_decoder=True,
                                       batch_size=8, seeds=2), QUICK_SETTINGS | {"max_steps": 80, "eval_steps": 10}),
        stages=[Stage("ratio", lambda args: {"noise_ratio": [0.1, 0.2, 0.4, 0.6, 0.8, 0.9]})],
    )
    code, uri, printed = run(definition, tmp_path, "--scheduler", "asha", "--seeds", "2")
    assert code == 0
    runs = fetch_trial_runs(uri, "asha", latest_sweep_run_id(uri, "asha"))
    assert len(runs) == 12
    statuses = runs.groupby("config_hash")["status"].agg(lambda status: tuple(sorted(set(status))))
    assert set(statuses) <= {("KILLED",), ("FINISHED",)}, statuses  # never some seeds stopped, others finished
    stopped = runs[runs["status"] == "KILLED"]
    assert 0 < len(stopped) < 12 and len(stopped) % 2 == 0
    client = MlflowClient(uri)
    for run_id in stopped["run_id"]:
        stopped_run = client.get_run(run_id)
        assert stopped_run.data.tags["stopped_early"] == "true" and stopped_run.data.metrics["step"] < 80
    assert f"Runs left out: {len(stopped)} stopped early." in printed


def test_when_every_trial_diverges_each_runs_once_and_the_sweep_ends_failed_naming_the_reason(tmp_path, capsys,
                                                                                             shared_ray):
    """The default --max-failures (2) retries a lost worker, not a loss that is nan at a given step: each trial
    fails once (Ray Tune's error file counts the attempts, one "Failure #" line each), and the sweep's run ends
    FAILED with the reason, not RUNNING."""
    definition = SweepDefinition(
        name="all_fail",
        description="SimCSE at a temperature so small that every trial's loss overflows",
        protocol=project_protocol(dict(method="simcse", pooling="mean", batch_size=8, seeds=2),
                                  QUICK_SETTINGS | {"max_steps": 20, "eval_steps": 10}),
        stages=[Stage("temperature", lambda args: {"temperature": [1e-300]})],
    )
    code, uri, printed = run(definition, tmp_path)
    err = capsys.readouterr().err
    assert code == 1
    assert "no trial of this stage finished (2 failed); failure reason(s):" in err
    assert "FloatingPointError: loss is nan at step" in err
    assert "no param/metric named" not in err + printed
    sweep_run = MlflowClient(uri).get_run(latest_sweep_run_id(uri, "all_fail"))
    assert sweep_run.info.status == "FAILED"
    assert f"the sweep's MLflow run {sweep_run.info.run_id} ended FAILED" in err
    assert "FloatingPointError: loss is nan at step" in sweep_run.data.tags["failure_reason"]
    runs = fetch_trial_runs(uri, "all_fail", sweep_run.info.run_id)
    assert len(runs) == 2 and set(runs["status"]) == {"FAILED"}
    for reason in runs["failure_reason"]:
        assert reason.count("Failure # ") == 1 and "Failure # 1 " in reason, reason
