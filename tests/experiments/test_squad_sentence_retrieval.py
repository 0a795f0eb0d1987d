"""Malmberg 2021 Table 4.1's sweep (squad_sentence_retrieval): its targets are the table's printed rows, every one a
cell the sweep produces; each trial resolves to Malmberg 2021's settings; a missing SQuAD task fails before anything
runs; the card says what cannot run; --quick runs every stage to its table (slow)."""

import contextlib
import io
import json

import pandas as pd
import pytest
import ray

from sentsweep import cli
from sentsweep.analysis.reproduction import WITHIN, check_target
from sentsweep.analysis.runs import latest_sweep_run_id, run_artifact_text
from sentsweep.experiments.malmberg_2021.squad_sentence_retrieval import DEFINITION, demo_squad_file
from sentsweep.search_spaces.protocol import with_method_settings
from sentsweep.sweep import run_sweep
from sentsweep.sweep.config.definition import target_problems
from sentsweep.sweep.config.options import parse_options
from sentsweep.sweep.execution.target_list import TARGET_LIST_ARTIFACT
from sentsweep.sweep.launch.launcher import resolve_settings, stage_axes
from sentsweep.tasks.distractors import squad_pools
from sentsweep.trainables.catalog import validate_config
from tests.helpers.cluster_helpers import sqlite_store

# Malmberg 2021 Table 4.1 "SQuAD experiments", the rows the sweep runs, copied from the seed (tab-separated as printed).
TABLE_4_1_ROWS = """\
BERT	Mean	Pre-trained	0.1	-	70.1%
BERT	CLS	Pre-trained	0.1	-	37.0%
SBERT	Mean	STS-B	0.1	SBERT params	72.9%
TF-IDF	-	-	-	Lemma'd, max size vocab	77.2%
TF-IDF	-	-	-	Lemma'd, vocab size 1024	70.5%"""


def cell_of(row: str) -> dict:
    model, pooling, _, _, comment, _ = row.split("\t")
    if model == "BERT":
        return {"method": "frozen_encoder", "pooling": {"Mean": "mean_no_special_second_last",
                                                        "CLS": "cls_second_last"}[pooling]}
    if model == "SBERT":
        return {"method": "sbert", "pooling": "mean_no_special"}
    return {"method": "tfidf", "lemmatize": True, "max_features": 1024 if "1024" in comment else None}


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run_sweep(DEFINITION, list(argv))
    return code, out.getvalue(), err.getvalue()


def test_targets_are_table_4_1s_rows_one_run_each_and_every_one_a_cell_of_the_sweep():
    expected = [(cell_of(row), float(row.split("\t")[-1].rstrip("%"))) for row in TABLE_4_1_ROWS.splitlines()]
    assert [(dict(t.params), t.value) for t in DEFINITION.published] == expected
    assert all(t.metric == "squad_top1" and t.runs == 1 and "Table 4.1" in str(t.source) for t in DEFINITION.published)
    assert target_problems(DEFINITION, stage_axes(DEFINITION, DEFINITION.options())) == []


def test_a_target_of_the_full_vocabulary_finds_its_runs_logged_max_features_none():
    [full] = [t for t in DEFINITION.published if "max_features" in t.params and t.params["max_features"] is None]
    runs = pd.DataFrame([{"run_id": f"r{seed}", "status": "FINISHED", "seed": str(seed), "params.method": "tfidf",
                          "params.lemmatize": "True", "params.max_features": "None", "metrics.squad_top1": value}
                         for seed, value in enumerate([77.0, 77.4])])
    assert check_target(runs, full).verdict == WITHIN


def resolved_trials(*argv: str) -> dict[str, object]:
    """{method: the typed trial of its stage's first grid point}, resolved as the launcher resolves them."""
    options = parse_options(DEFINITION.options, ["--dry-run", *argv])
    resolved = resolve_settings(DEFINITION, options)
    trials = {}
    for _, axes in stage_axes(DEFINITION, options):
        point = resolved.constants | {name: values[0] for name, values in axes.items()} | {"model": "bert-base-uncased"}
        trial = validate_config(with_method_settings(point, resolved.method_settings, axes))
        trials[trial.method] = trial
    return trials


