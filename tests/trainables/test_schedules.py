"""The training loop's length, optimiser and learning-rate schedules: the rate at chosen steps equals the
seeds' definition (Reiml (2023) §5.1 warm-up + linear decay; TSDAE paper App. B, CT's segments)."""

import pytest
import torch

from sentsweep.errors import InputError
from sentsweep.trainables.catalog import train
from sentsweep.trainables.loop import make_lr_schedule, make_optimizer
from sentsweep.trainables.session import LocalSession
from sentsweep.trainables.settings import TrainingSettings

INPUTS = dict(model="m", corpus="c", lr=1e-3, batch_size=8, max_seq_length=32)


def rates(training: TrainingSettings, examples: int, steps: list[int]) -> dict[int, float]:
    """The learning rate each of `steps` is taken at, driving a one-parameter optimiser through the schedule."""
    module = torch.nn.Linear(1, 1)
    optimizer = make_optimizer(module, training)
    schedule = make_lr_schedule(optimizer, training, training.total_steps(examples), training.warmup(examples))
    seen = {}
    for step in range(max(steps) + 1):
        seen[step] = optimizer.param_groups[0]["lr"]
        optimizer.step()
        schedule.step()
    return {step: seen[step] for step in steps}


def test_warmup_ratio_then_linear_decay_gives_the_rate_by_hand():
    """Reiml 2023 §5.1: warm-up over 10% of the steps, then linear decay (to 0 at the last step)."""
    training = TrainingSettings.from_config(INPUTS | dict(max_steps=100, lr_schedule="linear", warmup_ratio=0.1,
                                                          weight_decay=0.01))
    assert training.warmup(examples=1000) == 10
    got = rates(training, 1000, [0, 5, 10, 55, 99])
    # warm-up: lr * step / 10; decay: lr * (100 - step) / 90
    assert got == pytest.approx({0: 0.0, 5: 5e-4, 10: 1e-3, 55: 5e-4, 99: 1e-3 / 90})


def test_warmup_steps_from_epochs():
    """Wang 2022 Table 5.3: 910 warm-up steps; 3 epochs of 1,000 sentences at batch 64 are 3 x 16 steps."""
    training = TrainingSettings.from_config(INPUTS | dict(batch_size=64, epochs=3, warmup_steps=910,
                                                          lr_schedule="linear"))
    assert training.total_steps(1000) == 48
    assert training.evaluation_interval(1000) == 16  # no eval_steps: at the end of each epoch
    capped = TrainingSettings.from_config(INPUTS | dict(batch_size=64, epochs=3, max_steps=20))
    assert capped.total_steps(1000) == 20  # whichever ends first
    assert rates(training, 1000, [0, 455])[455] == pytest.approx(0.5e-3)


def test_constant_schedule_keeps_the_rate():
    training = TrainingSettings.from_config(INPUTS | dict(max_steps=50))
    assert set(rates(training, 100, [0, 10, 49]).values()) == {1e-3}


def test_contrastive_tension_uses_rmsprop_with_the_segmented_rate():
    """TSDAE App. B: RMSProp; 1e-5 for steps 1-500, 8e-6 to 1000, 6e-6 to 1500, 4e-6 to 2000, 2e-6 after
    (the loop's step 0 is the paper's step 1)."""
    training = TrainingSettings.from_config(INPUTS | dict(lr=1e-5, max_steps=100_000, optimizer="rmsprop",
                                                          lr_schedule="ct_segments"))
    assert isinstance(make_optimizer(torch.nn.Linear(1, 1), training), torch.optim.RMSprop)
    got = rates(training, 1000, [0, 499, 500, 999, 1000, 1500, 1999, 2000, 2500])
    assert got == pytest.approx({0: 1e-5, 499: 1e-5, 500: 8e-6, 999: 8e-6, 1000: 6e-6, 1500: 4e-6, 1999: 4e-6,
                                 2000: 2e-6, 2500: 2e-6})


def test_length_and_warmup_settings_are_checked():
    with pytest.raises(InputError, match="max_steps or epochs"):
        TrainingSettings.from_config(INPUTS)
    with pytest.raises(InputError, match="warmup_steps=5 and warmup_ratio=0.1"):
        TrainingSettings.from_config(INPUTS | dict(max_steps=10, warmup_steps=5, warmup_ratio=0.1))
    with pytest.raises(InputError, match="lr_schedule='cosine'"):
        TrainingSettings.from_config(INPUTS | dict(max_steps=10, lr_schedule="cosine"))


