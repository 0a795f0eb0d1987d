"""Suite averages with a paired bootstrap interval over seeds and items, and rank intervals (analysis.suite)."""

import json
import time

import numpy as np
import pandas as pd
import pytest

from sentsweep.analysis.suite import (
    SUITES,
    bootstrap_suite,
    suite_intervals,
    suite_metrics,
    to_frame,
    to_markdown,
)
from sentsweep.errors import InputError
from tests.helpers.cluster_helpers import sqlite_store

STS = list(SUITES["sts"])
USEB = list(SUITES["useb"])


def make_runs(scores: dict, status: dict | None = None) -> pd.DataFrame:
    """Trial runs as fetch_trial_runs gives them: `scores` is {method: {seed: {metric: value}}}, one run per seed
    (a metric absent from a seed's dict is a run that did not log it)."""
    rows = []
    for method, by_seed in scores.items():
        for seed, metrics in by_seed.items():
            rows.append({"run_id": f"{method}-{seed}", "status": (status or {}).get((method, seed), "FINISHED"),
                         "seed": str(seed), "params.method": method}
                        | {f"metrics.{name}": value for name, value in metrics.items()})
    return pd.DataFrame(rows)


def grid_runs(values: np.ndarray, metrics: list[str], methods: list[str]) -> pd.DataFrame:
    """Runs from values[method, task, seed]."""
    return make_runs({method: {str(s): {m: float(values[c, t, s]) for t, m in enumerate(metrics)}
                               for s in range(values.shape[2])} for c, method in enumerate(methods)})


def test_suites_name_the_metrics_the_tasks_log():
    from sentsweep.analysis.tables import per_query_name
    from sentsweep.tasks import STS_TASK_NAMES, main_metric

    assert sorted(SUITES["sts"]) == sorted(main_metric(name) for name in STS_TASK_NAMES)
    assert SUITES["useb"] == tuple(main_metric(name) for name in ("askubuntu", "cqadupstack", "twitterpara",
                                                                  "scidocs"))
    # the per-query names the USEB tasks store beside their main metric: "<task>_ap"
    assert {metric: per_query_name(metric) for metric in USEB} == {
        "askubuntu_map": "askubuntu_ap", "cqadupstack_map_at_100": "cqadupstack_ap", "twitterpara_ap": None,
        "scidocs_map": "scidocs_ap"}
    assert suite_metrics(["a", "b", "a"]) == ["a", "b"]


def test_constant_difference_gives_shifted_interval_and_fixed_ranks():
    rng = np.random.default_rng(3)
    task_levels = rng.uniform(60, 85, size=(1, 7, 1))
    seed_effects = rng.normal(0, 1.5, size=(1, 1, 5))  # seeds are matched: each seed moves every method alike
    noisy = task_levels + seed_effects + rng.normal(0, 0.5, size=(1, 7, 5))
    values = np.concatenate([noisy, noisy + 3.0, np.broadcast_to(task_levels - 50, (1, 7, 5))])
    result = suite_intervals(grid_runs(values, STS, ["a", "b", "flat"]), ["method"], "sts")
    a, b, flat = (result.row(m) for m in ("a", "b", "flat"))
    assert (b.rank, b.rank_low, b.rank_high) == (1, 1, 1)
    assert (a.rank, a.rank_low, a.rank_high) == (2, 2, 2)
    assert (flat.rank, flat.rank_low, flat.rank_high) == (3, 3, 3)
    # b is a + 3 on every task and seed, and seeds are resampled jointly, so its interval is a's plus 3 exactly
    assert a.ci_high - a.ci_low > 0.1
    assert (b.ci_low, b.ci_high, b.mean) == pytest.approx((a.ci_low + 3, a.ci_high + 3, a.mean + 3), abs=1e-9)
    # no seed-to-seed variation: the interval collapses onto the estimate
    assert flat.ci_low == pytest.approx(flat.mean, abs=1e-9) and flat.ci_high == pytest.approx(flat.mean, abs=1e-9)
    assert np.all(result.replicates[:, 0] - result.replicates[:, 1] == pytest.approx(3.0, abs=1e-9))
    assert [row.config for row in result.rows] == [("b",), ("a",), ("flat",)]
    lower = suite_intervals(grid_runs(values, STS, ["a", "b", "flat"]), ["method"], "sts", higher_is_better=False)
    assert [(lower.row(m).rank_low, lower.row(m).rank_high) for m in ("flat", "a", "b")] == [(1, 1), (2, 2), (3, 3)]


