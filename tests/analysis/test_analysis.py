"""Analysis on runs logged straight into a SQLite MLflow store: cells, tests, markers, exclusions, plots."""

import numpy as np
import pandas as pd
import pytest
from mlflow.entities import Metric, Param
from mlflow.tracking import MlflowClient
from scipy import stats

import sentsweep.analysis.cli as analysis_cli
from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id, run_artifact_text
from sentsweep.analysis.significance import bootstrap_interval, compare, paired_items_test
from sentsweep.analysis.tables import build_table, to_frame, to_latex, to_markdown
from sentsweep.errors import InputError
from tests.helpers.cluster_helpers import sqlite_store

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
    trial("tsdae+nm", "0.01", "0", 99.0, status="KILLED")  # interrupted; its seed ran again to the end (--extend)
    return parent


@pytest.fixture()
def runs(tmp_path):
    uri = sqlite_store(tmp_path)
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
    # The failed seed is not averaged in: the cell says it has n=2 while the others have 3. At w=0.01 tsdae+nm is
    # in the best's group (≈); at w=0.1 it is significantly worse (no mark).
    assert "| mlm+nm | **72.10 ± 0.26** | **70.70 ± 0.85** (n=2) |" in markdown
    assert "| tsdae+nm | 72.00 ± 0.44≈ | 60.23 ± 0.75 |" in markdown
    assert "Runs left out: 1 failed, 1 replaced by a finished rerun, 1 stopped early." in markdown


def test_group_tests_are_paired_on_shared_seeds_and_equal_scipy(runs):
    _, frame = runs
    table = build_table(frame, ["method"], ["sts_test_at_best_dev"], column_param="w")
    for w, seeds, in_group in ((0.01, "012", True), (0.1, "01", False)):  # mlm+nm at w=0.1 lacks seed 2
        best, other = VALUES[("mlm+nm", str(w))], VALUES[("tsdae+nm", str(w))]
        expected = stats.ttest_rel([best[s] for s in seeds], [other[s] for s in seeds]).pvalue
        member = table.groups[w].members[("tsdae+nm",)]
        assert member.test == "paired t" and member.shared_seeds == len(seeds)
        # One pair per column: Holm leaves its p-value as it is.
        assert member.p_value == pytest.approx(expected, rel=1e-12) and member.p_adjusted == member.p_value
        assert member.in_best_group == in_group == table.in_best_group(("tsdae+nm",), w)
        assert in_group == (expected >= 0.05)  # p ~ 0.42 at w=0.01, ~ 0.013 at w=0.1


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
    assert set(frame_out.loc[frame_out["best"], "test"]) == {""}
    assert set(frame_out.loc[~frame_out["best"], "test"]) == {"paired t over seeds"}


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


def trial_frame(rows):
    """A runs DataFrame as fetch_trial_runs returns it, from (params, metrics, seed[, status]) tuples."""
    import pandas as pd

    records = []
    for index, (params, metrics, seed, *status) in enumerate(rows):
        records.append({"run_id": f"run{index}", "status": status[0] if status else "FINISHED", "seed": seed,
                        "config_hash": None, "failure_reason": None}
                       | {f"params.{k}": v for k, v in params.items()}
                       | {f"metrics.{k}": float(v) for k, v in metrics.items()})
    return pd.DataFrame(records)


def deletion_run(ratio, pooling, seed, test, dev, best_step, total_steps=60, status="FINISHED"):
    params = {"noise_ratio": ratio, "pooling": pooling, "select_checkpoint": "best_sts_dev"}
    metrics = {"sts_test_at_best_dev": test, "best_sts_dev": dev, "best_step": best_step, "total_steps": total_steps}
    return params, metrics, seed, status


