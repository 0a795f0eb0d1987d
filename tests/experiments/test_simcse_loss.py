"""Wang 2022 Tables 5.9/5.10's sweep (simcse_loss): its targets are the tables' printed cells, every one a cell the
sweep produces; each trial resolves to Wang 2022's settings; the quick retrieval folders are read by the BEIR task;
--quick runs both stages to their tables (slow)."""

import contextlib
import io
import re

import pytest
import ray

from sentsweep import cli
from sentsweep.demo_data import DEMO_DIR
from sentsweep.experiments.wang_2022.simcse_loss import DEFINITION, demo_beir_folder
from sentsweep.search_spaces.protocol import with_method_settings
from sentsweep.sweep import run_sweep
from sentsweep.sweep.config.definition import target_problems
from sentsweep.sweep.config.options import parse_options
from sentsweep.sweep.launch.launcher import resolve_settings, stage_axes
from sentsweep.tasks import build_task
from sentsweep.trainables.catalog import validate_config
from tests.helpers.cluster_helpers import sqlite_store

# Wang 2022 Tables 5.9 ("Model	STS-B[%]	STS-Avg[%]") and 5.10 ("Model	R@100 [%]": Quora, CQADupStack), copied from
# the seed (tab-separated as printed).
TABLE_5_9 = """\
SimCSE _{NT-Xent}	71.4	71.9
SimCSE _{BCE}	43.3	44.2
Bert-base-uncased	47.3	51.6"""
TABLE_5_10 = """\
SimCSE _{NT-Xent}	96.2	38.2
SimCSE _{BCE}	59.8	8.7
Bert-base-uncased	86.1	19.0
BM25	97.3	60.6"""
METHOD_OF_ROW = {"SimCSE _{NT-Xent}": "simcse", "SimCSE _{BCE}": "simcse_bce", "Bert-base-uncased": "frozen_encoder",
                 "BM25": "bm25"}


def cells(table: str, metrics_of) -> dict:
    found = {}
    for row in table.splitlines():
        model, *values = row.split("\t")
        method = METHOD_OF_ROW[model]
        found |= {(method, metric): float(value) for metric, value in zip(metrics_of(method), values) if metric}
    return found


def test_targets_are_the_printed_stsb_and_recall_cells_and_every_one_a_cell_of_the_sweep():
    stsb = cells(TABLE_5_9, lambda method: ["sts_test_at_best_dev" if method == "frozen_encoder" else
                                            "sts_test_at_best_validation_loss", None])  # no STS-Avg target
    recall = cells(TABLE_5_10, lambda method: ["quora_recall_at_100", "beir-cqadupstack_recall_at_100"])
    assert {(t.params["method"], t.metric): t.value for t in DEFINITION.published} == stsb | recall
    assert len(DEFINITION.published) == 3 + 8 and all(t.runs == 3 for t in DEFINITION.published)
    assert {str(t.source).split(", ")[-1] for t in DEFINITION.published} == {"Table 5.9", "Table 5.10"}
    assert target_problems(DEFINITION, stage_axes(DEFINITION, DEFINITION.options())) == []


def resolved_trials(*argv: str) -> dict[str, object]:
    """{method: its typed trial}, resolved as the launcher resolves them."""
    options = parse_options(DEFINITION.options, ["--dry-run", *argv])
    resolved = resolve_settings(DEFINITION, options)
    trials = {}
    for _, axes in stage_axes(DEFINITION, options):
        for method in axes["method"]:
            point = resolved.constants | {"method": method, "model": "bert-base-uncased"}
            trials[method] = validate_config(with_method_settings(point, resolved.method_settings, axes))
    return trials


def test_each_row_resolves_to_001s_settings():
    trials = resolved_trials()
    assert set(trials) == {"simcse", "simcse_bce", "frozen_encoder", "bm25"}
    for method in ("simcse", "simcse_bce"):  # Table 5.3's basic setup, one epoch, checkpoint by validation loss
        training, evaluation = trials[method].training, trials[method].evaluation
        assert (training.epochs, training.batch_size, training.lr, training.warmup_steps, training.weight_decay,
                training.max_seq_length) == (1, 64, 3e-5, 910, 0.0, 32)
        assert (evaluation.select_checkpoint, training.eval_steps) == ("validation_loss", 250)
        assert trials[method].objectives[method].temperature == 0.05 and trials[method].settings.pooling == "mean"
    assert trials["frozen_encoder"].settings.pooling == "mean"  # Table 5.3's "avg." pooling
    assert trials["bm25"].settings.bm25_variant == "pyserini"  # §5.2.1: k1 = 0.9, b = 0.4
    assert all(trials[m].evaluation.select_checkpoint == "best_sts_dev" for m in ("frozen_encoder", "bm25"))


def test_the_quick_beir_folder_asks_each_close_pair_for_its_second_sentence(tmp_path):
    folder = demo_beir_folder(str(DEMO_DIR / "sts-test.csv"), "stsb", tmp_path / "quora")
    task = build_task("quora", str(folder))
    assert task.splits == ("test",) and len(task.documents) == 150
    queries = task.qrels["test"]
    assert queries and all(relevant == {"d" + query[1:]} for query, relevant in queries.items())


def test_the_card_says_what_is_not_targeted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert run_sweep(DEFINITION, ["--dry-run"]) == 0
    card = out.getvalue()
    assert "STS-Avg (Table 5.9) is not targeted" in card
    assert "**Trials:** 2 + 2 grid points x 3 seeds = 12" in card


@pytest.mark.slow
def test_quick_runs_both_stages_to_their_tables_with_the_retrieval_columns(tmp_path, shared_ray):
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run_sweep(DEFINITION, ["--quick", "--tracking-uri", sqlite_store(tmp_path),
                                          "--output-dir", str(tmp_path / "out")])
    finally:
        ray.shutdown()
    printed = out.getvalue()
    assert code == 0, err.getvalue()
    losses, baselines = [line for line in printed.splitlines() if line.startswith("| method |")]
    for header in (losses, baselines):  # Table 5.10's columns in both stages' tables
        assert "| quora_recall_at_100 | beir-cqadupstack_recall_at_100 |" in header
        assert header.startswith("| method | sts_test_at_best_validation_loss | sts_test_at_best_dev |")
    rows = [line for line in printed.splitlines() if line.startswith(tuple(f"| {m} |" for m in METHOD_OF_ROW.values()))]
    assert len(rows) == 4 and printed.count("Runs left out: none") == 2
    # the baselines have no validation loss: their one checkpoint's STS-B is sts_test_at_best_dev
    assert all(row.startswith(("| frozen_encoder | – | ", "| bm25 | – | ")) for row in rows[2:])
    # §5.3.3's finding on Figs. 5.3/5.4, SimCSE's cells: checked under the first table, none under the baselines'
    first, second = [line for line in printed.splitlines() if "Orderings stated in words" in line]
    assert re.search(r"Orderings stated in words: 2 compare cells of this stage: \d (met|not met)", first), first
    assert "Orderings stated in words: none of the sweep's 2 compares cells of this stage." in second
    [listing] = (tmp_path / "out").glob("simcse_loss-*-reproduction_targets.md")
    assert "## Orderings stated in words" in listing.read_text(encoding="utf-8")


def test_sentsweep_list_shows_the_sweep_with_its_reference(capsys):
    assert cli.main(["list"]) == 0
    [line] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("simcse_loss ")]
    assert "[Wang 2022" in line and "Tables 5.9/5.10" in line
