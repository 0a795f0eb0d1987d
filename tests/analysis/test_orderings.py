"""Orderings (`sentsweep.analysis.orderings`): a finding stated in words, checked as comparisons of a table's cells,
met, not met or not run on hand-made runs; under a stage's table and in the target list (`TargetList`), an ordering
whose cells span stages gets its verdict once its last cell has run."""

from __future__ import annotations

import pandas as pd

from sentsweep.analysis.orderings import (
    MET,
    NOT_MET,
    Cell,
    PublishedOrdering,
    above,
    check_ordering,
    orderings_card_lines,
    orderings_line,
    rising,
)
from sentsweep.analysis.reproduction import NOT_RUN
from sentsweep.sweep.execution.target_list import TARGET_LIST_ARTIFACT, TargetList


def runs_of(rows) -> pd.DataFrame:
    """A runs frame as `fetch_trial_runs` returns it (params logged as strings): rows (params, metrics, seed)."""
    return pd.DataFrame([{"run_id": f"run{index}", "status": "FINISHED", "seed": str(seed)}
                         | {f"params.{name}": str(value) for name, value in params.items()}
                         | {f"metrics.{name}": float(value) for name, value in metrics.items()}
                         for index, (params, metrics, seed) in enumerate(rows)])


def figure(scores: dict[tuple[str, int], tuple[float, float]]) -> pd.DataFrame:
    """{(method, sample_size): (seed 0's score, seed 1's)} as two seeds' runs, metric best_task_dev."""
    return runs_of([({"method": method, "sample_size": size}, {"best_task_dev": score}, seed)
                    for (method, size), values in scores.items() for seed, score in enumerate(values)])


TSDAE_OVER_MLM = PublishedOrdering("TSDAE above MLM at each size",
                                   above({"method": "tsdae"}, {"method": "mlm"}, ["best_task_dev"],
                                         [{"sample_size": 100}, {"sample_size": 1000}]), "TSDAE §6, Fig. 2")


def test_an_ordering_that_holds_at_every_size_is_met():
    runs = figure({("tsdae", 100): (60, 62), ("mlm", 100): (58, 59), ("tsdae", 1000): (70, 70),
                   ("mlm", 1000): (69, 70)})
    check = check_ordering(runs, TSDAE_OVER_MLM)
    assert check.verdict == MET and check.counts() == "2 of 2 comparisons hold"
    assert [(pair.higher_mean, pair.lower_mean) for pair in check.pairs] == [(61.0, 58.5), (70.0, 69.5)]


def test_an_ordering_broken_at_one_size_is_not_met_and_names_the_comparison():
    runs = figure({("tsdae", 100): (60, 62), ("mlm", 100): (58, 59), ("tsdae", 1000): (70, 70),
                   ("mlm", 1000): (71, 70)})
    check = check_ordering(runs, TSDAE_OVER_MLM)
    assert check.verdict == NOT_MET and check.counts() == "1 of 2 comparisons hold"
    [failed] = check.failed
    assert failed.text() == ("method=tsdae, sample_size=1000 (best_task_dev) 70.00 <= "
                             "method=mlm, sample_size=1000 (best_task_dev) 70.50")


def test_equal_means_do_not_hold_an_ordering():
    runs = figure({("tsdae", 100): (60, 60), ("mlm", 100): (60, 60)})
    assert check_ordering(runs, TSDAE_OVER_MLM).verdict == NOT_MET


def test_a_cell_that_did_not_run_leaves_its_comparison_out_and_none_measured_is_not_run():
    runs = figure({("tsdae", 100): (60, 62), ("mlm", 100): (58, 59), ("tsdae", 1000): (70, 70)})
    check = check_ordering(runs, TSDAE_OVER_MLM)
    assert check.verdict == MET and check.counts() == "1 of 1 comparisons hold (1 not run)"
    assert check_ordering(figure({("tsdae", 100): (60, 62)}), TSDAE_OVER_MLM).verdict == NOT_RUN


def test_a_failed_run_and_a_race_stopped_run_are_left_out_as_for_a_numeric_target():
    runs = figure({("tsdae", 100): (60, 62), ("mlm", 100): (58, 59)})
    stopped = figure({("mlm", 100): (99, 99)}).assign(race_stopped_at_step=[10.0, 10.0])
    failed = figure({("mlm", 100): (99, 99)}).assign(status="FAILED")
    both = pd.concat([runs.assign(race_stopped_at_step=float("nan")), stopped, failed], ignore_index=True)
    assert check_ordering(both, TSDAE_OVER_MLM).verdict == MET


