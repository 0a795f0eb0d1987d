"""The multi-task loss of Wang (2022) eq. 3.6 in one encoder pass, the auto-encoders' reduction (eq. 3.4 / 3.5),
SimCSE with the BCE loss (eq. 2.10) and the cls_linear pooling, each checked against a computation of its own."""

from __future__ import annotations

import math
import random

import pytest
import torch
import torch.nn.functional as F

from sentsweep.demo_data import CORPUS_FILE
from sentsweep.losses.contrastive import SimCseBceLoss, binary_contrastive
from sentsweep.losses.reconstruction import ClmAutoEncoderLoss, MlmAutoEncoderLoss, mask_tokens, special_or_padding
from sentsweep.models import load_sentence_model, preprocess_on_device
from sentsweep.trainables.objectives import ConsertSettings
from sentsweep.trainables.unsupervised import build_unsupervised
from tests.conftest import typed_trial

BATCH = CORPUS_FILE.read_text(encoding="utf-8").splitlines()[:8]
TEMPERATURE = 0.05


@pytest.fixture()
def base_config(tiny_model_dir):
    return dict(model=str(tiny_model_dir), corpus=str(CORPUS_FILE), pooling="mean", max_seq_length=32)


class EncoderCalls:
    """Counts the forward passes of the shared encoder (the SentenceTransformer's Transformer module) and keeps
    the sentence embeddings of each pass with the torch RNG state right after it."""

    def __init__(self, model):
        self.calls = 0
        self.outputs: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.handles = [
            model[0].register_forward_hook(lambda *args: self._count()),
            model.register_forward_hook(lambda module, args, output: self.outputs.append(
                (output["sentence_embedding"], torch.get_rng_state()))),
        ]

    def _count(self):
        self.calls += 1

    def remove(self):
        for handle in self.handles:
            handle.remove()


def simcse_by_hand(first, second, temperature):
    """Eq. 3.1: mean over i of -log softmax_j(cos(first_i, second_j) / tau)[i], written out."""
    cos = F.normalize(first, dim=-1) @ F.normalize(second, dim=-1).T
    logits = cos / temperature
    return -(logits.diagonal() - logits.logsumexp(1)).mean()


@pytest.mark.parametrize("method", ["simcse+clm_ae", "simcse+mlm_ae"])
def test_multitask_runs_the_encoder_once_and_adds_w_times_the_autoencoder_loss_on_view_one(base_config, method):
    torch.manual_seed(0)
    weight = 0.5
    setup = build_unsupervised(typed_trial(base_config | {"method": method, "w": weight}))
    setup.module.train()
    model, autoencoder = setup.model, setup.module[method.split("+")[1]]
    calls = EncoderCalls(model)
    conditioned_on = []
    batch_loss = autoencoder.batch_loss  # the auto-encoder's loss of the shared pass, its f(x) the last argument

    def record_sentence(*args):
        conditioned_on.append(args[-1])
        return batch_loss(*args)

    autoencoder.batch_loss = record_sentence
    try:
        torch.manual_seed(1)
        combined = setup.batch_loss(BATCH, random.Random(7))
        assert calls.calls == 1  # one encoder pass for both terms
        ((embeddings, rng_after_encoder),) = calls.outputs
        assert len(embeddings) == 2 * len(BATCH)  # the pass over [x; x]
        first, second = embeddings.chunk(2)
        assert not torch.allclose(first, second)  # two dropout masks
        (sentence,) = conditioned_on  # the decoder's f(x): view 1 of that very pass, not a copy or another pass
        assert sentence.data_ptr() == embeddings.data_ptr() and torch.equal(sentence, first)

        # The same terms from the captured embeddings: SimCSE on (view 1, view 2), the auto-encoder conditioned
        # on view 1, with the decoder's dropout (and the MLM-AE's masks) drawn as in the combined loss.
        features = preprocess_on_device(model, BATCH)
        torch.set_rng_state(rng_after_encoder)
        if method.endswith("clm_ae"):
            ae = batch_loss(features, first)
        else:
            generator = torch.Generator().manual_seed(random.Random(7).getrandbits(63))
            ae = batch_loss(features, generator, first)
        assert calls.calls == 1  # given the embedding, the auto-encoder does not encode
        expected = simcse_by_hand(first, second, TEMPERATURE) + weight * ae
        assert combined.item() == pytest.approx(expected.item(), rel=1e-5)

        combined.backward()  # both terms reach the encoder through the one pass
        assert model[0].auto_model.embeddings.word_embeddings.weight.grad.abs().sum() > 0
    finally:
        calls.remove()


