"""sentence-transformers losses as methods with no code (`st:<LossName>`, sentsweep.trainables.st_losses): their
constructor arguments as typed settings read from the signature, their inputs checked against the sweep's data,
their citation on the card, and a sweep over three of them (recipe (b)) run to a table with each loss's arguments
as MLflow params."""

from __future__ import annotations

import inspect
import sys

import pytest
from mlflow.tracking import MlflowClient

from sentsweep.analysis.runs import fetch_trial_runs
from sentsweep.errors import InputError
from sentsweep.trainables.catalog import get_method, validate_config
from sentsweep.trainables.st_losses import build_st_loss
from tests.conftest import SHARED_INPUTS, typed_trial
from tests.helpers.cluster_helpers import PROJECT, run_driver, sqlite_store

RECIPE_B = PROJECT / "examples" / "st_losses.py"
TRAIN_FILE = str(PROJECT / "sentsweep" / "demo_data" / "sts-train.csv")


def test_a_loss_s_constructor_arguments_are_its_settings_with_its_own_defaults():
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    signature = inspect.signature(MultipleNegativesRankingLoss.__init__).parameters
    settings = {row.name: row for row in get_method("st:MultipleNegativesRankingLoss").settings.describe()}
    assert settings["scale"].default == signature["scale"].default == 20.0
    assert settings["partition_mode"].default == signature["partition_mode"].default == "joint"
    assert "similarity_fct" not in settings  # a function: the loss keeps its own
    with pytest.raises(InputError, match="setting partition_mode='rows': expected one of 'joint', 'per_direction'"):
        validate_config(SHARED_INPUTS | {"method": "st:MultipleNegativesRankingLoss", "partition_mode": "rows",
                                         "model": "m", "st_inputs": "sentence_twice"})
    with pytest.raises(InputError, match="unknown setting 'scael'; did you mean 'scale'"):
        validate_config(SHARED_INPUTS | {"method": "st:CoSENTLoss", "scael": 30.0, "model": "m"})


def test_a_loss_sentsweep_cannot_feed_or_that_does_not_exist_is_refused():
    with pytest.raises(InputError, match="sentence-transformers has no loss 'CoSentLoss'; did you mean st:CoSENTLoss"):
        get_method("st:CoSentLoss")
    with pytest.raises(InputError, match="st:TripletLoss: sentsweep does not know what the loss reads"):
        get_method("st:TripletLoss")


def test_a_loss_whose_columns_the_sweep_lacks_is_refused_naming_them():
    with pytest.raises(InputError, match=r"reads \(sentence1, sentence2, score\) of the labelled pairs \(train_file\), "
                                         "which this sweep does not give"):
        validate_config(SHARED_INPUTS | {"method": "st:CoSENTLoss", "model": "m"})
    with pytest.raises(InputError, match="st_inputs='sentence_twice' is not what the loss reads"):
        validate_config(SHARED_INPUTS | {"method": "st:AnglELoss", "model": "m", "train_file": TRAIN_FILE,
                                         "st_inputs": "sentence_twice"})


def test_the_loss_is_built_with_the_trial_s_arguments_and_fed_scored_pairs(tiny_model_dir):
    setup = build_st_loss(typed_trial({"method": "st:CoSENTLoss", "model": str(tiny_model_dir), "scale": 7.5,
                                       "train_file": TRAIN_FILE}))
    assert type(setup.module).__name__ == "CoSENTLoss" and setup.module.scale == 7.5
    first = setup.examples[0]
    assert 0.0 <= first[2] <= 1.0 and len(setup.examples) == setup.metrics["gold_pairs"]  # score / score_max
    import random

    assert setup.batch_loss(setup.examples[:4], random.Random(0)).ndim == 0


@pytest.mark.slow
def test_recipe_b_sweeps_three_losses_to_a_table_with_their_arguments_and_citations(tmp_path, shared_ray):
    on_shared_ray = {"RAY_ADDRESS": shared_ray}  # the sweep on the session's Ray
    card = run_driver([sys.executable, str(RECIPE_B), "--quick", "--dry-run"], tmp_path, on_shared_ray, timeout=120)
    assert card.returncode == 0, card.stderr
    assert "title={CoSENT: Consistent Sentence Embedding via Similarity Ranking}" in card.stdout
    assert "AoE: Angle-optimized Embeddings for Semantic Textual Similarity" in card.stdout
    assert "Representation Learning with Contrastive Predictive Coding" in card.stdout  # MNRL's own citation
    refused = run_driver([sys.executable, str(RECIPE_B), "--quick", "--set", "scael=30"], tmp_path, on_shared_ray,
                         timeout=120)
    assert refused.returncode == 2 and "did you mean 'scale'" in refused.stderr, refused.stderr

    uri = sqlite_store(tmp_path)
    result = run_driver([sys.executable, str(RECIPE_B), "--quick", "--tracking-uri", uri], tmp_path, on_shared_ray)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for loss in ("st:CoSENTLoss", "st:AnglELoss", "st:MultipleNegativesRankingLoss"):
        assert f"| {loss} |" in result.stdout
    runs = fetch_trial_runs(uri, "st_losses", None)
    assert len(runs) == 6 and set(runs["status"]) == {"FINISHED"}
    params = {(run.data.params["method"], run.data.params["seed"]): run.data.params
              for run in map(MlflowClient(uri).get_run, runs["run_id"])}
    assert params["st:CoSENTLoss", "0"]["scale"] == "20.0"
    assert params["st:MultipleNegativesRankingLoss", "1"]["partition_mode"] == "joint"
