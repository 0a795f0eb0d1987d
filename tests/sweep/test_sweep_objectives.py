"""A sweep's objectives (`--objective NAME:max|min`, repeated): refused before anything runs where they do not fit,
each one's value in a trial's result, and Optuna's multi-objective study told each configuration's mean over its
seeds (sentsweep.sweep.search.objectives, sentsweep.sweep.search.multi_objective)."""

import math

import optuna
import pytest
from ray import tune

from sentsweep.analysis.pareto import parse_objective
from sentsweep.sweep.search.multi_objective import multi_objective_searcher
from sentsweep.sweep.search.objectives import known_objective, objective_value, objectives_text
from sentsweep.sweep.search.optuna_sampler import make_sampler
from tests.helpers.cluster_helpers import sqlite_store
from tests.sweep.test_sweep_end_to_end import load_sweep

OBJECTIVES = [parse_objective("best_sts_dev:max"), parse_objective("gpu_hours:min")]


@pytest.mark.parametrize("extra, line", [
    (["--objective", "best_sts_dev:max", "--objective", "gpu_hours:down"],
     "error: --objective 'gpu_hours:down': the direction must be max or min, got 'down'"),
    (["--objective", "best_sts_dev:max", "--objective", "params_count:min"],
     "error: --objective 'params_count:min': the trials report no metric 'params_count' and set no numeric setting "
     "of that name (a score such as best_sts_dev, a compute total: gpu_hours, cpu_hours, wall_hours, cpu_seconds, "
     "gpu_seconds, wall_seconds, preparation_seconds, seconds_per_step, evaluation_seconds, checkpoint_seconds, or a "
     "numeric setting such as max_seq_length)"),
    (["--objective", "best_sts_dev:max"], "error: a Pareto front needs at least 2 --objective, got 1"),
    (["--objective", "best_sts_dev:max", "--objective", "pooling:min"],
     "error: --objective 'pooling:min': the trials report no metric 'pooling' and set no numeric setting of that "
     "name (a score such as best_sts_dev, a compute total: gpu_hours, cpu_hours, wall_hours, cpu_seconds, "
     "gpu_seconds, wall_seconds, preparation_seconds, seconds_per_step, evaluation_seconds, checkpoint_seconds, or a "
     "numeric setting such as max_seq_length)"),
    (["--search", "optuna", "--sampler", "noise-gp", "--objective", "best_sts_dev:max", "--objective",
      "gpu_hours:min"],
     "error: --objective best_sts_dev:max --objective gpu_hours:min with --sampler noise-gp: the noise-aware GP "
     "models one objective; search several with --sampler tpe (Optuna's multi-objective TPE)"),
    (["--scheduler", "asha", "--objective", "best_sts_dev:max", "--objective", "gpu_hours:min"],
     "error: --objective best_sts_dev:max --objective gpu_hours:min with --scheduler asha: the scheduler stops "
     "configurations on the selection metric alone, so their costs would be of unequal training; leave one out"),
    (["--race", "--seeds", "3", "--objective", "best_sts_dev:max", "--objective", "gpu_hours:min"],
     "error: --objective best_sts_dev:max --objective gpu_hours:min with --race: the race drops configurations on "
     "the selection metric alone; leave one out"),
])
def test_objectives_that_do_not_fit_are_refused_in_one_line_before_anything_runs(run_quick, extra, line):
    code, err = run_quick(*extra)
    assert code == 2
    assert err.strip() == line


def test_an_objective_is_a_reported_score_a_compute_total_or_a_numeric_setting():
    constants = {"max_seq_length": 32, "pooling": "mean", "select_checkpoint": "best_sts_dev", "dev_file": "dev.csv",
                 "test_file": "test.csv"}
    stages = [("grid", {"noise_ratio": [0.3, 0.6], "pooling": ["cls", "mean"]}),
              ("optuna", {"lr": tune.loguniform(1e-5, 1e-3)})]
    known = {name: known_objective(name, constants, stages) for name in (
        "best_sts_dev", "sts_test_at_best_dev", "gpu_hours", "wall_seconds", "max_seq_length", "noise_ratio", "lr",
        "pooling", "sts_test_last", "params_count")}
    assert known == {"best_sts_dev": True, "sts_test_at_best_dev": True, "gpu_hours": True, "wall_seconds": True,
                     "max_seq_length": True, "noise_ratio": True, "lr": True, "pooling": False,
                     "sts_test_last": False, "params_count": False}


