"""Reproduction targets: the interval and verdict of each published value against its cell, the declared values
against the paper's tables, every target a cell its sweep can produce, and the report's section."""

import importlib
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sentsweep.analysis.report import ReportRequest, write_report
from sentsweep.analysis.reproduction import (
    NOT_EVALUATED,
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
    targets_line,
    targets_to_json,
)
from sentsweep.experiments import experiment_modules, experiment_names, get_experiment
from sentsweep.experiments.without_targets import WITHOUT_TARGETS
from sentsweep.sweep.config.definition import target_problems
from sentsweep.sweep.execution.target_list import TARGET_LIST_ARTIFACT, TargetList, eval_task_of
from sentsweep.sweep.launch.launcher import stage_axes

# TSDAE (Wang et al. 2021) App. A, Table 6 "Results with different noise ratio": deletion, CLS pooling,
# untied, best STS benchmark dev Spearman x 100 over evaluations every 1.5K of 30K steps, mean of 5 seeds.
TABLE_6 = {0.1: 77.81, 0.2: 77.70, 0.3: 77.75, 0.4: 78.02, 0.5: 78.25, 0.6: 78.77, 0.7: 78.19, 0.8: 77.69,
           0.9: 75.67}
# TSDAE App. A, Table 7 "Results with different pooling methods": deletion 0.6, untied.
TABLE_7 = {"cls": 78.77, "mean": 78.84, "max": 78.17}
# TSDAE App. A, Table 5 "Results with different noise types": ratio 0.3, CLS, untied ("Add" is the project's insert).
TABLE_5 = {"delete": 78.33, "swap": 76.85, "mask": 76.56, "replace": 74.01, "insert": 72.65}
# TSDAE App. A, text after Table 7: tying the encoder and decoder "can further improve the validation score to 79.15".
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
                          "best_sts_dev", value, "TSDAE App. A, Table 7", runs=runs, setting=setting)


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


def test_a_target_whose_metric_no_run_evaluated_is_told_apart_from_a_cell_not_run():
    """--quick evaluates no USEB task: its targets need a metric the runs lack, which says nothing of their cells."""
    task = PublishedValue({"noise_ratio": 0.6, "pooling": "cls"}, "askubuntu_map", 57.4, "Reiml 2023 Table 6.10")
    failed = target(0.6, "max", 78.17)  # the metric exists; the cell's one run failed
    assert [check.verdict for check in check_targets(FRAME, [task, failed])] == [NOT_EVALUATED, NOT_RUN]


def test_the_stage_line_counts_the_targets_and_names_the_metrics_and_the_options_that_add_them():
    targets = [target(0.6, "cls", 78.77), target(0.6, "mean", 78.84), target(0.3, "cls", 77.75),
               target(0.6, "max", 78.17),
               PublishedValue({"noise_ratio": 0.6, "pooling": "cls"}, "askubuntu_map", 57.4, "x"),
               PublishedValue({"noise_ratio": 0.6, "pooling": "cls"}, "cqadupstack_map_at_100", 11.9, "x")]
    line = targets_line(check_targets(FRAME, targets), 44, eval_task_of)
    assert line == ("Reproduction targets: 6 of the sweep's 44 are cells of this stage; 3 measured (1 reproduced, "
                    "1 outside, 1 on one seed); 2 need metrics this run did not evaluate (askubuntu_map, "
                    "cqadupstack_map_at_100; add them with --eval-task NAME=PATH: askubuntu, cqadupstack); "
                    "1 of cells that did not run.")
    assert eval_task_of("sts12_spearman") == "sts12" and eval_task_of("best_sts_dev") is None


