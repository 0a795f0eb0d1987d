"""A released sentence-transformers model whose own pooling is the one asked for trains as released, every module
kept (all-MiniLM-L6-v2: mean pooling, then Normalize); another pooling replaces its modules, and says which."""

import json
import random

import pytest
import torch

from sentsweep.models import load_sentence_model, replaced_modules, saved_pooling
from sentsweep.trainables.unsupervised import build_unsupervised
from tests.conftest import typed_trial

SENTENCES = ["A man is playing a guitar in the park.", "A dog runs."]


def module_kinds(model) -> list[str]:
    return [type(module).__name__ for module in model]


@pytest.fixture(scope="module", params=["pooling_mode", "legacy flags"])
def released_dir(request, tiny_model_dir, tmp_path_factory):
    """A tiny model saved as all-MiniLM-L6-v2 is released: Transformer, Pooling(mean), Normalize; its Pooling
    config in today's form or in the legacy one flag per mode (all-MiniLM-L6-v2's own)."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize

    base = load_sentence_model(str(tiny_model_dir), "mean", 32)
    folder = tmp_path_factory.mktemp("released")
    SentenceTransformer(modules=[*base, Normalize()]).save(str(folder))
    if request.param == "legacy flags":
        pooling_config = folder / "1_Pooling" / "config.json"
        config = json.loads(pooling_config.read_text())
        dimension = config.get("embedding_dimension", config.get("word_embedding_dimension"))
        pooling_config.write_text(json.dumps({
            "word_embedding_dimension": dimension, "pooling_mode_cls_token": False,
            "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
            "pooling_mode_mean_sqrt_len_tokens": False}))
    return folder


def test_the_released_pooling_keeps_every_module(released_dir):
    assert saved_pooling(str(released_dir)) == "mean"
    model = load_sentence_model(str(released_dir), "mean", 32)
    assert module_kinds(model)[-1] == "Normalize"
    norms = model.encode(SENTENCES, convert_to_tensor=True).norm(dim=1)
    assert torch.allclose(norms, torch.ones_like(norms), atol=1e-5)
    assert replaced_modules(str(released_dir), "mean") is None


def test_another_pooling_replaces_the_modules_and_says_which(released_dir):
    model = load_sentence_model(str(released_dir), "cls", 32)
    assert module_kinds(model) == ["Transformer", "Pooling"]
    assert replaced_modules(str(released_dir), "cls") == "Pooling(mean), Normalize replaced by Pooling(cls)"
    assert replaced_modules(str(released_dir), "cls_linear") == (
        "Pooling(mean), Normalize replaced by Pooling(cls), Dense(tanh)")


def test_a_bare_checkpoint_has_no_modules_to_replace(tiny_model_dir):
    assert saved_pooling(str(tiny_model_dir)) is None
    assert replaced_modules(str(tiny_model_dir), "cls") is None


def test_an_unsupervised_trial_trains_the_released_modules(released_dir):
    """TSDAE with pooling=mean on the released model: the trained model is the released one, Normalize included,
    and its gradient reaches the encoder through it."""
    setup = build_unsupervised(typed_trial({"method": "tsdae", "model": str(released_dir), "pooling": "mean"}))
    assert module_kinds(setup.model)[-1] == "Normalize"
    setup.batch_loss(SENTENCES * 4, random.Random(0)).backward()
    assert setup.model[0].auto_model.embeddings.word_embeddings.weight.grad.abs().sum() > 0


def test_a_dropout_free_released_model_keeps_its_modules(released_dir):
    model = load_sentence_model(str(released_dir), "mean", 32, dropout=0.0)
    assert module_kinds(model)[-1] == "Normalize"
    assert model[0].auto_model.config.hidden_dropout_prob == 0.0
    assert model[0].auto_model.config.attention_probs_dropout_prob == 0.0


def test_the_card_names_the_modules_a_pooling_replaces(released_dir, tmp_path, monkeypatch):
    """nm_weight asks for cls and mean pooling: on a mean-pooled released model, the card lists cls only."""
    from tests.experiments.test_protocol_cards import dry_run

    monkeypatch.chdir(tmp_path)
    code, card, err = dry_run("nm_weight", "--model", str(released_dir))
    assert code == 0, err
    assert "| cls | Pooling(mean), Normalize replaced by Pooling(cls) |" in card
    assert "| mean |" not in card
    code, card, err = dry_run("nm_weight", "--model", str(released_dir), "--poolings", "mean")
    assert code == 0, err
    assert "## The model's own modules replaced" not in card
