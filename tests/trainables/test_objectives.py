"""Every unsupervised objective on the tiny model: the loss decreases and the gradients follow the definition."""

import random

import pytest
import torch

from sentsweep.demo_data import CORPUS_FILE
from sentsweep.errors import InputError
from sentsweep.losses.consert import ConsertLoss, augment_embeddings, check_augmentations
from sentsweep.losses.contrastive import info_nce
from sentsweep.losses.reconstruction import mask_tokens
from sentsweep.models import load_sentence_model
from sentsweep.trainables.catalog import validate_config
from sentsweep.trainables.objectives import OBJECTIVES
from sentsweep.trainables.unsupervised import build_unsupervised
from tests.conftest import SHARED_INPUTS, typed_trial

BATCH = CORPUS_FILE.read_text(encoding="utf-8").splitlines()[:16]
METHODS = OBJECTIVES.names() + ["mlm+nm", "tsdae+nm", "simcse+clm_ae", "simcse+mlm_ae"]


@pytest.fixture()
def base_config(tiny_model_dir):
    return dict(model=str(tiny_model_dir), corpus=str(CORPUS_FILE), pooling="mean", max_seq_length=32)


def features(model, texts):
    return model.preprocess(texts)


@pytest.mark.slow  # a real training run of seconds or more
@pytest.mark.parametrize("method", METHODS)
def test_loss_decreases_over_30_steps(base_config, method):
    torch.manual_seed(0)
    setup = build_unsupervised(typed_trial(base_config | {"method": method} | ({"w": 0.5} if "+" in method else {})))
    setup.module.train()
    optimizer = torch.optim.AdamW(setup.module.parameters(), lr=1e-3)
    losses = []
    for step in range(30):
        loss = setup.batch_loss(BATCH, random.Random(step))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    assert sum(losses[-5:]) < 0.9 * sum(losses[:5]), losses


def test_noise_matching_has_no_gradient_through_the_original_branch(base_config):
    setup = build_unsupervised(typed_trial(base_config | {"method": "nm", "nm_noise_ratio": 0.0}))
    model = setup.model
    model.eval()  # no dropout, and T(x) = x at ratio 0: both branches see the very same embedding
    params = [p for p in model.parameters() if p.requires_grad]
    setup.batch_loss(BATCH, random.Random(0)).backward()
    nm_grads = [torch.zeros_like(p) if p.grad is None else p.grad.clone() for p in params]

    def grads(stop_gradient):
        embedding = model(features(model, BATCH))["sentence_embedding"]
        target = embedding.detach() if stop_gradient else embedding
        result = torch.autograd.grad(info_nce(target, embedding, 0.05), params, allow_unused=True)
        return [torch.zeros_like(p) if g is None else g for p, g in zip(params, result)]

    with_sg, without_sg = grads(True), grads(False)
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(nm_grads, with_sg))
    assert not all(torch.allclose(a, b, atol=1e-6) for a, b in zip(nm_grads, without_sg))


def test_simcse_two_views_differ_only_by_dropout(base_config):
    setup = build_unsupervised(typed_trial(base_config | {"method": "simcse"}))
    setup.module.train()  # as the training loop does
    model = setup.model
    outputs = []
    hook = model.register_forward_hook(lambda module, args, output: outputs.append(output["sentence_embedding"]))
    try:
        setup.batch_loss(BATCH, random.Random(0))
        (both,) = outputs  # one pass over the batch stacked on itself
        first, second = both.chunk(2)
        assert not torch.allclose(first, second)  # two dropout masks
        model.eval()
        outputs.clear()
        setup.batch_loss(BATCH, random.Random(0))
        first, second = outputs[0].chunk(2)
        assert torch.allclose(first, second, atol=1e-6)  # no dropout: the same sentence, the same embedding
    finally:
        hook.remove()


def test_one_pass_simcse_keeps_the_loss_curve_of_multiple_negatives_ranking_loss(tiny_model_dir):
    """The speed-up keeps results: without dropout, both give the same loss at every step of training."""
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    from sentsweep.losses.contrastive import SimCseLoss

    curves = []
    for make_loss in (lambda m: SimCseLoss(m, 0.05), lambda m: MultipleNegativesRankingLoss(m, scale=20.0)):
        model = load_sentence_model(str(tiny_model_dir), "mean", 32, dropout=0.0)
        loss = make_loss(model)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        curve = []
        for step in range(10):
            batch = features(model, BATCH[step % 4 * 4:step % 4 * 4 + 8])
            value = loss([batch]) if isinstance(loss, SimCseLoss) else loss([batch, batch], None)
            value.backward()
            optimizer.step()
            optimizer.zero_grad()
            curve.append(value.item())
        curves.append(curve)
    assert curves[0] == pytest.approx(curves[1], rel=1e-4, abs=1e-5)


def test_second_objective_gets_gradient_only_with_positive_weight(base_config):
    for weight, expect_gradient in ((0.0, False), (0.01, True)):
        setup = build_unsupervised(typed_trial(base_config | {"method": "simcse+clm_ae", "w": weight}))
        setup.batch_loss(BATCH, random.Random(0)).backward()
        decoder_grad = setup.module["clm_ae"].decoder.cls.predictions.transform.dense.weight.grad
        assert (decoder_grad is not None and decoder_grad.abs().sum() > 0) == expect_gradient


