"""A sweep's configurations as a search sees them: seed means, their importance with the seeds' spread, and their
export to an Optuna study (sentsweep.analysis.seed_means, importance, optuna_study; `sentsweep analyze importance`
and `to-optuna`)."""

import math

import numpy as np
import optuna
import pandas as pd
import pytest
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend

import sentsweep.analysis.cli as analysis_cli
from sentsweep.analysis.importance import param_importances
from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id
from sentsweep.analysis.seed_means import configuration_means
from tests.analysis.test_analysis import VALUES, log_sweep
from tests.helpers.cluster_helpers import sqlite_store


@pytest.fixture()
def store(tmp_path):
    uri = sqlite_store(tmp_path)
    log_sweep(uri)
    return uri


def test_each_configuration_holds_its_counted_seeds_mean_and_standard_error(store):
    runs = fetch_trial_runs(store, "nm_weight", latest_sweep_run_id(store, "nm_weight"))
    configurations, swept = configuration_means(runs, "sts_test_at_best_dev")
    assert swept == ["method", "w"]  # seed is not swept
    assert len(configurations) == len(VALUES)
    for configuration in configurations:
        expected = VALUES[(configuration.params["method"], str(configuration.params["w"]))]
        values = np.array(list(expected.values()))
        assert configuration.by_seed == expected  # the failed, stopped and replaced runs are left out
        assert configuration.mean == pytest.approx(values.mean())
        assert configuration.standard_error == pytest.approx(values.std(ddof=1) / math.sqrt(len(values)))
        assert 0 < configuration.start_time <= configuration.end_time


def test_to_optuna_writes_one_trial_per_configuration_and_refuses_an_existing_file(store, tmp_path, capsys):
    journal = tmp_path / "sweep.journal"
    arguments = ["to-optuna", "--experiment", "nm_weight", "--tracking-uri", store, "--output", str(journal)]
    assert analysis_cli.main(arguments) == 0
    assert f"wrote study 'nm_weight' to {journal}: 4 trials" in capsys.readouterr().out
    study = optuna.load_study(study_name="nm_weight", storage=JournalStorage(JournalFileBackend(str(journal))))
    assert study.user_attrs == {"metric": "sts_test_at_best_dev"}
    assert len(study.trials) == len(VALUES)
    for trial in study.trials:
        expected = VALUES[(trial.params["method"], str(trial.params["w"]).rstrip("0"))]
        assert trial.value == pytest.approx(np.mean(list(expected.values())))
        assert trial.user_attrs["by_seed"] == expected and trial.user_attrs["n"] == len(expected)
        assert trial.user_attrs["standard_error"] == pytest.approx(
            np.std(list(expected.values()), ddof=1) / math.sqrt(len(expected)))
    assert study.best_value == pytest.approx(np.mean([72.0, 72.4, 71.9]))
    before = journal.read_bytes()
    assert analysis_cli.main(arguments) == 2
    assert capsys.readouterr().err == (f"error: {journal} exists: an export writes a new journal file (remove it "
                                       "or choose another path)\n")
    assert journal.read_bytes() == before


def synthetic_runs(effect: float, noise: float, seeds: int = 3) -> pd.DataFrame:
    """A 4 x 3 grid of params a (adds `effect` per level) and b (no effect), each seed's value off by N(0, noise)."""
    rng = np.random.default_rng(1)
    rows = []
    for a in range(4):
        for b in ("x", "y", "z"):
            for seed in range(seeds):
                rows.append({"run_id": f"{a}{b}{seed}", "status": "FINISHED", "seed": str(seed),
                             "config_hash": f"{a}{b}", "params.a": str(a), "params.b": b, "params.seed": str(seed),
                             "metrics.m": 50 + effect * a + rng.normal(0, noise)})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("evaluator", ["fanova", "ped-anova"])
def test_a_param_with_an_effect_is_above_seed_noise_and_one_without_is_within_it(evaluator):
    configurations, swept = configuration_means(synthetic_runs(effect=5.0, noise=0.5), "m")
    ranked = param_importances(configurations, swept, evaluator, resamples=20)
    by_param = {item.param: item for item in ranked}
    assert [item.param for item in ranked][0] == "a"
    assert not by_param["a"].within_seed_noise and by_param["b"].within_seed_noise
    assert by_param["a"].low <= by_param["a"].importance <= by_param["a"].high


def test_an_effect_smaller_than_the_seeds_spread_is_within_seed_noise():
    configurations, swept = configuration_means(synthetic_runs(effect=0.05, noise=3.0), "m")
    ranked = param_importances(configurations, swept, "fanova", resamples=20)
    assert all(item.within_seed_noise for item in ranked)


def test_importance_prints_the_method_and_the_seeds_spread(store, capsys):
    assert analysis_cli.main(["importance", "--experiment", "nm_weight", "--tracking-uri", store,
                              "--resamples", "10"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| param | importance | 95% interval over seed resamples | seed-noise level (95th "
                          "percentile) | |\n")
    assert len([line for line in out.splitlines() if line.startswith(("| method |", "| w |"))]) == 2
    assert "Method: fANOVA (Optuna's FanovaImportanceEvaluator, 16 trees, seed 0" in out
    assert "over the means of sts_test_at_best_dev of 4 configurations." in out


@pytest.mark.parametrize("arguments, line", [
    (["importance", "--evaluator", "shap"], "error: --evaluator must be one of fanova, ped-anova, got 'shap'\n"),
    (["importance", "--resamples", "0"], "error: --resamples must be at least 1, got 0\n"),
    (["importance", "--params", "lr"], "error: --params: 'lr' not swept (swept: method, w)\n"),
    (["to-optuna", "--metric", "sts_dev", "--output", "x.journal"],
     "error: runs have no metric 'sts_dev' (they have: best_sts_dev, sts_test_at_best_dev)\n"),
])
def test_bad_input_is_one_line_and_exit_2(store, capsys, arguments, line):
    assert analysis_cli.main([*arguments, "--experiment", "nm_weight", "--tracking-uri", store]) == 2
    assert capsys.readouterr().err == line