def test_a_monotone_trend_and_a_crossing_are_orderings_of_cells():
    """Malmberg 2021 §5.2's kinds: accuracy rising with k (one row, a column per k), and SBERT's dropout 0.3 above
    0.1 on one bucket, below it on another."""
    columns = [f"acc_{k}" for k in (1, 2, 3)]
    trend = PublishedOrdering("rises with k", rising([Cell({"method": "tfidf"}, metric) for metric in columns]), "x")
    assert [(higher.metric, lower.metric) for higher, lower in trend.pairs] == [("acc_2", "acc_1"), ("acc_3", "acc_2")]
    assert check_ordering(runs_of([({"method": "tfidf"}, {"acc_1": 50, "acc_2": 60, "acc_3": 70}, 0)]),
                          trend).verdict == MET
    assert check_ordering(runs_of([({"method": "tfidf"}, {"acc_1": 50, "acc_2": 70, "acc_3": 60}, 0)]),
                          trend).verdict == NOT_MET
    crossing = PublishedOrdering("0.3 above 0.1 on low, below on high",
                                 above({"dropout": 0.3}, {"dropout": 0.1}, ["low"])
                                 + above({"dropout": 0.1}, {"dropout": 0.3}, ["high"]), "x")
    crossed = runs_of([({"dropout": 0.3}, {"low": 70, "high": 60}, 0), ({"dropout": 0.1}, {"low": 65, "high": 66}, 0)])
    parallel = runs_of([({"dropout": 0.3}, {"low": 70, "high": 67}, 0), ({"dropout": 0.1}, {"low": 65, "high": 66}, 0)])
    assert check_ordering(crossed, crossing).verdict == MET
    assert check_ordering(parallel, crossing).verdict == NOT_MET


def test_the_stage_line_counts_the_verdicts_and_names_the_orderings_not_met():
    held = check_ordering(figure({("tsdae", 100): (60, 62), ("mlm", 100): (58, 59)}), TSDAE_OVER_MLM)
    broken = check_ordering(figure({("tsdae", 100): (50, 52), ("mlm", 100): (58, 59)}), TSDAE_OVER_MLM)
    assert orderings_line([held, broken], 3) == (
        "Orderings stated in words: 2 of the sweep's 3 compare cells of this stage: 1 met, 1 not met; not met: "
        "TSDAE above MLM at each size (TSDAE §6, Fig. 2).")
    assert orderings_line([], 3) == "Orderings stated in words: none of the sweep's 3 compares cells of this stage."


def test_an_ordering_across_stages_is_not_run_under_the_first_and_checked_under_the_last(tmp_path):
    """TF-IDF (stage 1) above SBERT (stage 2): its verdict once both stages have run, in the line, the file and the
    artifact."""
    ordering = PublishedOrdering("TF-IDF above SBERT", above({"method": "tfidf"}, {"method": "sbert"}, ["acc"]),
                                 "Malmberg 2021 §5.2, Fig. 4.1")
    logged = {}
    path = tmp_path / "sts_distractors-1a2b3c4d-reproduction_targets.md"
    listing = TargetList((), 0.95, path, lambda name, text: logged.update({name: text}), (ordering,))
    tfidf = runs_of([({"stage": "TF-IDF", "method": "tfidf"}, {"acc": 80}, seed) for seed in (0, 1)])
    sbert = runs_of([({"stage": "SBERT", "method": "sbert"}, {"acc": 70}, seed) for seed in (0, 1)])
    first = listing.stage_line("stage 1/2 'TF-IDF'", tfidf, "TF-IDF", {"method": ["tfidf"]}, {})
    assert first == f"Orderings stated in words: 1 compare cells of this stage: 1 not run. Every target: {path}"
    second = listing.stage_line("stage 2/2 'SBERT'", sbert, "SBERT", {"method": ["sbert"]}, {})
    assert second == f"Orderings stated in words: 1 compare cells of this stage: 1 met. Every target: {path}"
    text = path.read_text(encoding="utf-8")
    assert logged == {TARGET_LIST_ARTIFACT: text}
    assert "| TF-IDF above SBERT | 1 of 1 comparisons hold | met | Malmberg 2021 §5.2, Fig. 4.1 |" in text
    assert "Each published value" not in text  # a sweep with orderings only


def test_the_card_section_lists_each_ordering_with_its_comparisons_and_source():
    lines = orderings_card_lines([TSDAE_OVER_MLM])
    assert lines[0] == "## Findings checked as orderings (1)"
    assert lines[-1] == "| TSDAE above MLM at each size | 2 | best_task_dev | TSDAE §6, Fig. 2 |"
    assert orderings_card_lines([]) == []
