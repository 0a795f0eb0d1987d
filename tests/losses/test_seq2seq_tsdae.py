"""TSDAE on an encoder-decoder (`Seq2SeqTsdaeLoss`: the TSDAE paper's Table 4 rows BART-base and T5-base) against a
hand computation of the reconstruction loss, and TSDAE from scratch (`initialisation="random"`), on tiny models
built from a config (no download)."""

from __future__ import annotations

import random

import pytest
import torch
import torch.nn.functional as F
from transformers import AutoModelForSeq2SeqLM

from sentsweep.errors import InputError
from sentsweep.models import build_tiny_encoder_decoder, load_sentence_model, preprocess_on_device
from sentsweep.trainables.objectives import OBJECTIVES, TsdaeSettings

ORIGINALS = ["a man is playing a guitar .", "a dog runs on the beach ."]
NOISED = ["man guitar .", "dog runs beach"]


@pytest.fixture(scope="module", params=["bart", "t5"])
def tiny_pair(request, tiny_model_dir, tmp_path_factory):
    """(kind, folder) of a tiny random BART or T5 with the tiny BERT's vocabulary."""
    folder = tmp_path_factory.mktemp(f"tiny-{request.param}")
    return request.param, str(build_tiny_encoder_decoder(folder, tiny_model_dir, request.param))


def hand_loss(kind: str, folder: str, noised: dict, originals: dict) -> float:
    """-1/N sum_i sum_t log P(x_t | x_<t, f(x~_i)), computed from a fresh copy of the checkpoint: its encoder's
    first token vector of x~ as the only memory, its decoder fed x shifted right behind the start token, its LM head
    (T5: the tied head's d_model^-1/2 scaling; BART: final_logits_bias), each target token's log-probability."""
    model = AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    config = model.config
    with torch.no_grad():
        tokens = model.get_encoder()(input_ids=noised["input_ids"],
                                     attention_mask=noised["attention_mask"]).last_hidden_state
        memory = tokens[:, :1]  # [CLS] pooling: the first token's vector, the memory's one position
        ids, mask = originals["input_ids"], originals["attention_mask"]
        start = torch.full((len(ids), 1), config.decoder_start_token_id)
        decoder_input = torch.cat([start, ids[:, :-1]], dim=1)
        decoder = model.model.decoder if kind == "bart" else model.decoder
        hidden = decoder(input_ids=decoder_input, encoder_hidden_states=memory,
                         encoder_attention_mask=torch.ones(len(ids), 1, dtype=torch.long)).last_hidden_state
        if kind == "bart":
            logits = model.lm_head(hidden) + model.final_logits_bias
        else:
            logits = model.lm_head(hidden * config.d_model ** -0.5 if config.tie_word_embeddings else hidden)
        log_probs = F.log_softmax(logits, dim=-1).gather(2, ids.unsqueeze(2)).squeeze(2)
    return float(-(log_probs * mask).sum() / mask.sum())


def test_the_loss_is_the_decoders_cross_entropy_given_the_pooled_encoder_output(tiny_pair):
    kind, folder = tiny_pair
    model = load_sentence_model(folder, "cls", 32)
    objective = OBJECTIVES.get("tsdae").build(model, TsdaeSettings(tie_decoder=False), folder, ())
    objective.module.eval()
    noised, originals = preprocess_on_device(model, NOISED), preprocess_on_device(model, ORIGINALS)
    assert "token_type_ids" not in originals
    with torch.no_grad():
        loss = float(objective.module([noised, originals]))
    assert loss == pytest.approx(hand_loss(kind, folder, noised, originals), rel=1e-5)
    # the sentence model is the checkpoint's encoder, shared with the decoder's model
    assert model[0].auto_model is objective.module.seq2seq.get_encoder()


def test_a_tied_decoder_is_refused_on_an_encoder_decoder(tiny_pair):
    kind, folder = tiny_pair
    model = load_sentence_model(folder, "cls", 32)
    with pytest.raises(InputError, match=r"its own decoder reconstructs, so there is no decoder to tie to the "
                                         r"encoder; set tie_decoder=false"):
        OBJECTIVES.get("tsdae").build(model, TsdaeSettings(tie_decoder=True), folder, ())


def test_from_scratch_draws_every_weight_anew_from_the_seed_and_keeps_the_tie(tiny_model_dir):
    source = str(tiny_model_dir)
    built = {}
    for name, initialisation, seed in (("checkpoint", "checkpoint", 0), ("random", "random", 0),
                                       ("again", "random", 0), ("other seed", "random", 1)):
        torch.manual_seed(seed)
        model = load_sentence_model(source, "cls", 32)
        objective = OBJECTIVES.get("tsdae").build(model, TsdaeSettings(initialisation=initialisation), source, ())
        built[name] = (model, objective)
    checkpoint = built["checkpoint"][0].state_dict()
    random_model, random_objective = built["random"]
    weights = random_model.state_dict()
    changed = [key for key, value in weights.items() if value.is_floating_point() and value.std() > 0
               and not torch.equal(value, checkpoint[key])]
    assert len(changed) == sum(value.is_floating_point() and value.std() > 0 for value in weights.values())
    assert all(torch.equal(value, built["again"][0].state_dict()[key]) for key, value in weights.items())
    embeddings = random_model[0].auto_model.embeddings.word_embeddings.weight
    assert not torch.equal(embeddings, built["other seed"][0][0].auto_model.embeddings.word_embeddings.weight)
    assert random_objective.module.decoder.bert.embeddings.word_embeddings.weight is embeddings  # tied, as before
    assert float(random_objective.loss(ORIGINALS, random.Random(0))) > 0