def test_an_objectives_value_comes_from_the_result_in_hours_or_from_the_config():
    result = {"best_sts_dev": 70.5, "gpu_seconds": 1800.0, "wall_seconds": 3600.0}
    config = {"max_seq_length": 64, "pooling": "mean"}
    values = [objective_value(parse_objective(text), result, config) for text in (
        "best_sts_dev:max", "gpu_hours:min", "wall_hours:min", "wall_seconds:min", "max_seq_length:min",
        "cpu_hours:min")]
    assert values[:5] == [70.5, 0.5, 1.0, 3600.0, 64.0]
    assert math.isnan(values[5])
    assert objectives_text(OBJECTIVES) == "best_sts_dev:max, gpu_hours:min"


def test_the_study_is_told_each_configurations_mean_over_its_seeds_on_every_objective():
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    repeater = multi_objective_searcher(OBJECTIVES, make_sampler("tpe"), 2, "best_sts_dev")
    repeater.set_search_properties(None, None, {"lr": tune.loguniform(1e-5, 1e-3)})
    assert repeater.metric == "best_sts_dev"  # what Ray Tune checks every result for
    seeds = {"t0": (70.0, 1800.0), "t1": (72.0, 3600.0), "t2": (60.0, 360.0), "t3": (61.0, 720.0)}
    configs = {trial_id: repeater.suggest(trial_id) for trial_id in seeds}
    assert configs["t0"]["lr"] == configs["t1"]["lr"] != configs["t2"]["lr"] == configs["t3"]["lr"]
    for trial_id, (score, gpu_seconds) in seeds.items():
        repeater.on_trial_complete(trial_id, {"best_sts_dev": score, "gpu_seconds": gpu_seconds})
    study = repeater.searcher._ot_study
    assert study.directions == [optuna.study.StudyDirection.MAXIMIZE, optuna.study.StudyDirection.MINIMIZE]
    assert [trial.values for trial in study.trials] == [[71.0, 0.75], [60.5, pytest.approx(0.15)]]
    first = study.trials[0].user_attrs
    assert first["seed_values"] == {"best_sts_dev:max": [70.0, 72.0], "gpu_hours:min": [0.5, 1.0]}
    assert first["seed_n"] == {"best_sts_dev:max": 2, "gpu_hours:min": 2}
    assert first["seed_se"]["best_sts_dev:max"] == pytest.approx(1.0)


def test_a_configuration_without_a_value_of_every_objective_is_not_told_a_value():
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    repeater = multi_objective_searcher(OBJECTIVES, make_sampler("tpe"), 2, "best_sts_dev")
    repeater.set_search_properties(None, None, {"lr": tune.loguniform(1e-5, 1e-3)})
    for trial_id in ("t0", "t1"):
        repeater.suggest(trial_id)
    repeater.on_trial_complete("t0", {"best_sts_dev": 70.0})
    repeater.on_trial_complete("t1", {"best_sts_dev": 71.0})
    assert repeater.searcher._ot_study.trials[0].state == optuna.trial.TrialState.PRUNED


@pytest.mark.slow
def test_a_sweep_over_two_objectives_searches_them_and_marks_its_pareto_set(tmp_path, monkeypatch, capsys):
    import mlflow

    monkeypatch.chdir(tmp_path)
    module = load_sweep()
    uri = sqlite_store(tmp_path)
    code = module.run_sweep(module.DEFINITION, [
        "--quick", "--output-dir", str(tmp_path / "out"), "--tracking-uri", uri, "--search", "optuna",
        "--num-configs", "2", "--poolings", "cls", "--seeds", "2", "--objective", "best_sts_dev:max",
        "--objective", "wall_hours:min"])
    out = capsys.readouterr().out
    assert code == 0
    pareto_rows = [line for line in out.splitlines() if line.startswith("| ") and ("◆ on the front" in line
                                                                                   or "dominated by" in line)]
    assert len(pareto_rows) == 2
    client = mlflow.MlflowClient(uri)
    sweep = next(run for run in client.search_runs([client.get_experiment_by_name("tsdae_deletion").experiment_id])
                 if "mlflow.parentRunId" not in run.data.tags)
    assert sweep.data.params["objectives"] == "best_sts_dev:max, wall_hours:min"
    tables = [artifact.path for artifact in client.list_artifacts(sweep.info.run_id, "tables")]
    plots = [artifact.path for artifact in client.list_artifacts(sweep.info.run_id, "plots")]
    assert any(path.endswith("_Pareto.md") for path in tables) and "plots/01-pareto.png" in plots
