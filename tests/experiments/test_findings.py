"""The orderings the experiments declare (`SweepDefinition.orderings`: the TSDAE paper's §6, §7.1 and §7.2, Malmberg
2021 §5.2, Wang 2022 §5.3.3): each quotes its seed, names cells its sweep produces, holds on a table built to its
order and fails once two of its cells are swapped; the figures they cite count as targeted, and the card lists them.
Their quotes are checked verbatim in their seeds by tests/test_seed_quotes.py (its `published_citations`)."""

from __future__ import annotations

import contextlib
import io
from dataclasses import replace

import pandas as pd
import pytest

from sentsweep.analysis.orderings import MET, NOT_MET, Cell, PublishedOrdering, check_ordering
from sentsweep.analysis.reproduction import PublishedValue
from sentsweep.experiments import experiment_names, get_experiment
from sentsweep.experiments.coverage import WITH_TARGETS, coverage
from sentsweep.experiments.tsdae.findings import LABELLED_AFTER_PRETRAINING_ORDERINGS, pretrained_row
from sentsweep.experiments.wang_2022 import findings as wang_findings
from sentsweep.references import SOURCE_DOCUMENTS
from sentsweep.settings import Source
from sentsweep.sweep import run_sweep
from sentsweep.sweep.config.definition import target_problems
from sentsweep.sweep.config.options import parse_options
from sentsweep.sweep.launch.launcher import stage_axes
from sentsweep.sweep.search.target_tasks import TASK_AXIS
from tests.test_seed_quotes import QUOTE

DECLARING = [name for name in experiment_names() if get_experiment(name).orderings]
DECLARED = [(name, index, ordering) for name in DECLARING
            for index, ordering in enumerate(get_experiment(name).orderings)]


def ids(item) -> str:
    return f"{item[0]}[{item[1]}]"


def test_the_sweeps_re_running_figures_with_findings_declare_them():
    assert set(DECLARING) == {"labelled_after_pretraining", "sample_size", "sts_distractors", "simcse_loss",
                              "tsdae_pos_tags"}
    assert len(DECLARED) == 17


@pytest.mark.parametrize("item", DECLARED, ids=ids)
def test_each_ordering_quotes_a_source_document_in_a_figures_place(item):
    _, _, ordering = item
    assert isinstance(ordering.source, Source) and ordering.source.reference in SOURCE_DOCUMENTS
    assert "Fig" in ordering.source.where and QUOTE.search(ordering.source.note), ordering.source


@pytest.mark.parametrize("item", DECLARED, ids=ids)
def test_each_orderings_cells_are_cells_its_sweep_can_produce(item):
    """Every cell passes `target_problems` as a numeric target would, the sweep given the cell's target task."""
    name, _, ordering = item
    definition = get_experiment(name)
    by_task: dict = {}
    for cell in ordering.cells():
        by_task.setdefault(cell.params.get(TASK_AXIS), []).append(
            PublishedValue(cell.params, cell.metric, 0.0, ordering.source))
    for task, proxies in by_task.items():
        options = parse_options(definition.options, ["--dry-run", *(["--eval-task", f"{task}=/data/{task}"]
                                                                     if task else [])])
        assert target_problems(replace(definition, published=tuple(proxies)), stage_axes(definition, options)) == []


def test_a_supervised_cell_names_the_pretraining_row_as_the_chained_stage_logs_it():
    """`pretrained` is the pre-training stage's row less its target task (`KeptModels.chained`)."""
    definition = get_experiment("labelled_after_pretraining")
    options = parse_options(definition.options, ["--dry-run", "--eval-task", "cqadupstack=/data/cqadupstack"])
    axes = dict(stage_axes(definition, options))["pretraining"]
    rows = [", ".join(f"{name}={values[0] if name != 'method' else method}" for name, values in axes.items()
                      if name != TASK_AXIS) for method in axes["method"]]
    assert rows == [pretrained_row(method, "cqadupstack") for method in axes["method"]]


def test_the_cutoffs_compared_are_the_retrieval_tasks():
    from sentsweep.tasks.retrieval import CUTOFFS  # lazy: torch

    assert wang_findings.CUTOFFS == CUTOFFS


def ranks(ordering: PublishedOrdering) -> dict[str, int]:
    """Each cell's height in the order (0: above none), by label; fails on a cycle (an ordering that cannot hold)."""
    below: dict[str, list[str]] = {cell.label(): [] for cell in ordering.cells()}
    for higher, lower in ordering.pairs:
        below[higher.label()].append(lower.label())
    found: dict[str, int] = {}

    def height(label: str, seen: tuple = ()) -> int:
        assert label not in seen, f"{ordering.finding}: a cycle through {label}"
        if label not in found:
            found[label] = 1 + max((height(lower, (*seen, label)) for lower in below[label]), default=-1)
        return found[label]

    for label in below:
        height(label)
    return found


