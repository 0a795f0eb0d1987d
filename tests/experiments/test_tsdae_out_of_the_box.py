"""`tsdae_out_of_the_box` (TSDAE §6, Tables 2 and 3's "Out-of-the-box supervised pre-trained models"): its resolved
trials (no training), its targets and the coverage of the two tables' rows. Seed lines: ../shared/seeds/002_*.txt."""

from __future__ import annotations

import pytest

from sentsweep.experiments import experiment_names, get_experiment
from sentsweep.experiments.coverage import coverage
from sentsweep.experiments.tsdae.tsdae_out_of_the_box import DEFINITION
from tests.experiments.test_resolved_trials import resolved_trials

MODELS = ["kwang2049/SBERT-base-nli-v2", "kwang2049/SBERT-base-nli-stsb-v2"]


@pytest.fixture(autouse=True)
def _scratch_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def test_each_released_model_of_table_8_is_scored_as_it_is_once():
    """App. B l.379-380 (Table 8): "SBERT-base-nli-v2 https://huggingface.co/kwang2049/SBERT-base-nli-v2",
    "SBERT-base-nli-stsb-v2 https://huggingface.co/kwang2049/SBERT-base-nli-stsb-v2"."""
    trials = resolved_trials("tsdae_out_of_the_box")
    assert [(trial.method, trial.settings.model, trial.settings.pooling, trial.seed) for trial in trials] == [
        ("frozen_encoder", model, "mean", 0) for model in MODELS]


def test_targets_are_the_out_of_the_box_rows_of_tables_2_and_3():
    """TSDAE l.197-198 (Table 2): "SBERT-base-nli-v2 53.4 11.8 75.4 69.9 72.7 66.8 70.0 70.7 72.8 70.1 52.0",
    "SBERT-base-nli-stsb-v2 54.5 12.9 75.9 68.5 72.2 66.2 69.2 69.9 72.3 69.4 52.3"; l.232-233 (Table 3): 83.9, 87.3."""
    cells = {(t.params["model"], t.metric): t.value for t in DEFINITION.published}
    assert len(cells) == len(DEFINITION.published) == 2 * 5
    assert cells[(MODELS[0], "twitterpara_ap")] == 72.7 and cells[(MODELS[1], "scidocs_map")] == 69.4
    assert cells[(MODELS[0], "sts_test_at_best_dev")] == 83.9 and cells[(MODELS[1], "sts_test_at_best_dev")] == 87.3
    assert all(t.runs is None for t in DEFINITION.published)


def test_coverage_counts_the_rows_in_tables_2_and_3():
    items = {(item.exhibit.document.label, item.exhibit.place): item
             for item in coverage({name: get_experiment(name) for name in experiment_names()})}
    assert items[("TSDAE", "Table 2")].sweeps["tsdae_out_of_the_box"] == 8
    assert items[("TSDAE", "Table 3")].sweeps["tsdae_out_of_the_box"] == 2
    assert "USE-large (a TensorFlow Hub model" in items[("TSDAE", "Table 3")].exhibit.reason