@pytest.mark.parametrize("method, passes", [("simcse", 1), ("clm_ae", 1), ("mlm_ae", 1), ("simcse_bce", 1),
                                            ("mlm+nm", 2), ("tsdae+nm", 3)])
def test_other_methods_keep_their_own_passes(base_config, method, passes):
    setup = build_unsupervised(typed_trial(base_config | {"method": method} | ({"w": 0.5} if "+" in method else {})))
    setup.module.train()
    calls = EncoderCalls(setup.model)
    try:
        setup.batch_loss(BATCH, random.Random(0))
    finally:
        calls.remove()
    # Passes through the Transformer module. mlm+nm: NM's two (MLM runs the auto model itself on the masked
    # tokens); tsdae+nm: TSDAE's encoder pass and NM's two.
    assert calls.calls == passes


# --- eq. 3.4 / 3.5: sum over a sentence's predicted tokens, mean over sentences ---------------------------------


def uneven_batch(model):
    texts, lengths = [], set()
    for text in CORPUS_FILE.read_text(encoding="utf-8").splitlines():
        length = len(model.tokenizer(text)["input_ids"])
        if length not in lengths and length <= 32:
            texts.append(text)
            lengths.add(length)
        if len(texts) == 3:
            break
    features = preprocess_on_device(model, texts)
    lengths = features["attention_mask"].sum(1).tolist()
    assert len(set(lengths)) == 3  # padding in two rows
    return features, lengths


def test_clm_autoencoder_loss_sums_over_tokens_and_averages_over_sentences(tiny_model_dir):
    model = load_sentence_model(str(tiny_model_dir), "mean", 32)
    loss = ClmAutoEncoderLoss(model, str(tiny_model_dir), decoder_layers=2).eval()
    model.eval()
    features, lengths = uneven_batch(model)
    sentence = model(dict(features))["sentence_embedding"]
    value = loss.batch_loss(features, sentence)

    per_sentence = []
    for i, length in enumerate(lengths):  # each sentence alone, unpadded: -sum_t log P(x_t | x_<t, f(x_i))
        ids = features["input_ids"][i, :length]
        logits = loss.decoder(input_ids=ids[None, :-1], encoder_hidden_states=sentence[i][None, None],
                              use_cache=False).logits[0]
        log_probs = logits.log_softmax(-1)
        per_sentence.append(-sum(log_probs[t - 1, ids[t]].item() for t in range(1, length)))
    expected = sum(per_sentence) / len(per_sentence)
    assert value.item() == pytest.approx(expected, rel=1e-5)
    token_mean = sum(per_sentence) / sum(length - 1 for length in lengths)
    assert value.item() != pytest.approx(token_mean, rel=1e-2)  # not the per-token mean of before
    assert loss([features]).item() == pytest.approx(expected, rel=1e-5)  # encoding by itself: the same f(x)


def test_mlm_autoencoder_loss_sums_over_masked_tokens_and_averages_over_sentences(tiny_model_dir):
    model = load_sentence_model(str(tiny_model_dir), "mean", 32)
    loss = MlmAutoEncoderLoss(model, str(tiny_model_dir), decoder_layers=2, mask_ratio=0.5).eval()
    model.eval()
    features, lengths = uneven_batch(model)
    sentence = model(dict(features))["sentence_embedding"]
    value = loss.batch_loss(features, torch.Generator().manual_seed(3), sentence)

    never_mask = special_or_padding(model.tokenizer, features)
    masked_ids, labels = mask_tokens(features["input_ids"], never_mask, 0.5, model.tokenizer.mask_token_id,
                                     torch.Generator().manual_seed(3))
    per_sentence, masked_count = [], 0
    for i, length in enumerate(lengths):  # each sentence alone: -sum_{m in M_i} log P(x_m | f(x_i), x \ M_i)
        embeds = loss.decoder.get_input_embeddings()(masked_ids[i, :length])
        embeds = torch.cat([sentence[i][None], embeds[1:]])
        log_probs = loss.decoder(inputs_embeds=embeds[None]).logits[0].log_softmax(-1)
        masked = [m for m in range(length) if labels[i, m] != -100]
        assert masked and all(labels[i, m] == features["input_ids"][i, m] for m in masked)
        masked_count += len(masked)
        per_sentence.append(-sum(log_probs[m, labels[i, m]].item() for m in masked))
    expected = sum(per_sentence) / len(per_sentence)
    assert value.item() == pytest.approx(expected, rel=1e-5)
    assert value.item() != pytest.approx(sum(per_sentence) / masked_count, rel=1e-2)