def test_each_stage_resolves_to_003s_settings():
    trials = resolved_trials()
    sbert = trials["sbert"]
    assert (sbert.training.batch_size, sbert.training.lr, sbert.training.warmup_ratio, sbert.training.epochs,
            sbert.training.max_steps) == (16, 2e-5, 0.1, 4, None)  # §3.4.1's "SBERT params"
    assert sbert.settings.pooling == "mean_no_special" and sbert.settings.loss == "cosine"  # §2.8
    assert sbert.settings.train_file.endswith("sts-train.csv")  # fine-tuned on STS-B's train pairs
    assert trials["tfidf"].settings.lemmatize is True and trials["tfidf"].settings.max_features is None
    assert trials["frozen_encoder"].settings.pooling == "cls_second_last"
    assert stage_axes(DEFINITION, DEFINITION.options())[0][1]["pooling"][:2] == [
        "cls_second_last", "mean_no_special_second_last"]  # §3.3.1's two, from the second-to-last layer


def test_without_the_squad_task_the_sweep_fails_before_anything_runs_naming_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run("--model", "bert-base-uncased")
    assert code == 2 and "--eval-task squad=" in err and "tasks given: none" in err
    assert list(tmp_path.iterdir()) == []


def test_the_card_names_the_rows_that_cannot_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, card, err = run("--dry-run")
    assert code == 0, err
    assert "Not run: the fine-tuned BERT rows" in card and "dropout 0.3 fine-tuned rows" in card
    assert "SBERT at dropout 0.3 (row 9) is a run with --set dropout=0.3" in card
    assert "| 3 SBERT on STS-B | method | sbert | Malmberg 2021 Table 4.1 (SBERT, STS-B) |" in card
    assert "**Trials:** 4 + 2 + 1 grid points x 3 seeds = 21" in card


def test_the_quick_squad_file_answers_each_question_with_its_own_sentence(tmp_path):
    corpus = ["A man plays a guitar.", "A dog eats an apple.", "A cat holds a box.", "A kid buys a car.",
              "A lady paints a bike."]
    path = demo_squad_file(corpus, tmp_path / "squad.json", per_paragraph=2)
    pools = squad_pools(path)
    assert pools.queries == ["Who plays a guitar?", "Who eats an apple?", "Who holds a box?", "Who buys a car?"]
    assert [pool[positive] for pool, positive in zip(pools.candidates, pools.positives)] == corpus[:4]
    assert len(json.loads(path.read_text())["data"][0]["paragraphs"]) == 2  # the last sentence left over


@pytest.mark.slow
def test_quick_runs_every_stage_to_its_table(tmp_path, shared_ray):
    uri = sqlite_store(tmp_path)
    try:
        code, printed, err = run("--quick", "--tracking-uri", uri, "--output-dir", str(tmp_path / "out"))
    finally:
        ray.shutdown()
    assert code == 0, err
    for header in ("| method | pooling | squad_top1 | best_sts_dev |", "| method | max_features | squad_top1 | "
                   "best_sts_dev |", "| method | squad_top1 | best_sts_dev |"):
        assert header in printed
    rows = [line for line in printed.splitlines() if line.startswith(("| frozen_encoder |", "| tfidf |", "| sbert |"))]
    assert len(rows) == 4 + 2 + 1
    assert printed.count("Runs left out: none") == 3
    assert "not run 0" not in printed
    # the full list of the targets (the sweep prints one line per stage): the full vocabulary's target found its runs
    listing = run_artifact_text(uri, latest_sweep_run_id(uri, "squad_sentence_retrieval"), TARGET_LIST_ARTIFACT)
    assert "max_features=None | squad_top1 | 2 |" in listing


def test_sentsweep_list_shows_the_sweep_with_its_reference(capsys):
    assert cli.main(["list"]) == 0
    [line] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("squad_sentence_retrieval ")]
    assert "[Malmberg 2021" in line and "Table 4.1" in line