def test_the_target_list_has_every_target_with_its_metric_in_a_file_and_an_artifact(tmp_path):
    """tsdae_deletion's 11 targets against the quick grid (ratios 0.3 and 0.6, mean and max pooling): 2 are its
    cells, 9 (CLS) are cells no stage of the run holds; the list names every one, with its metric."""
    logged = {}
    path = tmp_path / "tsdae_deletion-1a2b3c4d-reproduction_targets.md"
    listing = TargetList(get_experiment("tsdae_deletion").published, 0.95, path,
                         lambda name, text: logged.update({name: text}))
    axes = {"noise_ratio": [0.3, 0.6], "pooling": ["mean", "max"]}
    line = listing.stage_line("tsdae_deletion", FRAME, None, axes, {"noise_type": "delete", "tie_decoder": False})
    assert line == ("Reproduction targets: 2 of the sweep's 11 are cells of this stage; 1 measured (0 reproduced, "
                    f"1 outside); 1 of cells that did not run. Every target: {path}")
    text = path.read_text(encoding="utf-8")
    assert logged == {TARGET_LIST_ARTIFACT: text}
    assert text.count("| best_sts_dev |") == 11  # a row per target, each naming its metric
    assert "| noise_ratio=0.6, pooling=max, noise_type=delete, tie_decoder=false | best_sts_dev | 0 | – | – | " \
           "78.17 (mean of 5 runs) | TSDAE App. A, Table 7 | not run |" in text
    assert "## Cells no stage of this run holds (9)" in text
    # a fixed setting at another value rules a stage out as an axis does
    assert listing.stage_line("tied", FRAME, None, axes, {"noise_type": "delete", "tie_decoder": True}).startswith(
        "Reproduction targets: none of the sweep's 11 is a cell of this stage.")


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
        assert source.startswith("TSDAE App. A, Table")
        for number in (5, 6, 7):  # the source names exactly the tables that print the value
            assert (f"{number}" in source.removeprefix("TSDAE App. A, ")) == (number in tables), source
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
    args = ReportRequest(experiment="tsdae_deletion", rows=("pooling",), columns="noise_ratio",
                         metric="best_sts_dev", lines=("pooling",), output=str(tmp_path / "report.md"))
    # the targets as the sweep logs them on its MLflow run and the report reads them back
    targets = targets_from_json(targets_to_json(get_experiment("tsdae_deletion").published))
    text = write_report(FRAME, args, targets).read_text(encoding="utf-8")
    section = text[text.index("## Reproduction targets"):text.index("## LaTeX")]
    inside = check_targets(FRAME, get_experiment("tsdae_deletion").published)
    low, high = by_hand(CLS_06, 5)
    assert (f"| noise_ratio=0.6, pooling=cls, noise_type=delete, tie_decoder=false | best_sts_dev | 5 | "
            f"{np.mean(CLS_06):.2f} ± {np.std(CLS_06, ddof=1):.2f} | [{low:.2f}, {high:.2f}] | "
            f"78.77 (mean of 5 runs) | TSDAE App. A, Tables 6 (ratio 0.6) and 7 (CLS) | within |") in section
    assert "noise_ratio=0.2, pooling=cls, noise_type=delete, tie_decoder=false (77.70, TSDAE App. A, Table 6)" \
        in section
    assert "| noise_ratio=0.6, pooling=mean, noise_type=delete, tie_decoder=false | best_sts_dev | 5 |" in section
    assert "| 78.84 (mean of 5 runs) | TSDAE App. A, Table 7 | outside |" in section
    assert "noise_ratio=0.6, pooling=max, noise_type=delete, tie_decoder=false (78.17, TSDAE App. A, Table 7)" \
        in section
    assert "| not run |" not in section  # named in one line, not as rows
    assert "| 77.75 (mean of 5 runs) | TSDAE App. A, Table 6 | n < 2 (no interval) |" in section
    assert "11 published values: within 1, outside 1, n < 2 (no interval) 1, not run 8." in section
    assert "Cells not run (best_sts_dev): noise_ratio=0.1, pooling=cls," in section  # each named with its metric
    assert "Table 5 scores the same configuration (delete 0.3, CLS, untied) 78.33" in section
    assert "eval_format not logged (paper: stsb)" in section  # the frame logs no eval_format
    assert [c.verdict for c in inside].count(WITHIN) == 1
    assert reproduction_markdown(inside).startswith("## Reproduction targets")


def test_report_gives_the_sweeps_compute_in_total(tmp_path):
    """The report's compute section ends with the sweep's total, the sum of its runs' recorded compute."""
    runs = FRAME.assign(**{"metrics.system/cpu_seconds": 1800.0, "metrics.system/gpu_seconds": 900.0,
                           "metrics.system/wall_seconds": 3600.0})
    request = ReportRequest(experiment="tsdae_deletion", rows=("pooling",), columns="noise_ratio",
                            metric="best_sts_dev", output=str(tmp_path / "report.md"))
    text = write_report(runs, request).read_text(encoding="utf-8")
    section = text[text.index("## Compute"):text.index("## LaTeX")]
    total = [line for line in section.splitlines() if line.startswith("| total |")]
    n = len(runs)
    assert total == [f"| total |  | {n} | 0 | {n * 0.5:.4f} | {n * 0.25:.4f} | {n * 1.0:.4f} |"]