# --- SimCSE with BCE (Wang 2022 eq. 2.10, §5.3.3)


def test_simcse_bce_matches_equation_2_10_by_hand():
    torch.manual_seed(0)
    first, second = torch.randn(4, 6), torch.randn(4, 6)
    tau = 0.5  # moderate scores, so no term saturates

    def cos(u, v):
        return (u @ v).item() / (u.norm().item() * v.norm().item())

    def sigmoid(x):
        return 1 / (1 + math.exp(-x))

    total = 0.0
    for i in range(4):
        term = math.log(sigmoid(cos(first[i], second[i]) / tau))
        for j in range(4):
            if j != i:  # X_i^- = {x_j, x_j^+}_{j != i}
                term += math.log(1 - sigmoid(cos(first[i], first[j]) / tau))
                term += math.log(1 - sigmoid(cos(first[i], second[j]) / tau))
        total += term
    expected = -total / 4
    assert binary_contrastive(first, second, tau).item() == pytest.approx(expected, rel=1e-5)


def test_simcse_bce_loss_reads_two_dropout_views_of_one_pass(tiny_model_dir):
    model = load_sentence_model(str(tiny_model_dir), "mean", 32)
    model.train()
    loss = SimCseBceLoss(model, temperature=TEMPERATURE)
    calls = EncoderCalls(model)
    try:
        torch.manual_seed(0)
        value = loss([preprocess_on_device(model, BATCH)])
    finally:
        calls.remove()
    assert calls.calls == 1
    ((embeddings, _),) = calls.outputs
    first, second = embeddings.chunk(2)
    assert value.item() == pytest.approx(binary_contrastive(first, second, TEMPERATURE).item(), rel=1e-6)
    value.backward()


# --- cls_linear pooling (TSDAE App. B) ------------------------------------------------------------------------------


def test_cls_linear_pooling_adds_a_trained_and_saved_dense_layer(base_config, tmp_path):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense

    torch.manual_seed(0)
    setup = build_unsupervised(typed_trial(base_config | {"method": "simcse", "pooling": "cls_linear"}))
    model = setup.model
    assert len(model) == 3 and isinstance(model[2], Dense)
    dense = model[2].linear
    assert dense.weight.shape == (32, 32) and dense.weight.requires_grad
    assert any(parameter is dense.weight for parameter in setup.module.parameters())  # optimised by the loop

    model.eval()
    features = preprocess_on_device(model, BATCH[:3])
    cls = model[0](dict(features))["token_embeddings"][:, 0]
    embedding = model(dict(features))["sentence_embedding"]
    assert torch.allclose(embedding, torch.tanh(dense(cls)), atol=1e-6)  # tanh(W h_[CLS] + b)

    before = dense.weight.detach().clone()
    setup.module.train()
    optimizer = torch.optim.AdamW(setup.module.parameters(), lr=1e-3)
    setup.batch_loss(BATCH, random.Random(0)).backward()
    assert dense.weight.grad is not None and dense.weight.grad.abs().sum() > 0
    optimizer.step()
    assert not torch.equal(before, dense.weight)

    model.eval()
    model.save(str(tmp_path / "saved"))
    reloaded = SentenceTransformer(str(tmp_path / "saved"), device="cpu")
    assert torch.allclose(reloaded.encode(BATCH[:3], convert_to_tensor=True),
                          model.encode(BATCH[:3], convert_to_tensor=True), atol=1e-5)


# --- ConSERT defaults (Wang 2022 §5.3.1, Table 5.3)


def test_consert_defaults_follow_the_thesis():
    settings = ConsertSettings()
    assert settings.augmentation_ratio == 0.2 and settings.temperature == 0.05
    sources = {row.name: row.source for row in ConsertSettings.describe()}
    assert sources["augmentation_ratio"].where == "§5.3.1" and sources["temperature"].where == "Table 5.3"