def test_cells_show_the_selected_steps_and_the_footnote_names_untrained_cells():
    frame = trial_frame([
        deletion_run("0.3", "cls", "0", 54.50, 39.58, 0), deletion_run("0.3", "cls", "1", 54.50, 39.58, 0),
        deletion_run("0.3", "mean", "0", 61.43, 56.49, 20), deletion_run("0.3", "mean", "1", 61.10, 59.03, 40),
        deletion_run("0.6", "cls", "0", 54.50, 39.58, 0), deletion_run("0.6", "cls", "1", 40.00, 42.00, 60),
        deletion_run("0.6", "mean", "0", 62.17, 56.96, 20), deletion_run("0.6", "mean", "1", 62.99, 58.60, 20),
        deletion_run("0.6", "mean", "2", 99.0, 99.0, 60, status="FAILED"),  # left out: its step is not shown
    ])
    table = build_table(frame, ["noise_ratio", "pooling"], ["sts_test_at_best_dev", "best_sts_dev"])
    assert table.cells[((0.3, "mean"), "best_sts_dev")].steps == {"0": 20, "1": 40}
    markdown = to_markdown(table)
    # Two seeds each: nothing is significantly worse than the best after Holm over 6 pairs, all in the group.
    assert "| 0.3 | cls | 54.50 ± 0.00≈ (untrained) | 39.58 ± 0.00≈ (untrained) |" in markdown
    assert "| 0.6 | cls | 47.25 ± 10.25≈ (untrained, step 60) | 40.79 ± 1.71≈ (untrained, step 60) |" in markdown
    assert ("two-sided paired t-test over seeds; correction: Holm, the p-values of all pairs of configurations in a "
            "column adjusted together (6 pairs per column); alpha = 0.05).") in markdown
    # Bold and the group mark stay on the score, the steps follow them.
    assert "| 0.6 | mean | **62.58 ± 0.58** (step 20) | **57.78 ± 1.16** (step 20) |" in markdown
    assert "| 0.3 | mean | 61.27 ± 0.23≈ (step 20, 40) | 57.76 ± 1.80≈ (step 20, 40) |" in markdown
    assert ("Untrained model kept by every seed in: noise_ratio=0.3, pooling=cls. No trained checkpoint beat "
            "step 0 on STS dev there, so those cells show the untrained model's score.") in markdown
    assert "Untrained model kept by some seeds in: noise_ratio=0.6, pooling=cls (1 of 2 seeds)." in markdown
    assert "Runs left out: 1 failed." in markdown

    latex = to_latex(table)
    assert (r"0.3 & cls & 54.50 $\pm$ 0.00$^{\approx}$ (untrained) & 39.58 $\pm$ 0.00$^{\approx}$ (untrained) \\"
            in latex)
    assert r"\textbf{62.58 $\pm$ 0.58} (step 20)" in latex and r"$^{\approx}$: not significantly worse" in latex
    assert "≈" not in latex and "†" not in latex
    assert r"kept by every seed in: noise\_ratio=0.3, pooling=cls." in latex
    cells = to_frame(table).set_index(["noise_ratio", "pooling", "metric"])["selected_steps"]
    assert cells[(0.3, "cls", "best_sts_dev")] == "0;0" and cells[(0.6, "cls", "sts_test_at_best_dev")] == "0;60"
    assert cells[(0.3, "mean", "best_sts_dev")] == "20;40"


def test_no_untrained_note_when_every_cell_trained_and_a_missing_seed_still_shows_n():
    frame = trial_frame([
        deletion_run("0.3", "mean", "0", 61.43, 56.49, 20), deletion_run("0.3", "mean", "1", 61.10, 59.03, 40),
        deletion_run("0.6", "cls", "0", 40.00, 42.00, 60), deletion_run("0.6", "cls", "1", 41.00, 42.50, 40),
        deletion_run("0.6", "mean", "0", 62.17, 56.96, 60),
    ])
    markdown = to_markdown(build_table(frame, ["noise_ratio", "pooling"], ["sts_test_at_best_dev"]))
    assert "| 0.6 | mean | **62.17 ± n/a** (step 60) (n=1) |" in markdown
    # The best has one seed: no other configuration shares 2 seeds with it, none is tested, all stay in its group.
    assert "| 0.6 | cls | 40.50 ± 0.71≈ (step 40, 60) |" in markdown
    assert ("Not tested (fewer than 2 seeds shared with the best), so kept in the group: noise_ratio=0.3, "
            "pooling=mean; noise_ratio=0.6, pooling=cls.") in markdown
    assert "In parentheses: the training step of the checkpoint" in markdown
    assert "Untrained model" not in markdown