def test_report_of_a_sweep_without_targets_has_no_section(tmp_path):
    args = ReportRequest(experiment="not_a_sweep", rows=("pooling",), columns="noise_ratio",
                         metric="best_sts_dev", output=str(tmp_path / "r.md"))
    assert "Reproduction targets" not in write_report(FRAME, args).read_text(encoding="utf-8")


def printed_columns(rows: str, columns: tuple[int, ...]) -> dict[str, tuple[float, ...]]:
    """{row name: the numbers at `columns`} of a table's rows as the seed prints them, name and numbers separated
    by tabs (Reiml 2023, Wang 2022) or spaces (TSDAE)."""
    table = {}
    for line in rows.strip().splitlines():
        name, *numbers = line.split("\t") if "\t" in line else line.rsplit(" ", 11)
        table[name.strip()] = tuple(float(numbers[column]) for column in columns)
    return table


USEB_TASKS = ("askubuntu", "cqadupstack", "twitterpara", "scidocs")
USEB_METRICS = ("askubuntu_map", "cqadupstack_map_at_100", "twitterpara_ap", "scidocs_map")
# AskU., CQADup., Twitter Avg., SciDocs Avg. among AskU. CQADup. TURL PIT Avg. Cite CC CR CV Avg.
USEB_AVERAGES = (0, 1, 4, 9)

# Reiml 2023 (Reiml 2023) Table 6.10, "Unsupervised learning based on BERT-base (CLS pooling)" and "(mean pooling)",
# rows copied from the seed.
TABLE_6_10_CLS = printed_columns("""
TSDAE (repr.)\t57.4\t11.9\t79.4\t59.1\t69.3\t69.8\t73.5\t74.2\t75.4\t73.2\t52.9
SimCSE\t56.9\t12.7\t70.0\t61.9\t65.9\t59.3\t62.1\t66.1\t65.5\t63.3\t49.7
NM\t57.1\t12.7\t73.4\t62.9\t68.1\t67.0\t69.8\t72.0\t72.0\t70.2\t52.0
MLM + SimCSE\t59.2\t13.2\t76.5\t67.0\t71.7\t70.5\t73.0\t73.7\t74.3\t72.9\t54.3
MLM + NM\t59.0\t13.3\t76.5\t61.3\t68.9\t69.8\t72.4\t74.2\t74.0\t72.6\t53.5
TSDAE + NM\t57.4\t13.0\t77.6\t56.3\t67.0\t68.8\t71.3\t72.9\t72.8\t71.5\t52.2
""", USEB_AVERAGES)
TABLE_6_10_MEAN = printed_columns("""
SimCSE\t55.4\t12.6\t69.0\t61.8\t65.4\t58.3\t61.4\t65.5\t64.9\t62.5\t49.0
NM\t57.5\t13.2\t74.0\t64.4\t69.2\t65.7\t68.0\t71.2\t70.6\t68.9\t52.2
MLM + SimCSE\t58.2\t11.7\t72.6\t71.3\t71.9\t71.1\t73.4\t74.2\t75.0\t73.4\t53.8
MLM + NM\t59.5\t14.2\t75.1\t61.0\t68.1\t67.6\t70.3\t72.7\t72.7\t70.8\t53.1
TSDAE + NM\t58.6\t13.9\t77.1\t65.3\t71.2\t66.1\t69.6\t72.0\t71.6\t69.8\t53.4
""", USEB_AVERAGES)
FULL_DOMAIN_SBERT = printed_columns(
    "FullDomainSBERT\t62.6\t15.0\t74.6\t70.6\t72.6\t75.6\t77.2\t76.5\t77.7\t76.8\t56.7", USEB_AVERAGES)
DOMAIN_SBERT = printed_columns(
    "DomainSBERT\t63.2\t14.7\t74.8\t70.2\t72.5\t75.0\t76.9\t76.3\t77.5\t76.4\t56.7", USEB_AVERAGES)
