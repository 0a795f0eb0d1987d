"""`--search optuna --sampler rung-gp` end to end: the quick learning-rate sweep on local Ray and a SQLite MLflow
store, its MLflow record read back: every trial a run, and a configuration stopped at a rung recorded with the step
and why, as a race's stop. The scheduler's level is raised so that a configuration behind the leader at a rung
stops whatever the size of the gap (the test is of the record, the decision's arithmetic is
tests/sweep/test_rung_search.py's)."""

import contextlib
import io
from pathlib import Path

import pytest
import ray
from mlflow.tracking import MlflowClient

from sentsweep.analysis.runs import RACE_DECISION_TAG, RACE_STOPPED_TAG, latest_sweep_run_id
from sentsweep.sweep.search import rung_search
from sentsweep.tracking.configurations import RACE_TAG
from tests.helpers.cluster_helpers import sqlite_store
from tests.sweep.test_sweep_end_to_end import load_sweep

pytestmark = pytest.mark.slow  # starts Ray and a sweep (make test-fast leaves it out)

SCRIPT = Path(__file__).resolve().parents[2] / "sweeps" / "learning_rate.py"
CONFIGURATIONS, SEEDS = 4, 2


def test_a_quick_rung_gp_sweep_records_every_trial_and_where_and_why_a_configuration_stopped(
        tmp_path, session_ray, monkeypatch):
    made = rung_search.rung_search

    def any_gap(searcher, repeat, run_name):
        repeater, scheduler = made(searcher, repeat, run_name)
        scheduler.alpha = 0.999
        return repeater, scheduler

    monkeypatch.setattr(rung_search, "rung_search", any_gap)
    monkeypatch.setenv("RAY_ADDRESS", session_ray.address)
    uri = sqlite_store(tmp_path)
    module = load_sweep(SCRIPT)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        code = module.run_sweep(module.DEFINITION, [
            "--quick", "--search", "optuna", "--sampler", "rung-gp", "--methods", "simcse", "--num-configs",
            str(CONFIGURATIONS), "--max-steps", "200", "--eval-steps", "20",
            "--cpus-per-trial", "0.5",  # a configuration's seeds side by side
            "--tracking-uri", uri, "--output-dir", str(tmp_path / "out")])
        ray.shutdown()
    printed = output.getvalue()
    assert code == 0, printed
    client = MlflowClient(uri)
    parent = latest_sweep_run_id(uri, "learning_rate")
    experiment = client.get_experiment_by_name("learning_rate")
    runs = client.search_runs([experiment.experiment_id], f"tags.sweep_run_id = '{parent}'")
    trials = [run for run in runs if "seed" in run.data.params]
    assert len(trials) == CONFIGURATIONS * SEEDS
    stopped = [run for run in trials if run.data.tags.get(RACE_STOPPED_TAG)]
    assert stopped and len(stopped) % SEEDS == 0  # a configuration's seeds stop together
    for run in stopped:
        step = run.data.tags[RACE_STOPPED_TAG]
        assert step in ("40", "80")  # the rungs: the first evaluations at or after 1/9 and 1/3 of 200 steps
        assert run.data.tags[RACE_DECISION_TAG].startswith(f"dropped by the race at step {step}: at step {step} (")
        assert f"paired t over the {SEEDS} seeds both have, one-sided p = " in run.data.tags[RACE_DECISION_TAG]
    went_on = [run for run in trials if not run.data.tags.get(RACE_STOPPED_TAG)]
    assert all(run.data.tags[RACE_DECISION_TAG].startswith("ran to the end after 2 seeds") for run in went_on)
    configuration = client.get_run(stopped[0].data.tags["mlflow.parentRunId"])
    assert configuration.data.tags[RACE_TAG] == stopped[0].data.tags[RACE_DECISION_TAG]
    assert f"stopped at step {stopped[0].data.tags[RACE_STOPPED_TAG]} by the race" in printed
