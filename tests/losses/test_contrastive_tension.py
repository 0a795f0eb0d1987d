"""Contrastive Tension (`ct`) is the TSDAE paper's J_CT: BCE on dot products of two independent encoders, the
mean over one positive and K negative pairs per K + 1 sentences; `ct_in_batch` keeps the in-batch variant."""

import random

import pytest
import torch
import torch.nn.functional as F

from sentsweep.demo_data import CORPUS_FILE
from sentsweep.losses.contrastive_tension import ContrastiveTensionBceLoss, contrastive_tension_pairs
from sentsweep.models import load_sentence_model
from sentsweep.trainables.objectives import ContrastiveTensionSettings
from sentsweep.trainables.unsupervised import build_unsupervised
from tests.conftest import typed_trial

BATCH = CORPUS_FILE.read_text(encoding="utf-8").splitlines()[:16]


@pytest.fixture()
def base_config(tiny_model_dir):
    return dict(model=str(tiny_model_dir), corpus=str(CORPUS_FILE), pooling="mean", max_seq_length=32)


def test_loss_is_the_mean_binary_cross_entropy_of_j_ct(tiny_model_dir):
    model = load_sentence_model(str(tiny_model_dir), "mean", 32)
    loss = ContrastiveTensionBceLoss(model)
    assert loss.model2 is model and loss.model1 is not model
    with torch.no_grad():  # two encoders that differ, as they do after training starts
        for parameter in loss.model1.parameters():
            parameter.add_(0.01 * torch.randn_like(parameter))
    loss.eval()  # no dropout: the direct computation sees the same embeddings
    firsts = [BATCH[0], BATCH[1], BATCH[2], BATCH[3], BATCH[4]]
    seconds = [BATCH[0], BATCH[3], BATCH[2], BATCH[0], BATCH[1]]
    labels = torch.tensor([1.0, 0.0, 1.0, 0.0, 0.0])

    value = loss([model.preprocess(firsts), model.preprocess(seconds)], labels)

    a = loss.model1(model.preprocess(firsts))["sentence_embedding"]
    b = model(model.preprocess(seconds))["sentence_embedding"]
    probability = torch.sigmoid((a.double() * b.double()).sum(-1))  # double: log(1 - sigma) of a large score
    y = labels.double()
    j_ct = (y * torch.log(probability) + (1 - y) * torch.log(1 - probability)).mean()
    torch.testing.assert_close(value, -j_ct.float())
    torch.testing.assert_close(value, F.binary_cross_entropy_with_logits((a * b).sum(-1), labels, reduction="sum")
                               / len(labels))


def test_pairs_put_one_positive_before_every_k_negatives():
    sentences = [f"sentence {i}" for i in range(20)]
    for k in (1, 3, 7):
        firsts, seconds, labels = contrastive_tension_pairs(sentences, k, random.Random(k))
        assert firsts == sentences and len(seconds) == len(labels) == len(sentences)
        assert [i for i, y in enumerate(labels) if y == 1.0] == list(range(0, len(sentences), k + 1))
        for i, (second, y) in enumerate(zip(seconds, labels)):
            if y == 1.0:
                assert second == sentences[i]
            else:
                assert y == 0.0 and second in sentences and second != sentences[i]  # another position
    assert contrastive_tension_pairs(sentences[:8], 7, random.Random(0))[2] == [1.0] + [0.0] * 7
    assert contrastive_tension_pairs(["only one"], 7, random.Random(0)) == (["only one"], ["only one"], [1.0])
    assert contrastive_tension_pairs(sentences, 7, random.Random(5)) == contrastive_tension_pairs(
        sentences, 7, random.Random(5))


def test_negatives_are_drawn_from_every_other_position():
    sentences = ["a", "b", "c", "d"]
    drawn = {contrastive_tension_pairs(sentences, 3, random.Random(seed))[1][1] for seed in range(100)}
    assert drawn == {"a", "c", "d"}


def test_default_k_gives_one_positive_pair_per_batch_of_8():
    assert ContrastiveTensionSettings().negatives_per_positive == 7
    assert not hasattr(ContrastiveTensionSettings(), "temperature")


def test_one_step_trains_both_independent_encoders(base_config):
    torch.manual_seed(0)
    setup = build_unsupervised(typed_trial(base_config | {"method": "ct"}))
    loss = setup.module["ct"]
    assert isinstance(loss, ContrastiveTensionBceLoss)
    assert loss.model2 is setup.model and loss.model1 is not setup.model  # the second encoder is evaluated
    first, second = dict(loss.model1.named_parameters()), dict(loss.model2.named_parameters())
    assert first.keys() == second.keys()
    assert all(first[name] is not second[name] and first[name].data_ptr() != second[name].data_ptr()
               for name in first)
    assert {id(p) for p in first.values()} <= {id(p) for p in setup.module.parameters()}  # optimised
    assert any(key.startswith("ct.model1.") for key in setup.module.state_dict())  # checkpointed
    before = [{name: p.detach().clone() for name, p in encoder.items()} for encoder in (first, second)]

    setup.module.train()
    optimizer = torch.optim.AdamW(setup.module.parameters(), lr=1e-3)
    setup.batch_loss(BATCH[:8], random.Random(0)).backward()
    optimizer.step()

    for encoder, old in zip((first, second), before):
        changed = [name for name, p in encoder.items() if not torch.equal(p, old[name])]
        assert any("encoder.layer" in name for name in changed), changed
    assert not all(torch.equal(first[name], second[name]) for name in first)  # they have moved apart


def test_in_batch_variant_runs_one_step(base_config):
    from sentence_transformers.sentence_transformer.losses import ContrastiveTensionLossInBatchNegatives

    torch.manual_seed(0)
    setup = build_unsupervised(typed_trial(base_config | {"method": "ct_in_batch", "temperature": 0.1}))
    assert isinstance(setup.module["ct_in_batch"], ContrastiveTensionLossInBatchNegatives)
    setup.module.train()
    optimizer = torch.optim.AdamW(setup.module.parameters(), lr=1e-3)
    before = [p.detach().clone() for p in setup.model.parameters()]
    value = setup.batch_loss(BATCH[:8], random.Random(0))
    value.backward()
    optimizer.step()
    assert torch.isfinite(value)
    assert any(not torch.equal(p, old) for p, old in zip(setup.model.parameters(), before))