AUG_SBERT = printed_columns(
    "AugSBERT\t60.8\t14.8\t74.8\t72.4\t73.6\t70.3\t73.0\t73.4\t75.1\t73.0\t55.5", USEB_AVERAGES)
# TSDAE (TSDAE) Table 2, "Unsupervised learning based on BERT-base" and "Domain adaptation: NLI+STS → target task".
TABLE_2_UNSUPERVISED = printed_columns("""
TSDAE 59.4 14.5 76.8 69.2 73.0 71.4 73.9 75.0 75.6 74.0 55.2
MLM 54.3 11.7 71.9 69.7 70.8 71.2 75.8 75.1 76.2 74.6 52.9
CT 56.3 13.3 74.6 70.4 72.5 63.4 67.1 70.1 69.7 67.6 52.4
SimCSE 55.9 12.4 74.5 62.5 68.5 62.5 65.1 67.7 67.6 65.7 50.6
""", USEB_AVERAGES)
TABLE_2_NLI_STS_THEN_TARGET = printed_columns("""
TSDAE 58.7 13.6 75.8 66.2 71 69.9 73.8 75 75.7 73.6 54.2
MLM 54.4 9.7 69.8 68.1 69 67.1 71.8 72.6 72.9 71.1 51.1
CT 57.9 14.2 75.6 70.6 73.1 62.3 66.2 68.5 68.9 66.5 52.9
SimCSE 56.6 13.8 73.4 65.9 69.7 61.8 63.7 67.01 66.7 64.8 51.2
""", USEB_AVERAGES)
TABLE_2_TARGET_THEN_NLI_STS = printed_columns("""
TSDAE 59.4 14.4 75.8 73.1 74.5 75.6 78.6 78.1 78.2 77.6 56.5
MLM 60.6 14.3 75.0 68.6 71.8 74.7 78.2 77.0 77.6 76.9 55.9
CT 56.4 13.4 75.9 68.9 72.4 66.5 69.6 70.6 72.2 69.7 53.0
SimCSE 56.2 13.1 75.5 67.3 71.4 65.5 68.5 70.0 71.4 68.9 52.4
""", USEB_AVERAGES)
TABLE_2_BASELINES = printed_columns("""
BM25 53.4 13.3 71.9 70.5 71.2 58.9 61.3 67.3 66.9 63.6 50.4
BERT-base-uncased 48.5 6.5 69.1 61.7 65.4 59.4 65.1 65.4 68.6 64.6 46.3
""", USEB_AVERAGES)
TABLE_3_STSB = {"TSDAE": 66.0, "MLM": 47.3, "CT": 73.9, "SimCSE": 73.8}  # "Unsupervised method" rows, STSb column
# Wang 2022 (Wang 2022) Table 5.17, "Loss R@100[%] R@10[%]".
TABLE_5_17 = printed_columns(r"""
\mathcal{L}_{simcse}^1	96.5	86.8
\mathcal{L}_{simcse}	97.2	88.3
$\mathcal{L}_{CLM_autoencoder}$	95.9	84.9
$\mathcal{L}_{MLM_autoencoder}$	91.2	77.5
$\mathcal{L}_{simcse} + 0.1 * \mathcal{L}_{CLM_autoencoder}$	97.1	87.3
$\mathcal{L}_{simcse} + 0.01 * \mathcal{L}_{CLM_autoencoder}$	97.4	88.4
$\mathcal{L}_{simcse} + 0.001 * \mathcal{L}_{CLM_autoencoder}$	97.4	88.8
$\mathcal{L}_{simcse} + 0.0001 * \mathcal{L}_{CLM_autoencoder}$	97.3	88.6
$\mathcal{L}_{simcse} + 0.1 * \mathcal{L}_{MLM_autoencoder}$	93.5	81.4
$\mathcal{L}_{simcse} + 0.01 * \mathcal{L}_{MLM_autoencoder}$	95.7	85.0
$\mathcal{L}_{simcse} + 0.001 * \mathcal{L}_{MLM_autoencoder}$	97.0	87.7
$\mathcal{L}_{simcse} + 0.0001 * \mathcal{L}_{MLM_autoencoder}$	97.3	88.3
""", (0, 1))
METHOD_OF_ROW = {"TSDAE (repr.)": "tsdae", "TSDAE": "tsdae", "SimCSE": "simcse", "NM": "nm", "MLM": "mlm",
                 "CT": "ct", "MLM + SimCSE": "mlm+simcse", "MLM + NM": "mlm+nm", "TSDAE + NM": "tsdae+nm"}


