"""--resume continues exactly what did not finish (sentsweep.tracking.sweep_lookup): a finished sweep has nothing to
resume (exit 0, no run created), an experiment without the sweep refuses in one line (exit 2, nothing created); the
sweep's latest unfinished run is the one continued. An interrupted sweep resumed to each (configuration, seed) once:
tests/sweep/test_fault_matrix.py."""

from __future__ import annotations

import sys

from mlflow.tracking import MlflowClient

from sentsweep.experiments.tsdae.tsdae_deletion import DEFINITION
from sentsweep.sweep import run_sweep
from sentsweep.tracking.sweep_lookup import ResumeTarget, resume_target
from tests.helpers.cluster_helpers import sqlite_store


def _sweep_run(client: MlflowClient, experiment_id: str, status: str, sweep: str = "tsdae_deletion") -> str:
    run = client.create_run(experiment_id, tags={"role": "sweep", "sweep": sweep})
    client.set_terminated(run.info.run_id, status=status)
    return run.info.run_id


def _runs(uri: str) -> list[tuple[str, str]]:
    """(role, status) of every run in the store, through MLflow's API."""
    client = MlflowClient(uri)
    experiments = [experiment.experiment_id for experiment in client.search_experiments()]
    return sorted((run.data.tags.get("role", "trial"), run.info.status)
                  for run in client.search_runs(experiments, max_results=1000))


def test_the_latest_unfinished_run_of_the_sweep_is_resumed_else_the_finished_one_is_named(tmp_path):
    uri = sqlite_store(tmp_path)
    client = MlflowClient(uri)
    experiment = client.create_experiment("tsdae_deletion")
    assert resume_target(uri, "tsdae_deletion", "tsdae_deletion") == ResumeTarget(None)
    _sweep_run(client, experiment, "KILLED", sweep="nm_weight")  # another sweep of the experiment
    assert resume_target(uri, "tsdae_deletion", "tsdae_deletion") == ResumeTarget(None)
    finished = _sweep_run(client, experiment, "FINISHED")
    assert resume_target(uri, "tsdae_deletion", "tsdae_deletion") == ResumeTarget(finished, finished=True)
    killed = _sweep_run(client, experiment, "KILLED")
    _sweep_run(client, experiment, "FINISHED")  # started later, finished: the killed one is still resumed
    assert resume_target(uri, "tsdae_deletion", "tsdae_deletion") == ResumeTarget(killed)


def test_no_store_and_no_experiment_hold_nothing_to_resume_and_nothing_is_created(tmp_path):
    store = tmp_path / "never.db"
    assert resume_target(f"sqlite:///{store}", "tsdae_deletion", "tsdae_deletion") == ResumeTarget(None)
    assert not store.exists()
    uri = sqlite_store(tmp_path)
    assert resume_target(uri, "tsdae_deletion", "tsdae_deletion") == ResumeTarget(None)
    assert [experiment.name for experiment in MlflowClient(uri).search_experiments()] == ["Default"]


def _resume(tmp_path, uri: str, capsys, monkeypatch) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", [__file__])
    code = run_sweep(DEFINITION, ["--quick", "--resume", "--tracking-uri", uri, "--output-dir", str(tmp_path / "out"),
                                  "--ratios", "0.3", "--poolings", "cls", "--seeds", "1"])
    printed = capsys.readouterr()
    return code, printed.out, printed.err


def test_resume_of_a_finished_sweep_says_nothing_to_resume_and_creates_no_run(tmp_path, capsys, monkeypatch):
    uri = sqlite_store(tmp_path)
    client = MlflowClient(uri)
    finished = _sweep_run(client, client.create_experiment("tsdae_deletion"), "FINISHED")
    before = _runs(uri)
    code, out, err = _resume(tmp_path, uri, capsys, monkeypatch)
    assert code == 0, err
    assert out.splitlines() == [
        f"nothing to resume: sweep tsdae_deletion of experiment 'tsdae_deletion' finished (its MLflow run {finished}); "
        "to add seeds or configurations to it, run the same command with --extend instead of --resume"]
    assert _runs(uri) == before == [("sweep", "FINISHED")]


def test_resume_of_an_experiment_that_never_ran_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    uri = sqlite_store(tmp_path)
    code, out, err = _resume(tmp_path, uri, capsys, monkeypatch)
    assert code == 2
    assert err.splitlines() == [
        f"error: --resume: experiment 'tsdae_deletion' at {uri} has no run of sweep tsdae_deletion to resume; start "
        "the sweep without --resume"]
    assert _runs(uri) == []