def test_point_estimate_is_the_mean_over_tasks_of_the_mean_over_complete_seeds():
    metrics = ["t1", "t2", "t3"]
    scores = {
        "x": {"0": {"t1": 70.0, "t2": 50.0, "t3": 30.0}, "1": {"t1": 72.0, "t2": 51.0, "t3": 33.0},
              "2": {"t1": 74.0, "t2": 55.0}},  # seed 2 has no t3: left out of every task of x
        "y": {"0": {"t1": 60.0, "t2": 40.0, "t3": 20.0}, "1": {"t1": 61.0, "t2": 45.0, "t3": 26.0},
              "2": {"t1": 68.0, "t2": 41.0, "t3": 29.0}, "3": {"t1": 99.0, "t2": 99.0, "t3": 99.0}},
        "z": {"0": {"t1": 80.0, "t2": 80.0}, "1": {"t1": 81.0, "t2": 82.0}},  # no t3 at all: not ranked
    }
    runs = make_runs(scores, status={("y", "3"): "FAILED"})
    result = suite_intervals(runs, ["method"], metrics, resamples=500)
    x, y, z = (result.row(m) for m in "xyz")
    assert x.mean == pytest.approx(np.mean([np.mean([70, 72]), np.mean([50, 51]), np.mean([30, 33])]), abs=1e-12)
    assert y.mean == pytest.approx(np.mean([np.mean([60, 61, 68]), np.mean([40, 45, 41]), np.mean([20, 26, 29])]),
                                   abs=1e-12)
    assert x.task_means == pytest.approx({"t1": 71.0, "t2": 50.5, "t3": 31.5})
    assert (x.n_seeds, y.n_seeds, x.seeds) == (2, 3, ("0", "1"))
    assert "seed 2 (no t3)" in x.note
    assert not z.ranked and "no finished run with t3" in z.note
    assert (x.rank, y.rank) == (1, 2)
    assert result.excluded == {"failed": 1}
    text = to_markdown(result)
    assert "| x | 51.00 |" in text and "| 1 | [1, 1] | 2 | 3/3 |" in text
    assert "| z | – | – | – | – | 0 | 2/3 |" in text
    assert "1 failed" in text and "seed 2 (no t3)" in text and "no finished run with t3" in text
    assert "seeds only for: t1, t2, t3" in text and "items also resampled for: none" in text
    frame = to_frame(result)
    assert list(frame["method"]) == ["x", "y", "z"] and frame.loc[0, "seeds"] == "0;1"


def reference_replicates(values, items, resamples, random_seed):
    """A loop over replicates, drawing seeds then each item task's items one replicate at a time (the same stream
    as the vectorised draws): a task's score is 100 x the mean of the drawn items' outcomes, a suite average the
    mean over tasks of the mean over the drawn seeds, each counted as often as drawn."""
    rng = np.random.default_rng(random_seed)
    configs, tasks, seeds = values.shape
    seed_draws = [rng.integers(0, seeds, size=seeds) for _ in range(resamples)]
    item_draws = {t: [rng.integers(0, items[t].shape[2], size=items[t].shape[2]) for _ in range(resamples)]
                  for t in sorted(items)}
    out = np.empty((resamples, configs))
    for b in range(resamples):
        for c in range(configs):
            task_scores = []
            for t in range(tasks):
                per_seed = []
                for s in seed_draws[b]:
                    if t in items:
                        per_seed.append(100 * np.mean([items[t][c, s, i] for i in item_draws[t][b]]))
                    else:
                        per_seed.append(values[c, t, s])
                task_scores.append(sum(per_seed) / len(per_seed))
            out[b, c] = sum(task_scores) / len(task_scores)
    return out


def test_bootstrap_equals_a_loop_over_replicates_with_the_same_draws():
    rng = np.random.default_rng(11)
    methods, seeds = ["m0", "m1", "m2"], 4
    items = {0: rng.uniform(0, 1, size=(3, seeds, 9)), 1: rng.uniform(0, 1, size=(3, seeds, 6)),
             3: rng.uniform(0, 1, size=(3, seeds, 5))}
    values = rng.normal(50, 2, size=(3, 4, seeds))
    values[:, 0, :] = 100 * items[0].mean(axis=2)  # askubuntu_map is 100 x the mean per-query AP
    values[:, 1, :] = 100 * items[1].mean(axis=2) + 0.5  # a macro average: not the mean over its queries
    values[:, 3, :] = 100 * items[3].mean(axis=2)
    item_map = {(m,): {str(s): {"askubuntu_ap": list(items[0][c, s]), "cqadupstack_ap": list(items[1][c, s]),
                                "scidocs_map": list(items[3][c, s])}  # keyed by the metric itself works too
                       for s in range(seeds)} for c, m in enumerate(methods)}
    result = suite_intervals(grid_runs(values, USEB, methods), ["method"], "useb", item_map, resamples=300,
                             random_seed=5)
    assert result.item_tasks == ["askubuntu_map", "scidocs_map"]
    assert result.seed_only_tasks == ["cqadupstack_map_at_100", "twitterpara_ap"]
    expected = reference_replicates(values, {0: items[0], 3: items[3]}, 300, 5)
    order = [methods.index(row.config[0]) for row in result.ranked]
    np.testing.assert_allclose(result.replicates, expected[:, order], rtol=0, atol=1e-9)
    for column, c in enumerate(order):
        row = result.ranked[column]
        assert (row.ci_low, row.ci_high) == pytest.approx(tuple(np.percentile(expected[:, c], [2.5, 97.5])), abs=1e-9)
        ranks = np.sort([1 + sum(expected[b, other] > expected[b, c] for other in range(3)) for b in range(300)])
        # inverted-CDF quantiles: the ceil(q x 300)-th smallest rank
        assert (row.rank_low, row.rank_high) == (ranks[int(np.ceil(0.025 * 300)) - 1],
                                                 ranks[int(np.ceil(0.975 * 300)) - 1])
    text = to_markdown(result)
    assert "items also resampled for: askubuntu_map, scidocs_map;" in text
    assert "cqadupstack_map_at_100: 100 x the mean of its 6 item outcomes is not the metric" in text
    assert "12 runs so" in text