def test_selected_step_follows_each_metric_or_the_runs_selection_rule():
    def run(rule, seed, **metrics):
        return {"method": "tsdae", "select_checkpoint": rule}, metrics, seed

    frame = trial_frame([
        # Selected by validation loss at step 0, while its best STS dev was at step 40.
        run("validation_loss", "0", sts_test_at_best_validation_loss=60.0, best_sts_dev=58.0, best_step=40,
            best_validation_step=0, distractors_top1=30.0, total_steps=60),
        run("validation_loss", "1", sts_test_at_best_validation_loss=61.0, best_sts_dev=59.0, best_step=20,
            best_validation_step=0, distractors_top1=32.0, total_steps=60),
    ])
    table = build_table(frame, ["method"], ["sts_test_at_best_validation_loss", "best_sts_dev", "distractors_top1"])
    markdown = to_markdown(table)
    assert "| tsdae | **60.50 ± 0.71** (untrained) | **58.50 ± 0.71** (step 20, 40) | **31.00 ± 1.41** (untrained) |" \
        in markdown
    assert ("Untrained model kept by every seed in: method=tsdae (sts_test_at_best_validation_loss, "
            "distractors_top1). No trained checkpoint beat step 0 on validation loss there") in markdown

    last = trial_frame([run("last", "0", sts_test_last=50.0, sts_dev=45.0, best_step=0, teacher_sts_dev=80.0,
                            total_steps=100)])
    markdown = to_markdown(build_table(last, ["method"], ["sts_test_last", "sts_dev", "teacher_sts_dev"]))
    assert "| tsdae | **50.00 ± n/a** (step 100) | **45.00 ± n/a** (step 100) | **80.00 ± n/a** |" in markdown
    assert "Untrained model" not in markdown


def test_runs_without_training_steps_show_no_step():
    # A lexical baseline reports best_step 0 but trains nothing (no total_steps); older runs lack the metrics.
    frame = trial_frame([
        ({"method": "bm25"}, {"sts_test_at_best_dev": 50.0, "best_step": 0}, "0"),
        ({"method": "bm25"}, {"sts_test_at_best_dev": 52.0, "best_step": 0}, "1"),
        ({"method": "tsdae"}, {"sts_test_at_best_dev": 51.5, "best_step": 20, "total_steps": 60}, "0"),
        ({"method": "tsdae"}, {"sts_test_at_best_dev": 52.1, "best_step": 0, "total_steps": 60}, "1"),
    ])
    table = build_table(frame, ["method"], ["sts_test_at_best_dev"])
    markdown = to_markdown(table)
    assert "| bm25 | 51.00 ± 1.41≈ |" in markdown  # in the best's group: not significantly worse on 2 seeds
    assert "| tsdae | **51.80 ± 0.42** (untrained, step 20) |" in markdown
    assert "some seeds in: method=tsdae (1 of 2 seeds)." in markdown and "bm25 (" not in markdown
    assert to_frame(table).set_index("method").loc["bm25", "selected_steps"] == ""
    older = trial_frame([({"method": "tsdae"}, {"sts_test_at_best_dev": 55.0}, seed) for seed in "01"])
    assert "(" not in to_markdown(build_table(older, ["method"], ["sts_test_at_best_dev"])).splitlines()[2]