def test_consert_cutoffs_remove_exactly_their_share():
    generator = torch.Generator().manual_seed(0)
    embeddings = torch.randn(3, 10, 20) + 5  # no accidental zeros
    mask = torch.tensor([[1] * 10, [1] * 6 + [0] * 4, [1] * 10])
    rows = augment_embeddings(embeddings, mask, "token_cutoff", 0.3, generator)
    assert [(rows[i].abs().sum(1) == 0).sum().item() for i in range(3)] == [3, 2, 3]
    columns = augment_embeddings(embeddings, mask, "feature_cutoff", 0.25, generator)
    assert [(columns[i].abs().sum(0) == 0).sum().item() for i in range(3)] == [5, 5, 5]
    dropped = augment_embeddings(embeddings, mask, "dropout", 0.5, generator)
    assert 0.4 < (dropped == 0).float().mean().item() < 0.6
    kept = dropped != 0
    assert torch.allclose(dropped[kept], 2 * embeddings[kept])


@pytest.mark.parametrize("augmentation", ["token_shuffle", "token_cutoff", "feature_cutoff", "dropout"])
def test_consert_views_differ_from_the_plain_embedding(tiny_model_dir, augmentation):
    model = load_sentence_model(str(tiny_model_dir), "mean", 32, dropout=0.0)
    loss = ConsertLoss(model, augmentation, ratio=0.3)
    batch = features(model, BATCH[:4])
    plain = model(dict(batch))["sentence_embedding"]
    assert torch.equal(plain, model(dict(batch))["sentence_embedding"])  # dropout-free encoder
    view = loss.view(batch, augmentation, torch.Generator().manual_seed(0))
    again = loss.view(batch, augmentation, torch.Generator().manual_seed(0))
    assert torch.equal(view, again)
    assert not torch.allclose(view, plain)
    assert torch.equal(plain, model(dict(batch))["sentence_embedding"])  # hooks removed afterwards


def test_mask_tokens_respects_special_tokens_and_labels():
    generator = torch.Generator().manual_seed(0)
    ids = torch.arange(5, 105).repeat(50, 1)
    never = torch.zeros_like(ids, dtype=torch.bool)
    never[:, 0] = never[:, -1] = True
    masked, labels = mask_tokens(ids, never, 0.15, 4, generator, vocabulary_size=200)
    chosen = labels != -100
    assert not chosen[:, 0].any() and not chosen[:, -1].any()
    assert torch.equal(labels[chosen], ids[chosen])
    assert 0.13 < chosen.float().mean() < 0.17
    share_masked = (masked[chosen] == 4).float().mean()
    share_unchanged = (masked[chosen] == ids[chosen]).float().mean()
    assert 0.75 < share_masked < 0.85 and 0.06 < share_unchanged < 0.14
    short = mask_tokens(ids[:, :3], never[:, :3], 0.0, 4, generator)[1]
    assert ((short != -100).sum(1) == 1).all()  # at least one prediction per row


@pytest.mark.parametrize(
    "change, message",
    [
        ({"method": "simcse+bogus"}, "method 'simcse\\+bogus': unknown objective 'bogus'"),
        ({"method": "mlm+nm", "w": -0.1}, "setting w=-0.1 is out of range: must be >= 0"),
        ({"method": "mlm+nm", "w": None}, "method 'mlm\\+nm' needs the weight w"),
        ({"method": "consert", "augmentations": "token_shuffle,crop"}, "unknown 'crop'"),
        ({"method": "tsdae", "noise_type": "blur"}, "setting noise_type='blur': expected one of 'delete'"),
        ({"method": "simcse", "temperature": 0}, "setting temperature=0 is out of range: must be > 0"),
        ({"method": "nm", "pooling": "sum"}, "setting pooling='sum': expected one of 'cls', 'mean', 'max'"),
        ({"method": "simcse", "temprature": 0.1}, "unknown setting 'temprature'; did you mean 'temperature'"),
        ({"method": "tsdae", "tie_decoder": "yes"}, "setting tie_decoder='yes' must be true or false"),
        ({"method": "simcse", "lr": -1}, "setting lr=-1 is out of range: must be > 0"),
    ],
)
def test_bad_method_settings_are_named(base_config, change, message):
    with pytest.raises(InputError, match=message):
        validate_config(SHARED_INPUTS | base_config | change)


def test_augmentation_pairs():
    assert check_augmentations("dropout") == ("dropout", "dropout")
    assert check_augmentations("token_shuffle,feature_cutoff") == ("token_shuffle", "feature_cutoff")


def test_a_method_of_one_objective_refuses_a_weight(base_config):
    with pytest.raises(InputError, match="method 'nm' has one objective, so no weight w of a second one; got w=1.0"):
        validate_config(SHARED_INPUTS | base_config | {"method": "nm", "w": 1.0})
    assert validate_config(SHARED_INPUTS | base_config | {"method": "nm"}).settings.w is None


def test_nm_weight_gives_w_to_its_combinations_only_and_logs_none_for_the_others():
    """Table 6.10's rows: MLM + SimCSE at w = 1; SimCSE, NM and TSDAE get no w, and log none."""
    from ray.tune.search.variant_generator import generate_variants

    from sentsweep.experiments import get_experiment
    from sentsweep.search_spaces.param_spaces import grid_param_space
    from sentsweep.sweep.search.trials import settings_by_method
    from sentsweep.tracking.callback import trial_params

    protocol = get_experiment("nm_weight").protocol
    method_settings = {method: protocol.settings_of(method) for method in protocol.method_settings}
    axes = {"method": ["simcse", "mlm+simcse", "nm", "tsdae"]}
    space = grid_param_space(protocol.constants(), axes, [0], settings_by_method(protocol.constants(), axes,
                                                                                 method_settings))
    trials = {config["method"]: config for _, config in generate_variants(space)}
    assert {method: config.get("w") for method, config in trials.items()} == {
        "simcse": None, "mlm+simcse": 1.0, "nm": None, "tsdae": None}
    assert "w" not in trial_params(trials["nm"]) and trial_params(trials["mlm+simcse"])["w"] == 1.0
    assert "w" not in get_experiment("learning_rate").protocol.constants()