def test_coverage_of_simulated_suites_is_close_to_nominal():
    rng = np.random.default_rng(2024)
    suites, seeds, tasks = 300, 40, 7
    hits = 0
    for k in range(suites):
        true_task_means = rng.uniform(40, 90, size=(2, tasks, 1))
        values = true_task_means + rng.normal(0, 2, size=(2, 1, seeds)) + rng.normal(0, 1, size=(2, tasks, seeds))
        replicates = bootstrap_suite(values, np.ones((2, seeds), bool), resamples=1000, rng=np.random.default_rng(k))
        low, high = np.percentile(replicates, [2.5, 97.5], axis=0)
        truth = true_task_means.mean(axis=(1, 2))
        hits += int(((low <= truth) & (truth <= high)).sum())
    assert abs(hits / (2 * suites) - 0.95) <= 0.04, hits / (2 * suites)


def useb_runs_and_items(spread: float):
    """2 methods x 3 seeds on USEB; per-query AP for askubuntu whose mean x 100 is the metric, varying by `spread`
    around it (0: every query scores the same)."""
    rng = np.random.default_rng(8)
    values = rng.uniform(20, 60, size=(1, 4, 1)) + rng.normal(0, 0.5, size=(2, 4, 3)) + np.array([[[0.0]], [[1.0]]])
    item_map = {}
    for c, method in enumerate(["p", "q"]):
        for s in range(3):
            noise = rng.normal(0, 1, size=40)
            outcomes = values[c, 0, s] / 100 + spread * (noise - noise.mean())
            values[c, 0, s] = 100 * outcomes.mean()
            item_map.setdefault((method,), {})[str(s)] = {"askubuntu_ap": outcomes.tolist()}
    return grid_runs(values, USEB, ["p", "q"]), item_map


def test_item_resampling_widens_the_interval_only_when_items_vary():
    runs, varying = useb_runs_and_items(spread=0.2)
    seeds_only = suite_intervals(runs, ["method"], "useb")
    with_items = suite_intervals(runs, ["method"], "useb", varying)
    assert with_items.item_tasks == ["askubuntu_map"]
    for method in "pq":
        a, b = seeds_only.row(method), with_items.row(method)
        assert a.mean == b.mean
        assert b.ci_high - b.ci_low > (a.ci_high - a.ci_low) * 1.2
    runs, constant = useb_runs_and_items(spread=0.0)
    seeds_only = suite_intervals(runs, ["method"], "useb")
    with_items = suite_intervals(runs, ["method"], "useb", constant)
    assert with_items.item_tasks == ["askubuntu_map"]
    np.testing.assert_allclose(with_items.replicates, seeds_only.replicates, rtol=0, atol=1e-9)
    for method in "pq":
        a, b = seeds_only.row(method), with_items.row(method)
        assert (b.ci_low, b.ci_high) == pytest.approx((a.ci_low, a.ci_high), abs=1e-9)
    assert "items also resampled for: askubuntu_map;" in to_markdown(with_items)
    assert "seeds only for: cqadupstack_map_at_100, twitterpara_ap, scidocs_map" in to_markdown(with_items)


def test_partial_or_mismatched_item_outcomes():
    runs, items = useb_runs_and_items(spread=0.2)
    del items[("q",)]["1"]
    result = suite_intervals(runs, ["method"], "useb", items)
    assert result.item_tasks == []
    assert "askubuntu_map: item outcomes missing for method=q seed 1" in to_markdown(result)
    runs, items = useb_runs_and_items(spread=0.2)
    items[("q",)]["1"]["askubuntu_ap"] = items[("q",)]["1"]["askubuntu_ap"][:-1]
    with pytest.raises(InputError, match="askubuntu_map.*differ in length"):
        suite_intervals(runs, ["method"], "useb", items)


