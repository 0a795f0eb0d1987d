"""The poolings of Malmberg (2021) (§3.3.1): [CLS] or the mean without [CLS] and [SEP], from the last or
the second-to-last hidden layer, each equal to a hand computation from the transformer's hidden states."""

import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from sentsweep.errors import InputError
from sentsweep.models import LAYER_POOLING, POOLING_MODES, check_pooling, load_sentence_model
from sentsweep.trainables.catalog import validate_config

SENTENCES = ["A man is playing a guitar in the park.", "A dog runs."]  # unequal lengths: the batch is padded


def hidden_states_by_hand(model_dir) -> list[tuple[torch.Tensor, ...]]:
    """Each sentence alone (no padding): the hidden states of every layer, (embeddings, layer 1, ..., last)."""
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModel.from_pretrained(str(model_dir), output_hidden_states=True).eval()
    states = []
    for sentence in SENTENCES:
        encoded = tokenizer(sentence, return_tensors="pt")
        ids = encoded["input_ids"][0].tolist()
        assert ids[0] == tokenizer.cls_token_id and ids[-1] == tokenizer.sep_token_id
        assert tokenizer.cls_token_id not in ids[1:-1] and tokenizer.sep_token_id not in ids[1:-1]
        with torch.no_grad():
            states.append(tuple(layer[0] for layer in model(**encoded).hidden_states))
    return states


def expected_vector(states: tuple[torch.Tensor, ...], pooling: str) -> torch.Tensor:
    layer = {"mean_no_special": -1, "cls_second_last": -2, "mean_second_last": -2,
             "mean_no_special_second_last": -2}[pooling]
    tokens = states[layer]  # (positions, hidden): [CLS] first, [SEP] last
    if pooling == "cls_second_last":
        return tokens[0]
    if pooling == "mean_second_last":
        return tokens.mean(0)
    return tokens[1:-1].mean(0)  # without [CLS] and [SEP]


@pytest.mark.parametrize("pooling", list(LAYER_POOLING))
def test_layer_pooling_equals_the_hidden_states_by_hand(tiny_model_dir, pooling):
    states = hidden_states_by_hand(tiny_model_dir)
    pooled = load_sentence_model(str(tiny_model_dir), pooling, 32).encode(SENTENCES, convert_to_tensor=True)
    for vector, sentence_states in zip(pooled, states):
        assert torch.allclose(vector, expected_vector(sentence_states, pooling), atol=1e-5), pooling


def test_the_layer_and_the_special_tokens_make_a_difference(tiny_model_dir):
    (states, _) = hidden_states_by_hand(tiny_model_dir)
    assert not torch.allclose(states[-1], states[-2], atol=1e-3)
    assert not torch.allclose(states[-2].mean(0), states[-2][1:-1].mean(0), atol=1e-3)
    mean = load_sentence_model(str(tiny_model_dir), "mean", 32).encode(SENTENCES, convert_to_tensor=True)
    assert torch.allclose(mean[0], states[-1].mean(0), atol=1e-5)  # the plain mean keeps [CLS] and [SEP]


def test_second_to_last_layer_pooling_trains_below_the_last_layer(tiny_model_dir):
    model = load_sentence_model(str(tiny_model_dir), "mean_no_special_second_last", 32)
    features = model.preprocess(SENTENCES)
    model(features)["sentence_embedding"].pow(2).sum().backward()
    bert = model[0].auto_model
    assert bert.embeddings.word_embeddings.weight.grad.abs().sum() > 0
    assert bert.encoder.layer[-1].output.dense.weight.grad is None  # the last layer is not in the vector


def test_a_saved_model_reloads_with_its_layer_pooling(tiny_model_dir, tmp_path):
    from sentence_transformers import SentenceTransformer

    model = load_sentence_model(str(tiny_model_dir), "mean_no_special_second_last", 32)
    model.save(str(tmp_path))
    reloaded = SentenceTransformer(str(tmp_path), trust_remote_code=True)
    assert torch.allclose(reloaded.encode(SENTENCES, convert_to_tensor=True),
                          model.encode(SENTENCES, convert_to_tensor=True), atol=1e-6)


def test_the_poolings_are_method_settings_and_a_wrong_name_is_refused(tsdae_config):
    assert set(LAYER_POOLING) <= set(POOLING_MODES)
    assert validate_config(tsdae_config | {"pooling": "mean_no_special_second_last"}).settings.pooling == (
        "mean_no_special_second_last")
    with pytest.raises(InputError, match="unknown pooling 'mean_no_specials'; expected one of .*mean_no_special,"):
        check_pooling("mean_no_specials")
