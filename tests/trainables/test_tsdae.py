"""TSDAE on the tiny model: the loss decreases, tying shares weights, seeds reproduce, resume is exact."""

import random
import time

import pytest
import torch

from sentsweep.trainables import loop
from sentsweep.trainables.catalog import resolve_trial, train as train_tsdae
from sentsweep.trainables.compute import TIMING_METRICS
from sentsweep.trainables.session import LocalSession
from sentsweep.trainables.unsupervised import build_unsupervised


@pytest.mark.slow  # a real training run of seconds or more
def test_tsdae_loss_decreases_over_30_steps(tsdae_config):
    torch.manual_seed(0)
    setup = build_unsupervised(resolve_trial(tsdae_config))
    optimizer = torch.optim.AdamW(setup.module.parameters(), lr=1e-3)
    batch = ["A man is playing a guitar in the park.", "A dog carries a ball on the beach."] * 4
    losses = []
    for step in range(30):
        loss = setup.batch_loss(batch, random.Random(step))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    assert sum(losses[-5:]) / 5 < 0.8 * sum(losses[:5]) / 5, losses


def test_tied_decoder_shares_encoder_weights_and_untied_does_not(tsdae_config):
    tied = build_unsupervised(resolve_trial(tsdae_config))
    untied = build_unsupervised(resolve_trial(tsdae_config | {"tie_decoder": False}))
    count = lambda module: sum(p.numel() for p in module.parameters())  # noqa: E731 - shared params count once
    encoder = tied.model[0].auto_model
    # Untied adds a whole second copy of the encoder stack (the decoder has no pooler layer).
    assert count(untied.module) - count(tied.module) == count(encoder) - count(encoder.pooler)
    tied_decoder_query = tied.module["tsdae"].decoder.bert.encoder.layer[0].attention.self.query.weight
    encoder_query = tied.model[0].auto_model.encoder.layer[0].attention.self.query.weight
    assert tied_decoder_query is encoder_query
    untied_decoder_query = untied.module["tsdae"].decoder.bert.encoder.layer[0].attention.self.query.weight
    assert untied_decoder_query is not untied.model[0].auto_model.encoder.layer[0].attention.self.query.weight


def test_decoder_gradient_reaches_the_encoder_only_through_the_sentence_vector(tsdae_config):
    setup = build_unsupervised(resolve_trial(tsdae_config | {"tie_decoder": False}))
    loss = setup.batch_loss(["A man is playing a guitar.", "A cat eats an apple."], random.Random(0))
    loss.backward()
    encoder = setup.model[0].auto_model
    assert encoder.embeddings.word_embeddings.weight.grad.abs().sum() > 0
    # CLS pooling: only position 0 of the last layer feeds the decoder, so the last layer's output dense
    # weights get gradient only through the [CLS] row; the decoder's cross-attention gets gradient too (through
    # its values: over the one position it attends to, the softmax is 1 whatever the key, so keys get none).
    cross = setup.module["tsdae"].decoder.bert.encoder.layer[0].crossattention.self.value.weight
    assert cross.grad.abs().sum() > 0


@pytest.mark.parametrize("tie_decoder", [True, False])
def test_tsdae_loss_and_gradients_equal_sentence_transformers_denoising_loss(tsdae_config, monkeypatch,
                                                                            tie_decoder):
    """On a batch of unequal lengths (so with padding), TsdaeLoss gives DenoisingAutoEncoderLoss's value and
    the same gradient on every parameter, the shared word embeddings included."""
    from sentence_transformers.sentence_transformer.losses import DenoisingAutoEncoderLoss

    batch = ["A man is playing a guitar in the park with his friends.", "A cat eats.", "Dogs run on the beach."]

    def loss_and_gradients():
        torch.manual_seed(0)
        setup = build_unsupervised(resolve_trial(tsdae_config | {"tie_decoder": tie_decoder}))
        setup.module.train()
        torch.manual_seed(1)
        loss = setup.batch_loss(batch, random.Random(0))
        loss.backward()
        return loss.item(), {name: p.grad for name, p in setup.module.named_parameters() if p.grad is not None}

    ours, our_gradients = loss_and_gradients()
    monkeypatch.setattr("sentsweep.losses.tsdae.TsdaeLoss", DenoisingAutoEncoderLoss)
    reference, reference_gradients = loss_and_gradients()
    assert ours == pytest.approx(reference, rel=1e-6)
    assert our_gradients.keys() == reference_gradients.keys()
    for name, gradient in reference_gradients.items():
        torch.testing.assert_close(our_gradients[name], gradient, rtol=1e-5, atol=1e-7, msg=name)


