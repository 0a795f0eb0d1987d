"""`tsdae_pos_tags` (TSDAE §7.2, Figs. 4 and 7): its card, its orderings and coverage, its refusals before anything
runs, and one --quick run read back through MLflow. Seed lines: ../shared/seeds/002_*.txt, l.262-285 and 482-495."""

from __future__ import annotations

import contextlib
import importlib.util
import io

import pytest
import ray
from mlflow.tracking import MlflowClient

from sentsweep import word_relevance
from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id
from sentsweep.data import read_scored_pairs
from sentsweep.demo_data import DEMO_DIR
from sentsweep.experiments import experiment_names, get_experiment
from sentsweep.experiments.coverage import WITH_TARGETS, coverage
from sentsweep.experiments.tsdae.findings import POS_TASKS
from sentsweep.sweep import run_sweep
from sentsweep.tasks.pos_tags import POS_TASKS as REGISTERED_POS_TASKS
from sentsweep.word_relevance import GROUPS
from tests.helpers.cluster_helpers import sqlite_store

NAME = "tsdae_pos_tags"


def sweep(*options: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the sweep with `options`."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run_sweep(get_experiment(NAME), list(options))
    return code, out.getvalue(), err.getvalue()


def test_the_card_runs_the_unsupervised_and_released_models_and_asks_for_the_useb_folders(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, card, err = sweep("--dry-run")
    assert code == 0, err
    assert "| 1 unsupervised | method | tsdae, ct, simcse | TSDAE §7.2 (\"This is good news for the unsupervised " \
           "methods (TSDAE, CT, SimCSE and BERT-flow)\"; BERT-flow is not implemented) |" in card
    assert "| 2 out-of-the-box | model | kwang2049/SBERT-base-nli-v2, kwang2049/SBERT-base-nli-stsb-v2 |" in card
    assert "| NN above every other tag group, each method and data set | 460 |" in card
    assert "**Cannot run as given:** --eval-task pos_<task>=FOLDER is required: USEB's data-eval folders " \
           "(pos_askubuntu=data-eval/askubuntu," in card
    assert "Deviation, the project's choice: the words are tagged by TextBlob's PatternTagger" in card


def test_the_sweeps_target_tasks_are_the_registered_part_of_speech_tasks():
    assert POS_TASKS == REGISTERED_POS_TASKS


def test_figures_4_and_7_have_the_sweep_and_its_orderings_as_targets():
    items = {(item.exhibit.document.label, item.exhibit.place): item
             for item in coverage({name: get_experiment(name) for name in experiment_names()})}
    for place in ("Figure 4", "Figure 7"):
        item = items[("TSDAE", place)]
        assert (item.status, item.orderings) == (WITH_TARGETS, {NAME: 3})


def test_without_textblob_the_sweep_is_refused_in_one_line_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    found = importlib.util.find_spec
    monkeypatch.setattr(word_relevance.importlib.util, "find_spec",
                        lambda name, *args: None if name == "textblob" else found(name, *args))
    code, _, err = sweep("--quick", "--output-dir", str(tmp_path / "out"))
    assert code == 2
    assert err.strip() == ("error: the part-of-speech analysis needs TextBlob, which is not installed: pip install -c "
                           "constraints.txt -e '.[pos]' (its tagger and lexicon come with the package)")
    assert not ray.is_initialized() and not (tmp_path / "mlflow.db").exists() and not (tmp_path / "out").exists()


def test_a_useb_folder_that_is_not_there_is_named_in_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = sweep("--quick", "--output-dir", str(tmp_path / "out"), "--eval-task",
                         "pos_askubuntu=data-eval/askubuntu")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("error: pos_askubuntu: folder not found: ") and "data-eval/askubuntu" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_quick_logs_every_tag_groups_share_and_prior_on_the_demo_pairs(tmp_path, shared_ray):
    uri = sqlite_store(tmp_path)
    code, printed, err = sweep("--quick", "--tracking-uri", uri, "--output-dir", str(tmp_path / "out"))
    assert code == 0, err
    sweep_run = latest_sweep_run_id(uri, NAME)
    runs = fetch_trial_runs(uri, NAME, sweep_run)
    assert sorted(zip(runs["params.stage"], runs["params.method"])) == [
        ("out-of-the-box", "frozen_encoder")] * 2 + [("unsupervised", "tsdae")] * 2
    demo = read_scored_pairs(DEMO_DIR / "sts-test.csv")
    paraphrases = sum(round(score) > 3 for score in demo.scores)  # in both of the demo folder's files
    assert (runs["metrics.pos_twitterpara_pairs"] == 2 * paraphrases).all()
    shares = runs[[f"metrics.pos_twitterpara_{group}" for group in GROUPS]]
    priors = runs[[f"metrics.pos_twitterpara_prior_{group}" for group in GROUPS]]
    assert shares.sum(axis=1).round(6).eq(100).all() and priors.sum(axis=1).round(6).eq(100).all()
    assert priors.nunique().eq(1).all()  # the prior is the data's, whatever the model
    # the table's column is each configuration's NN share; the sweep run keeps the orderings' verdicts
    assert "| method | sts_test_last | sts_test_at_best_dev | sts_dev | best_sts_dev | pos_twitterpara_NN |" in printed
    assert "Orderings stated in words: 3 compare cells of this stage:" in printed
    client = MlflowClient(uri)
    targets = client.download_artifacts(sweep_run, "reproduction_targets.md", str(tmp_path))
    with open(targets, encoding="utf-8") as file:
        text = file.read()
    assert "| NN above its prior share, each method and data set | " in text
