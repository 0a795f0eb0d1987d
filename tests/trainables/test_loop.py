"""The shared training loop's batching: every sentence once per epoch, length grouping cuts padding only; its
step time is the median of the steps alone."""

import random

import pytest
import torch

from sentsweep.data import read_corpus
from sentsweep.demo_data import CORPUS_FILE
from sentsweep.trainables.loop import BatchSchedule, run_trial
from sentsweep.trainables.session import LocalSession
from sentsweep.trainables.unsupervised import build_unsupervised
from tests.conftest import typed_trial

CORPUS = read_corpus(CORPUS_FILE)
VARIED = [" ".join(["word"] * random.Random(i).randint(1, 40)) + f" {i}" for i in range(800)]


@pytest.mark.parametrize("group_by_length", [False, True])
def test_each_epoch_visits_every_sentence_once(group_by_length):
    schedule = BatchSchedule(VARIED, batch_size=16, seed=3, group_by_length=group_by_length)
    for epoch in range(2):
        seen = [s for step in range(epoch * 50, (epoch + 1) * 50) for s in schedule.batch(step)]
        assert sorted(seen) == sorted(VARIED)


@pytest.mark.parametrize("group_by_length", [False, True])
def test_a_batch_larger_than_the_corpus_holds_each_sentence_once(group_by_length):
    """SimCSE at batch 512 on 128 sentences (TSDAE §7.1's smallest corpus): each step is the 128 sentences once, so
    no sentence's own copy is among its in-batch negatives."""
    corpus = VARIED[:128]
    schedule = BatchSchedule(corpus, batch_size=512, seed=3, group_by_length=group_by_length)
    for step in range(3):
        assert sorted(schedule.batch(step)) == sorted(corpus)


def padded_tokens(schedule, steps):
    return sum(len(batch) * max(len(s.split()) for s in batch) for batch in (schedule.batch(i) for i in range(steps)))


def test_length_grouping_cuts_padding_and_keeps_batches_random():
    plain = BatchSchedule(VARIED, 16, seed=3, group_by_length=False)
    grouped = BatchSchedule(VARIED, 16, seed=3, group_by_length=True)
    assert padded_tokens(grouped, 50) < 0.7 * padded_tokens(plain, 50)
    lengths = [max(len(s.split()) for s in grouped.batch(i)) for i in range(50)]
    assert lengths != sorted(lengths)  # batch order is shuffled, not shortest first
    other_seed = BatchSchedule(VARIED, 16, seed=4, group_by_length=True)
    assert grouped.batch(0) != other_seed.batch(0)


def test_dynamic_padding_does_not_change_the_loss(tiny_model_dir):
    """Padding a batch to a longer length (what grouping avoids) leaves the TSDAE encoder's output unchanged."""
    setup = build_unsupervised(typed_trial(dict(method="tsdae", model=str(tiny_model_dir), corpus=str(CORPUS_FILE),
                                    pooling="mean", max_seq_length=64)))
    model = setup.model
    model.eval()
    short = model.preprocess(CORPUS[:4])
    padded = model.tokenizer(CORPUS[:4], padding="max_length", max_length=64, return_tensors="pt")
    with torch.no_grad():
        a = model(dict(short))["sentence_embedding"]
        b = model({**padded, "modality": short.get("modality")})["sentence_embedding"]
    assert torch.allclose(a, b, atol=1e-5)


def tsdae_loss_curve(tiny_model_dir, make_optimizer=None, precision="fp32", tie_decoder=True) -> list:
    """15 TSDAE steps on the tiny model from seed 0 at a constant 1e-3: the loss of each."""
    from sentsweep.trainables.loop import make_lr_schedule, make_optimizer as fused_adamw, training_step

    config = dict(method="tsdae", model=str(tiny_model_dir), corpus=str(CORPUS_FILE), pooling="cls",
                  max_seq_length=32, tie_decoder=tie_decoder)
    torch.manual_seed(0)
    trial = typed_trial(config)
    setup = build_unsupervised(trial)
    setup.module.train()
    optimizer = (make_optimizer or fused_adamw)(setup.module, trial.training)
    lr_schedule = make_lr_schedule(optimizer, trial.training, 15, 0)
    schedule = BatchSchedule(CORPUS, 8, seed=0)
    return [training_step(setup, optimizer, lr_schedule, schedule, 0, step, precision) for step in range(15)]


@pytest.mark.slow  # a real training run of seconds or more
def test_fused_adamw_keeps_the_loss_curve(tiny_model_dir):
    """The fused optimizer (a speed-up) gives the loss curve of the plain per-tensor AdamW, within float tolerance."""
    plain = tsdae_loss_curve(tiny_model_dir, lambda module, training: torch.optim.AdamW(
        module.parameters(), lr=training.lr, weight_decay=0.0, foreach=False))
    assert tsdae_loss_curve(tiny_model_dir) == pytest.approx(plain, rel=1e-4)


