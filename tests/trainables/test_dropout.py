"""Malmberg (2021) §3.4.2: dropout is a setting of the trained encoder (BERT's own 0.1 unless given;
Malmberg 2021 also trains at 0.3), applied to its hidden layers and its attention."""

import pytest
import torch

from sentsweep.demo_data import NLI_FILE as NLI_DEMO_FILE
from sentsweep.errors import InputError
from sentsweep.trainables.catalog import validate_config
from sentsweep.trainables.sbert import build_sbert, build_sbert_nli
from sentsweep.trainables.unsupervised import build_unsupervised
from tests.conftest import SHARED_INPUTS, typed_trial


def dropouts(model) -> set[float]:
    """The dropout probabilities of the encoder: its config's and its Dropout modules'."""
    encoder = model[0].auto_model
    return {encoder.config.hidden_dropout_prob, encoder.config.attention_probs_dropout_prob} | {
        module.p for module in encoder.modules() if isinstance(module, torch.nn.Dropout)}


def test_the_checkpoints_dropout_unless_given(tiny_model_dir):
    config = {"method": "tsdae", "model": str(tiny_model_dir), "pooling": "cls"}
    assert typed_trial(config).training.dropout is None
    assert dropouts(build_unsupervised(typed_trial(config)).model) == {0.1}
    assert dropouts(build_unsupervised(typed_trial(config | {"dropout": 0.3})).model) == {0.3}


def test_sbert_fine_tunes_at_the_dropout_given(tiny_model_dir):
    """Malmberg 2021 Table 3.1's SBERT rows: STS-B at dropout 0.1 and 0.3."""
    config = {"method": "sbert", "model": str(tiny_model_dir), "pooling": "mean",
              "train_file": SHARED_INPUTS["dev_file"]}
    assert dropouts(build_sbert(typed_trial(config | {"dropout": 0.3})).model) == {0.3}


def test_the_nli_step_fine_tunes_at_the_dropout_given(tiny_model_dir):
    config = {"method": "sbert_nli", "model": str(tiny_model_dir), "pooling": "mean", "nli_file": str(NLI_DEMO_FILE)}
    assert dropouts(build_sbert_nli(typed_trial(config | {"dropout": 0.3})).model) == {0.3}


@pytest.mark.parametrize("change, message", [
    ({"method": "tsdae", "dropout": 1.0}, "setting dropout=1.0 is out of range: must be < 1"),
    ({"method": "consert", "dropout": 0.3}, "consert trains without the encoder's dropout; got dropout=0.3"),
])
def test_a_bad_dropout_is_refused_before_training(tiny_model_dir, change, message):
    with pytest.raises(InputError, match=message):
        validate_config(SHARED_INPUTS | {"model": str(tiny_model_dir), "pooling": "mean"} | change)
