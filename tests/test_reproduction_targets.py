"""Reproduction targets: the interval and verdict of each published value against its cell, the declared values
against the paper's tables, every target a cell its sweep can produce, and the report's section."""

import argparse
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sentsweep.analysis.report import write_report
from sentsweep.analysis.reproduction import (
    NOT_RUN,
    OUTSIDE,
    TOO_FEW,
    WITHIN,
    PublishedValue,
    check_targets,
    published_interval,
    reproduction_markdown,
    reproduction_section,
    targets_from_json,
    targets_to_json,
)
from sentsweep.experiments import experiment_names, get_experiment
from sentsweep.sweep.definition import target_problems
from sentsweep.sweep.launcher import stage_axes

# 002 (TSDAE, Wang et al. 2021) App. A, Table 6 "Results with different noise ratio": deletion, CLS pooling,
# untied, best STS benchmark dev Spearman x 100 over evaluations every 1.5K of 30K steps, mean of 5 seeds.
TABLE_6 = {0.1: 77.81, 0.2: 77.70, 0.3: 77.75, 0.4: 78.02, 0.5: 78.25, 0.6: 78.77, 0.7: 78.19, 0.8: 77.69,
           0.9: 75.67}
# 002 App. A, Table 7 "Results with different pooling methods": deletion 0.6, untied.
TABLE_7 = {"cls": 78.77, "mean": 78.84, "max": 78.17}
# 002 App. A, Table 5 "Results with different noise types": ratio 0.3, CLS, untied ("Add" is the project's insert).
TABLE_5 = {"delete": 78.33, "swap": 76.85, "mask": 76.56, "replace": 74.01, "insert": 72.65}
# 002 App. A, text after Table 7: tying the encoder and decoder "can further improve the validation score to 79.15".
TIED = 79.15


def trial_frame(rows):
    """A runs DataFrame as fetch_trial_runs returns it (params logged as strings), from (params, metrics, seed)."""
    return pd.DataFrame([
        {"run_id": f"run{index}", "status": status, "seed": str(seed), "config_hash": None, "failure_reason": None}
        | {f"params.{k}": str(v) for k, v in params.items()} | {f"metrics.{k}": float(v) for k, v in metrics.items()}
        for index, (params, metrics, seed, status) in enumerate(rows)])


def deletion_run(ratio, pooling, seed, dev, status="FINISHED", **setting):
    params = {"noise_ratio": ratio, "pooling": pooling, "noise_type": "delete", "tie_decoder": False,
              "model": "/models/bert-base-uncased", "max_steps": 30000} | setting
    return params, {"best_sts_dev": dev, "sts_test_at_best_dev": dev - 3}, seed, status


CLS_06 = [78.1, 78.9, 79.4, 78.5, 78.0]  # holds 78.77
MEAN_06 = [80.2, 80.5, 80.1, 80.4, 80.3]  # well above 78.84
FRAME = trial_frame(
    [deletion_run(0.6, "cls", seed, value) for seed, value in enumerate(CLS_06)]
    + [deletion_run(0.6, "mean", seed, value) for seed, value in enumerate(MEAN_06)]
    + [deletion_run(0.6, "max", 0, 70.0, status="FAILED")]  # a failed run: the max cell was not run
    + [deletion_run(0.3, "cls", 0, 77.0)]  # one seed only
)


def target(ratio, pooling, value, runs=5, **setting):
    return PublishedValue({"noise_ratio": ratio, "pooling": pooling, "noise_type": "delete", "tie_decoder": False},
                          "best_sts_dev", value, "002 App. A, Table 7", runs=runs, setting=setting)


def by_hand(values, m):
    """x̄ ± t_{0.975, n-1} · s · sqrt(1/n + 1/m), m None: sqrt(1/n)."""
    values = np.array(values)
    n = values.size
    half = stats.t.ppf(0.975, n - 1) * values.std(ddof=1) * math.sqrt(1 / n + (1 / m if m else 0))
    return values.mean() - half, values.mean() + half


def test_interval_and_verdicts_equal_a_hand_computation():
    targets = [target(0.6, "cls", 78.77), target(0.6, "mean", 78.84), target(0.6, "max", 78.17),
               target(0.3, "cls", 77.75)]
    inside, outside, not_run, one_seed = check_targets(FRAME, targets)
    low, high = by_hand(CLS_06, 5)
    assert (inside.low, inside.high) == pytest.approx((low, high), abs=1e-12)
    assert low <= 78.77 <= high and inside.verdict == WITHIN
    assert inside.n == 5 and inside.mean == pytest.approx(np.mean(CLS_06))
    assert inside.std == pytest.approx(np.std(CLS_06, ddof=1))
    low, high = by_hand(MEAN_06, 5)
    assert (outside.low, outside.high) == pytest.approx((low, high), abs=1e-12)
    assert not low <= 78.84 <= high and outside.verdict == OUTSIDE
    assert not_run.verdict == NOT_RUN and not_run.n == 0 and math.isnan(not_run.low)
    assert one_seed.verdict == TOO_FEW and one_seed.n == 1