def declared(name: str, **fixed) -> dict:
    """{(cell params without `fixed`, metric): value} of the sweep's targets whose params include `fixed`."""
    return {(tuple(sorted((k, v) for k, v in t.params.items() if k not in fixed)), t.metric): t.value
            for t in get_experiment(name).published if fixed.items() <= dict(t.params).items()}


def useb_cells(table: dict, cell) -> dict:
    """{(cell params, metric): value} of a table with USEB's columns: each column a model trained on that task's
    corpus (TSDAE §4.1), its cell naming the task (`target_task`)."""
    return {(tuple(sorted((cell(row) | {"target_task": task}).items())), metric): value
            for row, values in table.items() for task, metric, value in zip(USEB_TASKS, USEB_METRICS, values)}


def test_nm_weight_declares_table_6_10_blocks():
    def cell(pooling):
        return lambda row: {"method": METHOD_OF_ROW[row], "pooling": pooling} | (
            {"w": 1.0} if METHOD_OF_ROW[row] in ("mlm+nm", "tsdae+nm") else {})
    expected = useb_cells(TABLE_6_10_CLS, cell("cls")) | useb_cells(TABLE_6_10_MEAN, cell("mean"))
    assert declared("nm_weight") == expected and len(expected) == 44
    targets = get_experiment("nm_weight").published
    assert all(t.runs == 3 and "Table 6.10" in str(t.source) for t in targets)
    assert all("no weight" in t.note for t in targets if "w" in t.params)
    assert declared("domain_chain_augsbert", stage="augsbert") == useb_cells(
        FULL_DOMAIN_SBERT, lambda row: {"method": "augsbert"})
    assert declared("domain_chain_augsbert", stage="domain_sbert") == useb_cells(
        DOMAIN_SBERT, lambda row: {"method": "augsbert"})
    assert declared("domain_chain_augsbert", stage="aug_sbert") == useb_cells(
        AUG_SBERT, lambda row: {"method": "augsbert"})


def test_tsdae_main_and_domain_adaptation_declare_table_2_and_table_3():
    """Table 2's cells per method and target task; Table 3's per method, on one corpus (no target task), each at
    the checkpoint its method reports (SimCSE: its best STS-B dev, TSDAE App. B fn. 8)."""
    unsupervised = useb_cells(TABLE_2_UNSUPERVISED, lambda row: {"method": METHOD_OF_ROW[row]})
    main_unsupervised = useb_cells(TABLE_2_UNSUPERVISED, lambda row: {"method": METHOD_OF_ROW[row], "stage": "method"})
    stsb = {((("method", METHOD_OF_ROW[row]), ("stage", "method"), ("target_task", None)),
             "sts_test_at_best_dev" if row == "SimCSE" else "sts_test_last"): value
            for row, value in TABLE_3_STSB.items()}
    baselines = useb_cells(TABLE_2_BASELINES, lambda row: {"method": {"BM25": "bm25"}.get(row, "frozen_encoder")})
    assert declared("tsdae_main", stage="baselines") == baselines
    main = {key: value for key, value in declared("tsdae_main").items() if ("stage", "baselines") not in key[0]
            and not key[1].startswith(("sts1", "sickr"))}
    assert main == main_unsupervised | stsb
    table_11 = {(dict(key[0])["method"], key[1]): value for key, value in declared("tsdae_main").items()
                if key[1].startswith(("sts1", "sickr"))}
    assert len(table_11) == 4 * 6 and all(dict(key[0])["target_task"] is None for key in declared("tsdae_main")
                                          if key[1].startswith(("sts1", "sickr")))
    # TSDAE App. F, Table 11:
    # "TSDAE 55.2 67.4 62.4 74.3 73.0 66.0 62.3 65.8", "SimCSE 63.6 79.3 69.6 78.2 77.7 73.8 70.1"
    assert [table_11[("tsdae", f"sts1{year}_wmean_spearman")] for year in range(2, 7)] == [55.2, 67.4, 62.4, 74.3, 73.0]
    assert (table_11[("tsdae", "sickr_spearman")], table_11[("simcse", "sts13_wmean_spearman")]) == (62.3, 79.3)
    assert all(t.runs == (None if t.metric.startswith(("sts", "sickr")) else 5)
               for t in get_experiment("tsdae_main").published)
    assert declared("domain_adaptation", stage="target") == unsupervised
    assert declared("domain_adaptation", stage="nli_sts_then_target") == useb_cells(
        TABLE_2_NLI_STS_THEN_TARGET, lambda row: {"method": METHOD_OF_ROW[row]})
    assert declared("domain_adaptation", stage="target_then_nli_sts") == useb_cells(
        TABLE_2_TARGET_THEN_NLI_STS, lambda row: {"method": "sbert",
                                                  "pretrained": f"pretrained=method={METHOD_OF_ROW[row]}, "
                                                                "method=sbert_nli"})
    assert len(get_experiment("domain_adaptation").published) == 48
    assert declared("labelled_intersection", stage="reference") == {
        key: value for key, value in unsupervised.items() if ("method", "tsdae") in key[0]}