def table_where_held(ordering: PublishedOrdering) -> pd.DataFrame:
    """Two seeds' runs of every cell, each cell's score its height in the order (params logged as strings)."""
    height = ranks(ordering)
    runs: dict[str, dict] = {}
    for cell in ordering.cells():
        key = ", ".join(f"{name}={value}" for name, value in cell.params.items())
        runs.setdefault(key, {"params": cell.params, "metrics": {}})["metrics"][cell.metric] = height[cell.label()]
    return pd.DataFrame([{"run_id": f"{key}-{seed}", "status": "FINISHED", "seed": str(seed)}
                         | {f"params.{name}": str(value) for name, value in run["params"].items()}
                         | {f"metrics.{metric}": 10.0 * score + seed for metric, score in run["metrics"].items()}
                         for key, run in runs.items() for seed in (0, 1)])


def first_pair_swapped(ordering: PublishedOrdering) -> PublishedOrdering:
    """The ordering with the two cells of its first comparison exchanged wherever they stand."""
    higher, lower = ordering.pairs[0]
    swap = {higher.label(): lower, lower.label(): higher}
    return replace(ordering, pairs=tuple((swap.get(a.label(), a), swap.get(b.label(), b)) for a, b in ordering.pairs))


@pytest.mark.parametrize("item", DECLARED, ids=ids)
def test_each_ordering_holds_on_a_table_in_its_order_and_fails_with_two_cells_swapped(item):
    _, _, ordering = item
    runs = table_where_held(ordering)
    assert check_ordering(runs, ordering).verdict == MET
    mutated = check_ordering(runs, first_pair_swapped(ordering))
    assert mutated.verdict == NOT_MET and mutated.failed


def test_swapping_two_methods_breaks_tsdae_over_mlm_on_the_table_where_it_held():
    """TSDAE §6 (Fig. 2): "TSDAE outperforms MLM ... except for AskUbuntu"; with TSDAE and MLM exchanged in every
    cell, every comparison fails."""
    ordering = LABELLED_AFTER_PRETRAINING_ORDERINGS[0]
    runs = table_where_held(ordering)

    def exchanged(cell: Cell) -> Cell:
        row = cell.params["pretrained"]
        swapped = row.replace("tsdae", "@").replace("mlm", "tsdae").replace("@", "mlm")
        return Cell({**cell.params, "pretrained": swapped}, cell.metric)

    mutated = replace(ordering, pairs=tuple((exchanged(a), exchanged(b)) for a, b in ordering.pairs))
    assert check_ordering(runs, ordering).verdict == MET
    check = check_ordering(runs, mutated)
    assert check.verdict == NOT_MET and len(check.failed) == len(ordering.pairs) == 6


FIGURES = {("TSDAE", "Figure 2"), ("TSDAE", "Figure 3"), ("TSDAE", "Figure 5"), ("TSDAE", "Figure 6"),
           ("Malmberg 2021", "Figure 4.1"), ("Malmberg 2021", "Figure 4.2"), ("Malmberg 2021", "Figure 4.3"),
           ("Wang 2022", "Figure 5.3"), ("Wang 2022", "Figure 5.4")}


def test_the_figures_whose_findings_are_declared_count_as_targeted():
    items = coverage({name: get_experiment(name) for name in experiment_names()})
    by_place = {(item.exhibit.document.label, item.exhibit.place): item for item in items}
    for place in FIGURES:
        item = by_place[place]
        assert item.status == WITH_TARGETS and sum(item.orderings.values()) > 0, place
    assert by_place[("TSDAE", "Figure 2")].targets_text() == "5 orderings"


def test_the_card_lists_the_orderings_with_their_quotes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert run_sweep(get_experiment("sts_distractors"), ["--dry-run", "--quick"]) == 0
    card = out.getvalue()
    assert "## Findings checked as orderings (6)" in card
    assert ("| TF-IDF (full vocabulary) above TF-IDF (1,024 terms) at 1-5 words changed, all pairs | 5 | "
            "distractors_all_1_top1, distractors_all_2_top1, distractors_all_3_top1, distractors_all_4_top1, "
            "distractors_all_5_top1 | Malmberg 2021 §5.2, Fig. 4.1 (\"Constricting TF-IDF to use a feature vector of "
            "equal size to the Sentence-BERT vectors severely lowers performance\") |") in card