def test_the_interval_follows_the_runs_the_published_value_averages():
    one_run, mean_only = by_hand(CLS_06, 1), by_hand(CLS_06, None)
    assert published_interval(CLS_06, 1) == pytest.approx(one_run, abs=1e-12)
    assert published_interval(CLS_06, None) == pytest.approx(mean_only, abs=1e-12)
    # one published run is noisier than the paper's 5-seed mean, which is noisier than an exact value
    assert one_run[1] - one_run[0] > np.subtract(*by_hand(CLS_06, 5)[::-1]) > mean_only[1] - mean_only[0]
    with pytest.raises(ValueError):
        published_interval([78.0], 5)


def test_cells_match_logged_strings_and_settings_that_differ_are_listed():
    frame = trial_frame([deletion_run(0.6, "cls", seed, value, max_steps=60, model="/tmp/tiny-bert")
                         for seed, value in enumerate(CLS_06)])
    [check] = check_targets(frame, [target(0.6, "cls", 78.77, model="bert-base-uncased", max_steps=30_000,
                                           lr=3e-5)])
    assert check.verdict == WITHIN
    assert check.differences == ("model /tmp/tiny-bert (paper: bert-base-uncased)", "max_steps 60 (paper: 30000)",
                                 "lr not logged (paper: 3e-05)")
    [same] = check_targets(FRAME, [target(0.6, "cls", 78.77, model="bert-base-uncased", max_steps=30_000)])
    assert same.differences == ()  # the model compared by its folder's name, 30000 logged as "30000"
    tied = PublishedValue({"noise_ratio": 0.6, "pooling": "cls", "tie_decoder": True}, "best_sts_dev", TIED, "text")
    assert check_targets(FRAME, [tied])[0].verdict == NOT_RUN  # the runs are untied


def test_a_stage_checks_only_its_own_targets():
    staged = [PublishedValue({"stage": "pooling", "pooling": "cls"}, "best_sts_dev", 78.77, "T7"),
              PublishedValue({"stage": "noise_type", "noise_type": "delete"}, "best_sts_dev", 78.33, "T5"),
              PublishedValue({"pooling": "cls"}, "best_sts_dev", 78.77, "any stage")]
    assert [c.target.source for c in check_targets(FRAME, staged, stage="pooling")] == ["T7", "any stage"]
    assert len(check_targets(FRAME, staged)) == 3
    assert reproduction_section(FRAME, staged[:2], stage="tie_decoder") == ""


def test_tsdae_deletion_declares_table_6_and_table_7_exactly():
    published = get_experiment("tsdae_deletion").published
    by_cell = {(t.params["noise_ratio"], t.params["pooling"]): t for t in published}
    expected = {(ratio, "cls"): value for ratio, value in TABLE_6.items()} | {
        (0.6, pooling): value for pooling, value in TABLE_7.items()}
    assert len(published) == len(by_cell) == len(expected) == 11
    assert {cell: t.value for cell, t in by_cell.items()} == expected
    for (ratio, pooling), declared in by_cell.items():
        assert declared.metric == "best_sts_dev" and declared.runs == 5
        assert declared.params == {"noise_ratio": ratio, "pooling": pooling, "noise_type": "delete",
                                   "tie_decoder": False}
        tables = ([6] if pooling == "cls" else []) + ([7] if ratio == 0.6 else [])
        source = str(declared.source)
        assert source.startswith("002 App. A, Table")
        for number in (5, 6, 7):  # the source names exactly the tables that print the value
            assert (f"{number}" in source.removeprefix("002 App. A, ")) == (number in tables), source
        assert declared.setting["model"] == "bert-base-uncased" and declared.setting["max_steps"] == 30_000


def test_tsdae_noise_declares_each_stages_table():
    published = get_experiment("tsdae_noise").published
    by_stage = {}
    for declared in published:
        by_stage.setdefault(declared.params["stage"], []).append(declared)
    assert {t.params["noise_type"]: t.value for t in by_stage["noise_type"]} == TABLE_5
    assert all(t.params["noise_ratio"] == 0.3 and t.params["pooling"] == "cls" for t in by_stage["noise_type"])
    assert {t.params["noise_ratio"]: t.value for t in by_stage["noise_ratio"]} == TABLE_6
    assert {t.params["pooling"]: t.value for t in by_stage["pooling"]} == TABLE_7
    assert {t.params["tie_decoder"]: t.value for t in by_stage["tie_decoder"]} == {False: 78.77, True: TIED}
    assert "in no table" in str(next(t.source for t in by_stage["tie_decoder"] if t.params["tie_decoder"]))