@pytest.mark.slow  # a real training run of seconds or more
def test_validation_loss_selects_the_reported_checkpoint(tsdae_config):
    """Wang (2022) §5.2.2: the checkpoint with the lowest loss on held-out sentences is the one reported."""
    session = LocalSession()
    train(tsdae_config | dict(select_checkpoint="validation_loss", validation_size=40, max_steps=30,
                              eval_steps=10), session)
    reports = session.reports
    losses = {report["step"]: report["validation_loss"] for report in reports}
    best_step = min(losses, key=losses.get)
    final = reports[-1]
    assert final["best_validation_step"] == best_step
    assert final["best_validation_loss"] == losses[best_step]
    test_at = {report["step"]: report["sts_test_at_best_validation_loss"] for report in reports}
    assert final["sts_test_at_best_validation_loss"] == test_at[best_step]
    assert final["total_steps"] == 30 and "lr" in final
    from sentsweep.tracking.callback import selection_tag

    assert selection_tag(tsdae_config | {"select_checkpoint": "validation_loss", "validation_size": 40}).startswith(
        "validation_loss (the method's loss on 40 corpus sentences")


@pytest.mark.slow  # two real training runs
def test_a_validation_file_leaves_the_whole_corpus_to_training(tsdae_config, tmp_path):
    """Wang 2022 l.577 (§5.1): "the datasets with 10k size are used as validation datasets during training, and the
    other sizes of datasets are used as training datasets": with validation_file, one epoch of 24 sentences at
    batch 8 is 3 steps (8 held out of the corpus leave 16: 2 steps)."""
    from sentsweep.data import read_corpus
    from sentsweep.demo_data import CORPUS_FILE
    from sentsweep.tracking.callback import selection_tag

    sentences = read_corpus(CORPUS_FILE)
    corpus, validation = tmp_path / "corpus.txt", tmp_path / "validation.txt"
    corpus.write_text("\n".join(sentences[:24]) + "\n")
    validation.write_text("\n".join(sentences[24:32]) + "\n")
    common = tsdae_config | dict(corpus=str(corpus), select_checkpoint="validation_loss", epochs=1, batch_size=8,
                                 eval_steps=100, max_seq_length=16)
    for extra, steps in ((dict(validation_file=str(validation)), 3), (dict(validation_size=8), 2)):
        session = LocalSession()
        train(common | extra, session)
        assert session.reports[-1]["total_steps"] == steps
        assert "best_validation_loss" in session.reports[-1]
    assert selection_tag(common | {"validation_file": str(validation)}) == (
        f"validation_loss (the method's loss on the sentences of {validation})")


def test_validation_loss_selection_needs_an_unsupervised_method():
    from tests.conftest import typed_trial

    with pytest.raises(InputError, match="validation_loss.*'tfidf'"):
        typed_trial(dict(method="tfidf", select_checkpoint="validation_loss"))


def beir_folder(folder, splits=("dev", "test")):
    """A small BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) of demo-corpus sentences: each query is
    a sentence whose relevant document is the next one."""
    import json

    from sentsweep.data import read_corpus
    from sentsweep.demo_data import CORPUS_FILE

    sentences = read_corpus(CORPUS_FILE)[:60]
    folder.mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": str(i), "title": "", "text": s}) + "\n"
                                                 for i, s in enumerate(sentences)))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{i}", "text": sentences[i]}) + "\n"
                                                  for i in range(0, 40, 2)))
    (folder / "qrels").mkdir()
    for split, queries in zip(splits, (range(0, 20, 2), range(20, 40, 2))):
        (folder / "qrels" / f"{split}.tsv").write_text(
            "query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\t{i + 1}\t1\n" for i in queries))
    return folder


def test_a_tasks_dev_split_selects_the_reported_checkpoint(tsdae_config, tmp_path):
    """Wang (2022) §5.3.7: "Recall@10 of Quora devset (validation task) as the best model checkpoint selection"."""
    quora = beir_folder(tmp_path / "quora")
    session = LocalSession()
    train(tsdae_config | dict(eval_tasks={"quora": str(quora)}, select_checkpoint="best_task_dev",
                              selection_task="quora", selection_metric="recall_at_10", max_steps=30), session)
    reports = session.reports
    dev = {report["step"]: report["task_dev"] for report in reports}
    best_step = max(sorted(dev), key=dev.get)  # the first of equal scores: a later one must be strictly better
    final = reports[-1]
    assert final["best_task_step"] == best_step and final["best_task_dev"] == dev[best_step]
    at = {report["step"]: report["sts_test_at_best_task_dev"] for report in reports}
    assert final["sts_test_at_best_task_dev"] == at[best_step]
    assert "quora_recall_at_10" in final  # the task's test split, scored once with the selected weights


def test_task_selection_needs_one_of_the_eval_tasks():
    from tests.conftest import typed_trial

    with pytest.raises(InputError, match="selection_task to name one of the eval tasks \\(none given"):
        typed_trial(dict(method="tsdae", pooling="cls", model="m", select_checkpoint="best_task_dev",
                         selection_task="quora"))
