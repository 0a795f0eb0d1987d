"""frozen_encoder: a model as released, scored under the pooling it is given, nothing trained (the "Pre-trained"
rows of Malmberg (2021) Table 4.1)."""

import pytest

from sentsweep.data import read_scored_pairs
from sentsweep.errors import InputError
from sentsweep.models import load_sentence_model
from sentsweep.scorers import EmbeddingScorer
from sentsweep.tasks.sts import sts_spearman
from sentsweep.trainables.catalog import train, validate_config
from sentsweep.trainables.session import LocalSession


def scores(config: dict) -> dict:
    session = LocalSession()
    train(config, session)
    (report,) = session.reports
    return report


def test_frozen_encoder_reports_the_released_models_scores_under_its_pooling(tsdae_config, tiny_model_dir):
    report = scores(tsdae_config | {"method": "frozen_encoder", "pooling": "cls_second_last"})
    scorer = EmbeddingScorer(load_sentence_model(str(tiny_model_dir), "cls_second_last", 32))
    for split, metric in (("dev", "best_sts_dev"), ("test", "sts_test_at_best_dev")):
        expected = sts_spearman(scorer, read_scored_pairs(tsdae_config[f"{split}_file"], "stsb", split))
        assert report[metric] == pytest.approx(expected, abs=1e-6)
    assert report["best_step"] == 0
    other = scores(tsdae_config | {"method": "frozen_encoder", "pooling": "mean_no_special_second_last"})
    assert other["best_sts_dev"] != pytest.approx(report["best_sts_dev"])  # the pooling reaches the model


def test_frozen_encoder_refuses_a_missing_model_and_an_unknown_pooling(tsdae_config, tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        validate_config(tsdae_config | {"method": "frozen_encoder", "model": str(tmp_path / "nowhere")})
    with pytest.raises(InputError, match="cls_second"):
        validate_config(tsdae_config | {"method": "frozen_encoder", "pooling": "cls_second"})