@pytest.mark.parametrize("name", [name for name in experiment_names() if get_experiment(name).published])
def test_every_target_is_a_cell_its_sweep_can_produce(name):
    definition = get_experiment(name)
    stages = stage_axes(definition, definition.options())
    assert target_problems(definition, stages) == []


def test_a_target_outside_the_grid_is_named():
    from dataclasses import replace

    definition = get_experiment("tsdae_deletion")
    stages = stage_axes(definition, definition.options())
    bad = replace(definition, published=(
        PublishedValue({"noise_ratio": 0.65, "pooling": "cls"}, "best_sts_dev", 78.0, "x"),
        PublishedValue({"noise_ratio": 0.6, "pooling": "cls", "tie_decoder": True}, "best_sts_dev", 79.15, "y"),
        PublishedValue({"noise_ratio": 0.6, "poolng": "cls"}, "best_sts_dev", 78.0, "z"),
        PublishedValue({"stage": "pooling", "pooling": "cls"}, "sts_dev", 78.0, "w")))
    problems = target_problems(bad, stages)
    assert len(problems) == 5
    assert "noise_ratio=0.65 is not in its axis" in problems[0]
    assert "tie_decoder=true but the sweep fixes it at false" in problems[1]
    assert "poolng is neither an axis nor a setting" in problems[2]
    assert "metric 'sts_dev'" in problems[3] and "no stage 'pooling'" in problems[4]


def test_report_has_the_reproduction_section(tmp_path):
    args = argparse.Namespace(experiment="tsdae_deletion", rows=["pooling"], columns="noise_ratio",
                              metric="best_sts_dev", lines=["pooling"], log_x=False,
                              output=str(tmp_path / "report.md"), alpha=0.05, correction="holm")
    # the targets as the sweep logs them on its MLflow run and the report reads them back
    targets = targets_from_json(targets_to_json(get_experiment("tsdae_deletion").published))
    text = write_report(FRAME, args, targets).read_text(encoding="utf-8")
    section = text[text.index("## Reproduction targets"):text.index("## LaTeX")]
    inside = check_targets(FRAME, get_experiment("tsdae_deletion").published)
    low, high = by_hand(CLS_06, 5)
    assert (f"| noise_ratio=0.6, pooling=cls, noise_type=delete, tie_decoder=false | best_sts_dev | 5 | "
            f"{np.mean(CLS_06):.2f} ± {np.std(CLS_06, ddof=1):.2f} | [{low:.2f}, {high:.2f}] | "
            f"78.77 (mean of 5 runs) | 002 App. A, Tables 6 (ratio 0.6) and 7 (CLS) | within |") in section
    assert "noise_ratio=0.2, pooling=cls, noise_type=delete, tie_decoder=false (77.70, 002 App. A, Table 6)" in section
    assert "| noise_ratio=0.6, pooling=mean, noise_type=delete, tie_decoder=false | best_sts_dev | 5 |" in section
    assert "| 78.84 (mean of 5 runs) | 002 App. A, Table 7 | outside |" in section
    assert "noise_ratio=0.6, pooling=max, noise_type=delete, tie_decoder=false (78.17, 002 App. A, Table 7)" in section
    assert "| not run |" not in section  # named in one line, not as rows
    assert "| 77.75 (mean of 5 runs) | 002 App. A, Table 6 | n < 2 (no interval) |" in section
    assert "11 published values: within 1, outside 1, not run 8, n < 2 (no interval) 1." in section
    assert "Table 5 scores the same configuration (delete 0.3, CLS, untied) 78.33" in section
    assert "eval_format not logged (paper: stsb)" in section  # the frame logs no eval_format
    assert [c.verdict for c in inside].count(WITHIN) == 1
    assert reproduction_markdown(inside).startswith("## Reproduction targets")


def test_report_of_a_sweep_without_targets_has_no_section(tmp_path):
    args = argparse.Namespace(experiment="not_a_sweep", rows=["pooling"], columns="noise_ratio",
                              metric="best_sts_dev", lines=None, log_x=False, output=str(tmp_path / "r.md"))
    assert "Reproduction targets" not in write_report(FRAME, args).read_text(encoding="utf-8")