def test_row_gradient_embedding_gives_nn_embedding_gradients_with_a_tied_output_layer():
    """Lookups (with padding ids) into a matrix that a linear layer also uses: the accumulated gradient is
    nn.Embedding's, whichever gradient arrives first; the padding row gets nothing from the lookups."""
    from sentsweep.losses.tsdae import RowGradientEmbedding

    torch.manual_seed(0)
    ids = torch.tensor([[3, 5, 0, 0], [5, 7, 7, 0]])
    upstream, initial, hidden = torch.randn(2, 4, 6), torch.randn(10, 6), torch.randn(3, 6)

    def gradient(embedding_class, linear_first: bool):
        weight = torch.nn.Parameter(initial.clone())
        lookup = embedding_class(10, 6, padding_idx=0, _weight=weight)
        lookup.weight = weight
        linear_part, lookup_part = (hidden @ weight.T).square().sum(), (lookup(ids) * upstream).sum()
        for part in (linear_part, lookup_part) if linear_first else (lookup_part, linear_part):
            part.backward()
        return weight.grad

    expected = gradient(torch.nn.Embedding, True)
    for linear_first in (True, False):
        torch.testing.assert_close(gradient(RowGradientEmbedding, linear_first), expected)
    lookups_only = torch.zeros(10, 6).index_add_(0, ids.flatten(), upstream.reshape(-1, 6))
    assert lookups_only[0].abs().sum() > 0  # unmasked, the padding row would have received these


def untimed(reports: list[dict]) -> list[dict]:
    """The reports without their wall-clock measurements, the values a seed does not fix."""
    return [{key: value for key, value in report.items() if key not in TIMING_METRICS} for report in reports]


class SlowHandOver(LocalSession):
    """A session whose report takes `HAND_OVER` seconds (Ray Tune's copy of a checkpoint to storage)."""

    HAND_OVER = 0.2

    def report(self, metrics, checkpoint_dir):
        super().report(metrics, checkpoint_dir)
        time.sleep(self.HAND_OVER)


@pytest.mark.slow  # a real training run of seconds or more
def test_reports_time_the_evaluations_and_the_checkpoints_apart(tsdae_config, monkeypatch):
    scoring = 0.3  # every evaluation is made this much slower, step 0's included
    evaluate = loop._evaluate
    monkeypatch.setattr(loop, "_evaluate", lambda *args: time.sleep(scoring) or evaluate(*args))
    session = SlowHandOver()
    train_tsdae(tsdae_config, session)
    reports = session.reports
    assert [r["step"] for r in reports] == [0, 10, 20, 30, 40]
    # step 0's evaluation is preparation's, the later ones are evaluation's, each at least the added seconds
    assert reports[0]["preparation_seconds"] >= scoring and reports[0]["evaluation_seconds"] == 0.0
    assert all(r["evaluation_seconds"] >= scoring * i for i, r in enumerate(reports))
    # the reports before this one handed their checkpoints over, HAND_OVER seconds each
    assert all(r["checkpoint_seconds"] >= SlowHandOver.HAND_OVER * i for i, r in enumerate(reports))
    for earlier, later in zip(reports, reports[1:]):  # totals of the attempt so far
        assert later["evaluation_seconds"] >= earlier["evaluation_seconds"]
        assert later["checkpoint_seconds"] >= earlier["checkpoint_seconds"]