def test_unknown_suite_and_missing_metric_are_input_errors_naming_them():
    runs = grid_runs(np.ones((1, 6, 2)), STS[:6], ["a"])
    with pytest.raises(InputError, match=r"unknown suite 'stss'; did you mean 'sts'"):
        suite_intervals(runs, ["method"], "stss")
    with pytest.raises(InputError, match=r"no metric named 'sickr_spearman' \(suite 'sts'"):
        suite_intervals(runs, ["method"], "sts")
    with pytest.raises(InputError, match="'nope'"):
        suite_intervals(runs, ["method"], ["sts12_wmean_spearman", "nope"])
    with pytest.raises(InputError, match="param named 'pooling'"):
        suite_intervals(runs, ["method", "pooling"], STS[:6])


def test_mismatched_seed_sets_stay_paired_and_are_shown():
    rng = np.random.default_rng(4)
    values = rng.normal(70, 2, size=(3, 7, 5))
    runs = grid_runs(values, STS, ["full", "short", "single"])
    runs = runs[~((runs["params.method"] == "short") & runs["seed"].isin(["3", "4"]))
                & ~((runs["params.method"] == "single") & (runs["seed"] != "2"))]
    result = suite_intervals(runs, ["method"], "sts", resamples=1000)
    full, short = result.row("full"), result.row("short")
    assert (full.n_seeds, short.n_seeds) == (5, 3)
    per_seed = values[1, :, :3].mean(axis=0)  # short's suite average of each of its own seeds
    column = [row.config for row in result.ranked].index(("short",))
    assert np.isfinite(result.replicates).all()
    assert per_seed.min() - 1e-9 <= result.replicates[:, column].min()
    assert result.replicates[:, column].max() <= per_seed.max() + 1e-9
    single = result.row("single")
    assert single.seeds == ("2",) and single.mean == pytest.approx(values[2, :, 2].mean(), abs=1e-12)
    assert np.isnan(single.ci_low) and "one seed: no interval" in single.note
    text = to_markdown(result)
    assert "| 5 | 7/7 |" in text and "| 3 | 7/7 |" in text
    assert f"| single | {single.mean:.2f} | n/a | {single.rank} |" in text


def test_ten_methods_seven_tasks_five_seeds_is_fast():
    values = np.random.default_rng(0).normal(70, 3, size=(10, 7, 5))
    runs = grid_runs(values, STS, [f"m{i}" for i in range(10)])
    start = time.perf_counter()
    result = suite_intervals(runs, ["method"], "sts")
    elapsed = time.perf_counter() - start
    assert result.replicates.shape == (2000, 10)
    assert sorted(row.rank for row in result.rows) == list(range(1, 11))
    assert elapsed < 1.0, elapsed


def test_suite_subcommand_reads_mlflow_and_per_query_artifacts(tmp_path, capsys):
    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    from sentsweep.analysis.cli import main as analyze

    uri = sqlite_store(tmp_path)
    client = MlflowClient(uri)
    experiment = client.create_experiment("useb_suite", artifact_location=str(tmp_path / "artifacts"))
    parent = client.create_run(experiment, tags={"role": "sweep"}).info.run_id
    runs, items = useb_runs_and_items(spread=0.2)
    for _, run in runs.iterrows():
        run_id = client.create_run(experiment, tags={"sweep_run_id": parent, "seed": run["seed"]}).info.run_id
        client.log_batch(run_id, params=[Param("method", run["params.method"])],
                         metrics=[Metric(m, float(run[f"metrics.{m}"]), 0, 0) for m in USEB])
        outcomes = items[(run["params.method"],)][run["seed"]]
        (tmp_path / "per_query.json").write_text(json.dumps(outcomes), encoding="utf-8")
        client.log_artifact(run_id, str(tmp_path / "per_query.json"))
        client.set_terminated(run_id)
    assert analyze(["suite", "--experiment", "useb_suite", "--tracking-uri", uri, "--rows", "method",
                    "--suite", "useb", "--items", "--csv", str(tmp_path / "suite.csv")]) == 0
    printed = capsys.readouterr().out
    assert "items also resampled for: askubuntu_map;" in printed
    expected = suite_intervals(runs, ["method"], "useb", items)
    frame = pd.read_csv(tmp_path / "suite.csv")
    assert list(frame["ci_low"]) == pytest.approx([row.ci_low for row in expected.rows], abs=1e-6)
    assert analyze(["suite", "--experiment", "useb_suite", "--tracking-uri", uri, "--rows", "method",
                    "--suite", "usb"]) == 2
    assert "unknown suite 'usb'" in capsys.readouterr().err