@pytest.mark.slow  # a real training run of seconds or more
def test_bf16_autocast_follows_the_fp32_loss_curve_within_bf16_precision(tiny_model_dir):
    """bfloat16 autocast (a speed-up on AMX CPUs and GPUs) keeps the curve of fp32 training to within the
    rounding of bf16's 8-bit mantissa accumulated over 15 steps, and still learns."""
    fp32, bf16 = tsdae_loss_curve(tiny_model_dir), tsdae_loss_curve(tiny_model_dir, precision="bf16")
    assert bf16 == pytest.approx(fp32, rel=3e-2)
    assert bf16 != fp32  # autocast did run in bf16
    assert sum(bf16[-5:]) < sum(bf16[:5])


@pytest.mark.slow  # a real training run of seconds or more
@pytest.mark.parametrize("tie_decoder", [True, False])
def test_tsdae_loss_keeps_the_loss_curve_of_sentence_transformers_denoising_loss(tiny_model_dir, monkeypatch,
                                                                                tie_decoder):
    """TsdaeLoss (LM head on target tokens only, lookups adding rows into the tied gradient) trains exactly as
    DenoisingAutoEncoderLoss does from the same seed, within float tolerance, over 15 optimizer steps."""
    from sentence_transformers.sentence_transformer.losses import DenoisingAutoEncoderLoss

    ours = tsdae_loss_curve(tiny_model_dir, tie_decoder=tie_decoder)
    monkeypatch.setattr("sentsweep.losses.tsdae.TsdaeLoss", DenoisingAutoEncoderLoss)
    reference = tsdae_loss_curve(tiny_model_dir, tie_decoder=tie_decoder)
    assert ours == pytest.approx(reference, rel=1e-5)
    assert sum(ours[-5:]) < sum(ours[:5])


def test_seconds_per_step_is_the_median_of_the_steps_since_the_last_report(tiny_model_dir):
    """A clock that only the steps' losses and the evaluations move: step i takes STEP[i] seconds, every encoding
    in evaluation mode 100. Each report after the first gives the median of its own steps, and no evaluation."""
    steps = [5.0, 1.0, 2.0, 3.0, 9.0, 4.0]
    now = [0.0]

    def build_setup(trial):
        setup = build_unsupervised(trial)
        batch_loss, forward = setup.batch_loss, setup.model.forward

        def timed_loss(batch, rng):
            now[0] += steps.pop(0)
            return batch_loss(batch, rng)

        def timed_forward(*args, **kwargs):
            if not setup.model.training:
                now[0] += 100.0
            return forward(*args, **kwargs)

        setup.batch_loss, setup.model.forward = timed_loss, timed_forward
        return setup

    session = LocalSession()
    run_trial(typed_trial(dict(method="tsdae", model=str(tiny_model_dir), corpus=str(CORPUS_FILE), pooling="cls",
                               max_seq_length=32, batch_size=8, max_steps=6, eval_steps=3)),
              build_setup, session, clock=lambda: now[0])
    assert not steps  # every step timed
    assert [report["step"] for report in session.reports] == [0, 3, 6]
    assert "seconds_per_step" not in session.reports[0]  # no step before the untrained model's evaluation
    assert [report["seconds_per_step"] for report in session.reports[1:]] == [2.0, 4.0]  # median(5, 1, 2), (3, 9, 4)
    assert session.reports[0]["preparation_seconds"] >= 100  # the step-0 evaluation is the preparation's


@pytest.mark.parametrize("rule", ["last", "best_task_dev"])
def test_the_metrics_a_trial_reports_are_those_its_checkpoint_rule_says(tiny_model_dir, tmp_path, rule):
    """`reports_metric`, which the reproduction targets are checked against (a target must read a metric its
    cell's trials log), says what a real trial reports: `sts_test_last` only for the last checkpoint, each rule's
    own scores, a task's metrics where it is an eval task, and `selected_task_dev` (the kept checkpoint's dev score
    on the selection task, TSDAE §6's Figure 2 points) whatever the rule."""
    from sentsweep.trainables.loop import EVERY_TRIAL_METRICS, RULE_METRICS, reports_metric
    from sentsweep.trainables.settings import SELECTED_TASK_DEV
    from tests.tasks.test_tasks import askubuntu_folder

    session = LocalSession()
    trial = typed_trial(dict(method="tsdae", model=str(tiny_model_dir), corpus=str(CORPUS_FILE), pooling="cls",
                             max_seq_length=16, batch_size=8, max_steps=2, eval_steps=1, select_checkpoint=rule,
                             validation_size=20, eval_tasks={"askubuntu": str(askubuntu_folder(tmp_path))},
                             selection_task="askubuntu"))
    run_trial(trial, build_unsupervised, session)
    reported = set().union(*session.reports)
    loop_metrics = {*EVERY_TRIAL_METRICS, SELECTED_TASK_DEV, *(m for ms in RULE_METRICS.values() for m in ms)}
    assert {metric for metric in loop_metrics if reports_metric(trial.evaluation, metric)} == \
        loop_metrics & reported
    assert reports_metric(trial.evaluation, "askubuntu_map") and "askubuntu_map" in reported
    assert reports_metric(trial.evaluation, "scidocs_map") is False and reports_metric(
        trial.evaluation, "teacher_sts_test") is None
    assert SELECTED_TASK_DEV in session.reports[-1]