def test_multitask_weight_declares_table_5_17():
    def cell(row):
        if "+" in row:  # "$\mathcal{L}_{simcse} + 0.1 * \mathcal{L}_{CLM_autoencoder}$"
            weight = float(row.split("+ ")[1].split(" *")[0])
            return {"method": "simcse+" + ("clm_ae" if "CLM" in row else "mlm_ae"), "w": weight}
        if "simcse" in row:
            return {"method": "simcse", "epochs": 1 if "^1" in row else 3}
        return {"method": "clm_ae" if "CLM" in row else "mlm_ae"}
    expected = {(tuple(sorted(cell(row).items())), metric): value for row, values in TABLE_5_17.items()
                for metric, value in zip(("quora_recall_at_100", "quora_recall_at_10"), values)}
    assert declared("multitask_weight") == expected and len(expected) == 24
    [setting] = {json.dumps(dict(t.setting), sort_keys=True) for t in get_experiment("multitask_weight").published}
    assert json.loads(setting)["select_checkpoint"] == "best_task_dev"


def test_each_sweep_naming_a_seed_table_has_targets_or_a_reason():
    naming = [name for name in experiment_names() if get_experiment(name).reference is not None
              and "Table" in importlib.import_module(experiment_modules()[name]).__doc__]
    assert {"nm_weight", "multitask_weight", "domain_adaptation", "augsbert", "batch_size"} <= set(naming)
    for name in naming:
        has_targets = bool(get_experiment(name).published)
        assert has_targets != (name in WITHOUT_TARGETS), name  # targets, or a reason, never both
    assert set(WITHOUT_TARGETS) <= set(naming)


def test_a_metric_of_an_evaluation_task_is_producible_and_a_misspelt_one_is_named():
    from dataclasses import replace

    definition = get_experiment("tsdae_main")
    stages = stage_axes(definition, definition.options())
    task = PublishedValue({"method": "tsdae"}, "askubuntu_map", 59.4, "x")
    misspelt = PublishedValue({"method": "tsdae"}, "askubunt_map", 59.4, "y")
    assert target_problems(replace(definition, published=(task,)), stages) == []
    [problem] = target_problems(replace(definition, published=(misspelt,)), stages)
    assert "metric 'askubunt_map' is neither among the sweep's" in problem