def test_a_missing_artifact_reads_as_none_and_an_unreadable_one_names_mlflows_error(tmp_path, monkeypatch):
    uri = sqlite_store(tmp_path)
    client = MlflowClient(uri)
    run_id = client.create_run(client.create_experiment("artifacts")).info.run_id
    client.log_text(run_id, "{}", "present.json")
    assert run_artifact_text(uri, run_id, "present.json") == "{}"
    assert run_artifact_text(uri, run_id, "per_query.json") is None
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    with pytest.raises(InputError, match=rf"cannot read per_query.json of run {run_id} from MLflow at "
                                         r"http://127.0.0.1:9: .*Max retries exceeded"):
        run_artifact_text("http://127.0.0.1:9", run_id, "per_query.json")


def test_a_report_accounts_for_every_run_shown_or_left_out_with_its_reason(runs, tmp_path):
    """Stage 1 of NM runs methods without w: they are a column of their own ("no w") and dashed lines, not dropped;
    a seed a race ran ahead and did not count is left out with that reason, as are failed and stopped runs."""
    from sentsweep.analysis.plots import metric_figure
    from sentsweep.analysis.report import ReportRequest, run_account, write_report

    _, frame = runs
    finished = frame[frame["status"] == "FINISHED"]
    ahead = finished.iloc[[0]].assign(run_id="ahead", seed="7", race_not_counted="a seed run ahead")
    stage_1 = finished.iloc[[0, 1]].assign(run_id=["s0", "s1"], seed=["0", "1"], **{
        "params.method": "simcse", "params.w": None, "params.stage": "Table 6.10 rows",
        "metrics.sts_test_at_best_dev": [60.0, 62.0]})
    frame = pd.concat([frame, ahead, stage_1], ignore_index=True)
    account = run_account(frame, "sts_test_at_best_dev", "w")
    assert account.total == len(frame) == 17
    assert (account.in_table, account.unset, account.unset_stages) == (13, 2, ("Table 6.10 rows",))
    assert account.left_out == {"failed": 1, "not counted by the race": 1, "replaced by a finished rerun": 1,
                                "stopped early": 1}
    table = build_table(frame, ["method"], ["sts_test_at_best_dev"], column_param="w")
    assert table.columns == [0.01, 0.1, "no w"]
    assert table.cells[(("simcse",), "no w")].by_seed == {"0": 60.0, "1": 62.0}
    assert sum(cell.n for cell in table.cells.values()) == account.in_table
    markdown = to_markdown(table)
    assert "| simcse | – | – | **61.00 ± 1.41** (n=2) |" in markdown
    assert "Runs left out: 1 failed, 1 not counted by the race, 1 replaced by a finished rerun, 1 stopped early." \
        in markdown and '2 without w in column "no w"' in markdown
    request = ReportRequest(experiment="nm_weight", rows=("method",), columns="w", metric="sts_test_at_best_dev",
                            lines=("method",), output=str(tmp_path / "report.md"))
    text = write_report(frame, request).read_text(encoding="utf-8")
    assert ("from 17 trial runs in MLflow (experiment `nm_weight`): 13 in the table, 2 of them without w (stage "
            "'Table 6.10 rows'): the column \"no w\" and dashed lines in the plot; left out: 1 failed, 1 not counted "
            "by the race, 1 replaced by a finished rerun, 1 stopped early.") in " ".join(text.split())
    figure = metric_figure(frame, "w", "sts_test_at_best_dev", ["method"])
    assert sorted(figure.legends[0].get_texts()[i].get_text() for i in range(3)) == [
        "mlm+nm", "simcse (no w)", "tsdae+nm"]


