"""Analysis on runs logged straight into a SQLite MLflow store: cells, tests, markers, exclusions, plots."""

import numpy as np
import pytest
from mlflow.entities import Metric, Param
from mlflow.tracking import MlflowClient
from scipy import stats

import sentsweep.analysis.cli as analysis_cli
from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id
from sentsweep.analysis.significance import bootstrap_interval, compare, paired_items_test
from sentsweep.analysis.tables import build_table, to_frame, to_latex, to_markdown

RNG = np.random.default_rng(7)
# method x w, 3 seeds each; mlm+nm at w=0.1 misses seed 2; tsdae+nm at w=0.01 is barely below mlm+nm.
VALUES = {
    ("mlm+nm", "0.1"): {"0": 70.1, "1": 71.3},
    ("mlm+nm", "0.01"): {"0": 72.0, "1": 72.4, "2": 71.9},
    ("tsdae+nm", "0.1"): {"0": 60.2, "1": 61.0, "2": 59.5},
    ("tsdae+nm", "0.01"): {"0": 71.8, "1": 72.5, "2": 71.7},
}


def log_sweep(uri, experiment="nm_weight"):
    client = MlflowClient(uri)
    experiment_id = client.create_experiment(experiment)
    parent = client.create_run(experiment_id, tags={"role": "sweep", "sweep": experiment}).info.run_id

    def trial(method, w, seed, value, status="FINISHED"):
        run = client.create_run(experiment_id, tags={"sweep_run_id": parent, "mlflow.parentRunId": parent,
                                                     "seed": seed, "config_hash": f"{method}-{w}"}).info.run_id
        params = [Param("method", method), Param("w", w), Param("seed", seed)]
        metrics = [Metric("sts_test_at_best_dev", value, 0, 0), Metric("best_sts_dev", value + 5, 0, 0)]
        client.log_batch(run, metrics=metrics, params=params)
        client.set_terminated(run, status=status)

    for (method, w), by_seed in VALUES.items():
        for seed, value in by_seed.items():
            trial(method, w, seed, value)
    trial("mlm+nm", "0.1", "2", 99.0, status="FAILED")  # the missing seed: failed, must not count
    trial("tsdae+nm", "0.1", "3", 99.0, status="KILLED")  # stopped early by a scheduler
    return parent


@pytest.fixture()
def runs(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    parent = log_sweep(uri)
    assert latest_sweep_run_id(uri, "nm_weight") == parent
    return uri, fetch_trial_runs(uri, "nm_weight", parent)


def test_pivot_cells_equal_numpy_and_mark_the_best(runs):
    _, frame = runs
    table = build_table(frame, ["method"], ["sts_test_at_best_dev"], column_param="w")
    assert table.columns == [0.01, 0.1]
    for (method, w), by_seed in VALUES.items():
        cell = table.cells[((method,), float(w))]
        values = np.array(list(by_seed.values()))
        assert cell.mean == pytest.approx(values.mean(), abs=1e-12)
        assert cell.std == pytest.approx(values.std(ddof=1), abs=1e-12)
        assert cell.n == len(values)
    assert table.best == {0.01: ("mlm+nm",), 0.1: ("mlm+nm",)}
    markdown = to_markdown(table)
    # The failed seed is not averaged in: the cell says it has n=2 while the others have 3.
    assert "| mlm+nm | **72.10 ± 0.26**† | **70.70 ± 0.85** (n=2) |" in markdown
    assert "Runs left out: 1 failed, 1 stopped early." in markdown


def test_runner_up_test_is_paired_on_shared_seeds_and_equals_scipy(runs):
    _, frame = runs
    table = build_table(frame, ["method"], ["sts_test_at_best_dev"], column_param="w")
    best = VALUES[("mlm+nm", "0.01")]
    runner_up = VALUES[("tsdae+nm", "0.01")]
    expected = stats.ttest_rel([best[s] for s in "012"], [runner_up[s] for s in "012"])
    test = table.runner_up_test[0.01]
    assert test.test == "paired t" and test.p_value == pytest.approx(expected.pvalue, rel=1e-12)
    assert not table.significant(0.01)  # p ~ 0.7: the dagger in the Markdown above


def test_welch_test_when_seeds_do_not_match():
    first, second = {"0": 1.0, "1": 2.0, "2": 3.5}, {"5": 5.0, "6": 6.5, "7": 7.0}
    result = compare(first, second)
    expected = stats.ttest_ind([1.0, 2.0, 3.5], [5.0, 6.5, 7.0], equal_var=False)
    assert result.test == "Welch t" and result.p_value == pytest.approx(expected.pvalue, rel=1e-12)


def test_paired_items_test_averages_items_over_seeds_then_pairs_them():
    rng = np.random.default_rng(0)
    first = (rng.random((3, 50)) < 0.6).astype(float).tolist()  # 3 seeds x 50 queries, top-1 outcomes
    second = (rng.random((3, 50)) < 0.4).astype(float).tolist()
    result = paired_items_test(first, second)
    expected = stats.ttest_rel(np.mean(first, axis=0), np.mean(second, axis=0))
    assert (result.statistic, result.p_value, result.n) == pytest.approx((expected.statistic, expected.pvalue, 50))
    with pytest.raises(ValueError, match="differ in shape"):
        paired_items_test(first, [row[:40] for row in second])


def test_bootstrap_interval_matches_scipy_and_brackets_the_mean():
    values = RNG.normal(70, 2, size=8)
    low, high = bootstrap_interval(values)
    reference = stats.bootstrap((values,), np.mean, n_resamples=2000, method="percentile",
                                random_state=np.random.default_rng(0)).confidence_interval
    assert (low, high) == pytest.approx((reference.low, reference.high))
    assert low < values.mean() < high
    assert np.isnan(bootstrap_interval(values[:2])[0])


def test_metrics_as_columns_method_x_task_table(runs):
    _, frame = runs
    table = build_table(frame, ["method", "w"], ["sts_test_at_best_dev", "best_sts_dev"])
    assert table.columns == ["sts_test_at_best_dev", "best_sts_dev"]
    assert table.cells[(("tsdae+nm", 0.1), "best_sts_dev")].mean == pytest.approx(np.mean([65.2, 66.0, 64.5]))
    latex = to_latex(table)
    assert latex.count(r"\textbf{") == 2 and r"\toprule" in latex and "mlm+nm" in latex
    frame_out = to_frame(table)
    assert set(frame_out["n"]) == {2, 3} and frame_out["best"].sum() == 2


def test_compare_and_plot_commands(runs, tmp_path, capsys):
    uri, _ = runs
    assert analysis_cli.main(["compare", "--experiment", "nm_weight", "--tracking-uri", uri,
                              "--first", "method=tsdae+nm", "w=0.1", "--second", "method=tsdae+nm", "w=0.01"]) == 0
    out = capsys.readouterr().out
    expected = stats.ttest_rel([60.2, 61.0, 59.5], [71.8, 72.5, 71.7])
    assert f"paired t-test over 3 seeds: t = {expected.statistic:.3f}, p = {expected.pvalue:.4f}" in out
    output = tmp_path / "plots" / "w.png"
    assert analysis_cli.main(["plot", "--experiment", "nm_weight", "--tracking-uri", uri, "--x", "w",
                              "--lines", "method", "--log-x", "--output", str(output)]) == 0
    assert output.stat().st_size > 1000 and output.with_suffix(".pdf").stat().st_size > 1000


def test_unknown_param_is_named(runs):
    _, frame = runs
    with pytest.raises(Exception, match="'pooling'"):
        build_table(frame, ["pooling"], ["sts_test_at_best_dev"])