@pytest.mark.slow  # a real training run of seconds or more
def test_same_seed_gives_the_same_final_metric_twice(tsdae_config):
    first, second = LocalSession(), LocalSession()
    train_tsdae(tsdae_config, first)
    train_tsdae(tsdae_config, second)
    assert untimed(first.reports) == untimed(second.reports)
    assert [r["step"] for r in first.reports] == [0, 10, 20, 30, 40]
    other_seed = LocalSession()
    train_tsdae(tsdae_config | {"seed": 1}, other_seed)
    assert other_seed.reports[-1]["sts_dev"] != first.reports[-1]["sts_dev"]


@pytest.mark.slow  # a real training run of seconds or more
def test_resume_from_a_checkpoint_continues_exactly(tsdae_config):
    uninterrupted = LocalSession()
    train_tsdae(tsdae_config, uninterrupted)
    interrupted = LocalSession()
    train_tsdae(tsdae_config | {"max_steps": 20}, interrupted)  # stops at step 20 with its checkpoint
    resumed = LocalSession(resume_from=interrupted.checkpoint_dir)
    train_tsdae(tsdae_config, resumed)
    assert [r["step"] for r in resumed.reports] == [30, 40]
    assert untimed(resumed.reports) == untimed(uninterrupted.reports[-2:])


@pytest.mark.slow  # a real training run of seconds or more
def test_test_score_is_only_computed_for_the_dev_selected_checkpoint(tsdae_config):
    session = LocalSession()
    train_tsdae(tsdae_config, session)
    best = max(session.reports, key=lambda r: r["sts_dev"])
    final = session.reports[-1]
    assert final["best_sts_dev"] == best["sts_dev"]
    assert final["best_step"] == best["step"]
    assert final["sts_test_at_best_dev"] == best["sts_test_at_best_dev"]
    assert "sts_test" not in final


@pytest.mark.slow  # a real training run of seconds or more
def test_evaluation_tasks_score_the_dev_selected_weights_and_survive_a_resume(tsdae_config):
    from sentsweep.demo_data import DEMO_DIR

    # lr 1e-2 makes the tiny model's dev score drop after step 0, so the dev-selected weights are not the last
    config = tsdae_config | {"lr": 1e-2, "eval_tasks": {"stsb": str(DEMO_DIR)}}
    session = LocalSession()
    train_tsdae(config, session)
    final = session.reports[-1]
    assert final["best_step"] < config["max_steps"]
    assert final["stsb_spearman"] == pytest.approx(final["sts_test_at_best_dev"], abs=1e-9)
    assert all("stsb_spearman" not in report for report in session.reports[:-1])

    interrupted = LocalSession()
    train_tsdae(config | {"max_steps": 20}, interrupted)
    resumed = LocalSession(resume_from=interrupted.checkpoint_dir)
    train_tsdae(config, resumed)
    assert resumed.reports[-1]["stsb_spearman"] == pytest.approx(final["stsb_spearman"], abs=1e-9)


def test_fixed_steps_protocol_scores_the_last_weights_instead(tsdae_config):
    from sentsweep.demo_data import DEMO_DIR
    from sentsweep.tracking.callback import selection_tag

    config = tsdae_config | {"lr": 1e-2, "eval_tasks": {"stsb": str(DEMO_DIR)}, "select_checkpoint": "last"}
    session = LocalSession()
    train_tsdae(config, session)
    final = session.reports[-1]
    assert final["best_step"] < config["max_steps"]  # dev chose an earlier checkpoint, but it is not used
    assert final["stsb_spearman"] != pytest.approx(final["sts_test_at_best_dev"], abs=1e-6)
    # The STS test score of the last weights is reported too; the stsb task scores the same split with them.
    assert final["sts_test_last"] == pytest.approx(final["stsb_spearman"], abs=1e-9)
    assert all("sts_test_last" not in report for report in session.reports[:-1])
    assert selection_tag(config).startswith("none")