def test_a_run_a_race_stopped_at_a_rung_is_read_at_that_step_shown_as_stopped_and_kept_out_of_the_group(tmp_path):
    """A race over steps dropped configuration "cls" at step 20; its trials trained on to step 30 before the stop
    reached them. The table reads them at step 20 (MLflow's metric history), says so, and leaves them out of the
    best and its group; compute stays as logged. A later --extend that trains one of those seeds to its end
    replaces that seed's stopped run."""
    uri = sqlite_store(tmp_path)
    client = MlflowClient(uri)
    experiment = client.create_experiment("tsdae_deletion")
    parent = client.create_run(experiment, tags={"role": "sweep", "sweep": "tsdae_deletion"}).info.run_id

    def trial(pooling, seed, dev_by_step, status, stopped_at=None):
        tags = {"sweep_run_id": parent, "seed": seed, "config_hash": pooling}
        run = client.create_run(experiment, tags=tags | ({"race_stopped_at_step": str(stopped_at)} if stopped_at
                                                         else {})).info.run_id
        best = float("-inf")
        metrics = []
        for step, dev in dev_by_step.items():
            best = max(best, dev)
            metrics += [Metric("best_sts_dev", best, 0, step), Metric("wall_seconds", step / 10, 0, step),
                        Metric("total_steps", 60, 0, step), Metric("best_step", step, 0, step)]
        client.log_batch(run, metrics=metrics, params=[Param("pooling", pooling), Param("seed", seed)])
        client.set_terminated(run, status=status)

    for seed, shift in (("0", 0.0), ("1", 0.4), ("2", -0.3)):
        trial("mean", seed, {10: 50 + shift, 20: 55 + shift, 40: 60 + shift, 60: 61 + shift}, "FINISHED")
        trial("max", seed, {10: 49 + shift, 20: 54 + shift, 40: 59.5 - shift, 60: 60.5 - shift}, "FINISHED")
    trial("cls", "0", {10: 30.0, 20: 31.0, 30: 45.0}, "KILLED", stopped_at=20)
    trial("cls", "1", {10: 30.5, 20: 32.0, 30: 44.0}, "KILLED", stopped_at=20)
    frame = fetch_trial_runs(uri, "tsdae_deletion", parent)
    stopped = frame[frame["params.pooling"] == "cls"].set_index("seed")
    assert stopped.loc["0", "metrics.best_sts_dev"] == 31.0 and stopped.loc["1", "metrics.best_sts_dev"] == 32.0
    assert stopped.loc["0", "metrics.wall_seconds"] == 3.0  # what ran: to step 30

    table = build_table(frame, ["pooling"], ["best_sts_dev"])
    markdown = to_markdown(table)
    assert "| cls | 31.50 ± 0.71 (step 20) (stopped at step 20 by the race) (n=2) |" in markdown
    assert "| mean | **61.03 ± 0.35** (step 60) |" in markdown and "| max | 60.47 ± 0.35≈ (step 60) |" in markdown
    assert "Runs left out: none." in markdown and "Stopped by the race: the values of a configuration" in markdown
    assert ("correction: Holm, the p-values of all pairs of configurations in a column adjusted together (1 pair); "
            "alpha = 0.05).") in markdown  # mean and max only
    row = to_frame(table).set_index("pooling").loc["cls"]
    assert not row["best"] and not row["in_best_group"] and row["test"].startswith("stopped by the race")
    # a published value is checked against runs trained to the end only
    from sentsweep.analysis.reproduction import PublishedValue, check_target

    frame.loc[frame["params.pooling"] == "cls", "status"] = "FINISHED"  # (one trained to its end before the stop)
    def cell(pooling: str) -> dict:
        return check_target(frame, PublishedValue({"pooling": pooling}, "best_sts_dev", 78.0, "TSDAE App. A")).by_seed

    assert cell("cls") == {} and len(cell("mean")) == 3

    trial("cls", "1", {10: 30.5, 20: 32.0, 40: 50.0, 60: 52.0}, "FINISHED")  # an --extend ran seed 1 to its end
    table = build_table(fetch_trial_runs(uri, "tsdae_deletion", parent), ["pooling"], ["best_sts_dev"])
    assert table.cells[(("cls",), "best_sts_dev")].by_seed == {"0": 31.0, "1": 52.0}
    assert table.cells[(("cls",), "best_sts_dev")].stopped == {"0": 20}
    assert table.excluded == {"replaced by a finished rerun": 1}