def test_augsbert_targets_are_the_column_of_the_runs_dataset():
    """Reiml 2023 Tables 6.12-6.13 print a column per data set: --dataset is logged with every trial and a run's cells
    are checked against its own column only (Table 6.13, AugSBERT-S.S.: 79.59 Spanish-STS, 68.40 BWS in-topic)."""
    from sentsweep.sweep.config.options import parse_options
    from sentsweep.sweep.launch.launcher import resolve_settings
    from sentsweep.sweep.search.trials import trial_configs
    from sentsweep.tracking.callback import trial_params

    definition = get_experiment("augsbert")
    options = parse_options(definition.options, ["--dry-run", "--dataset", "bws-in-topic"])
    configs = [config for _, config in trial_configs(resolve_settings(definition, options),
                                                     stage_axes(definition, options))]
    assert {trial_params(config)["dataset"] for config in configs} == {"bws-in-topic"}
    semantic = [t for t in definition.published if t.params == {"dataset": "bws-in-topic", "teacher": "cbe",
                                                                "sampling": "semantic"}]
    assert [(t.metric, t.value, t.runs) for t in semantic] == [("sts_test_at_best_dev", 68.40, 3)]
    upper = [t for t in definition.published if t.params == {"dataset": "spanish-sts", "teacher": "ce",
                                                             "sampling": "none"}]
    assert {(t.metric, t.value) for t in upper} == {("teacher_sts_test", 80.51), ("sts_test_at_best_dev", 67.76)}
    runs = trial_frame([({"dataset": "bws-in-topic", "teacher": "cbe", "sampling": "semantic",
                          "model": "roberta-base"}, {"sts_test_at_best_dev": value}, seed, "FINISHED")
                        for seed, value in enumerate([68.1, 68.9, 67.9])])
    row = [t for t in definition.published if t.params["teacher"] == "cbe" and t.params["sampling"] == "semantic"]
    checks = {check.target.params["dataset"]: check for check in check_targets(runs, row)}
    assert checks["bws-in-topic"].verdict == WITHIN and checks["bws-in-topic"].differences == ()
    assert checks["spanish-sts"].verdict == NOT_RUN and checks["bws-cross-topic"].verdict == NOT_RUN


def test_a_target_on_an_unknown_data_set_is_named():
    from dataclasses import replace

    definition = get_experiment("augsbert")
    bad = replace(definition, published=(PublishedValue({"dataset": "sick", "teacher": "ce", "sampling": "none"},
                                                        "sts_test_at_best_dev", 70.0, "x"),))
    problems = target_problems(bad, stage_axes(bad, bad.options()))
    assert len(problems) == 1 and "dataset=sick is none of the data sets" in problems[0]


def test_a_cell_that_ran_without_its_targets_metric_is_named_with_the_metric_not_called_not_run():
    """TSDAE Table 3's SimCSE cell (73.8) reads the test score at SimCSE's best STS-B dev (App. B, fn. 8); a run that
    logged only another metric, where other runs of the sweep log it, is "metric not logged", and the section says
    which metric is missing and what the runs log instead; a run of another cell leaves the target "not run"; a
    metric no run of the sweep logs is "metric not evaluated"."""
    from sentsweep.analysis.reproduction import NOT_LOGGED

    runs = trial_frame([({"method": "simcse"}, {"sts_test_at_best_dev": 70.0 + seed, "best_sts_dev": 75.0}, seed,
                         "FINISHED") for seed in range(2)]
                       + [({"method": "ct"}, {"sts_test_last": 71.0, "best_sts_dev": 74.0}, 0, "FINISHED")])
    last = PublishedValue({"method": "simcse", "target_task": None}, "sts_test_last", 73.8, "TSDAE §6.1, Table 3")
    task = PublishedValue({"method": "simcse", "target_task": "askubuntu"}, "askubuntu_map", 55.9, "TSDAE Table 2")
    at_best = PublishedValue({"method": "simcse", "target_task": None}, "sts_test_at_best_dev", 73.8, "Table 3")
    missing, other_cell, measured = check_targets(runs, [last, task, at_best])
    assert (missing.verdict, missing.logged) == (NOT_LOGGED, ("sts_test_at_best_dev",))
    assert other_cell.verdict == NOT_EVALUATED  # no run names target_task askubuntu, nor logs askubuntu_map
    assert measured.verdict in (WITHIN, OUTSIDE) and measured.n == 2  # None: a param the runs do not set
    section = reproduction_markdown([missing, other_cell, measured])
    assert ("Run, but without the target's metric: method=simcse, target_task=None (73.80, TSDAE §6.1, Table 3): its "
            "runs do not log sts_test_last (they log sts_test_at_best_dev).") in section
    assert "3 published values: " in section and "metric not logged 1" in section
    tasked = trial_frame([({"method": "simcse", "target_task": "askubuntu"}, {"best_sts_dev": 75.0}, 0, "FINISHED")])
    [no_task_metric] = check_targets(tasked, [task])
    assert no_task_metric.verdict == NOT_EVALUATED and "Metrics these runs did not evaluate (1 targets): " \
        "askubuntu_map (1)" in reproduction_markdown([no_task_metric])
