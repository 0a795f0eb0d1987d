"""sentsweep's losses in sentence-transformers' contract: each trains a tiny model with `SentenceTransformerTrainer`
and gives, step by step, the loss values of sentsweep's own loop on the same batches and seed.

Both sides start from the same weights (the method built twice under one torch seed), see the batches of
`BatchSchedule` in order, draw each step's noise, pairs and masks from the loop's (seed, step) seeds, and step AdamW
(fused) at a constant rate without clipping: the loop by `training_step`, the trainer by its own loop with a
callback that seeds each step as `training_step` does."""

from __future__ import annotations

import random

import pytest
import torch

from sentsweep.data import read_corpus
from sentsweep.noise import WordNoise
from sentsweep.trainables.loop import BatchSchedule, make_lr_schedule, make_optimizer, step_seed, training_step
from sentsweep.trainables.objectives import (
    ClmAutoEncoderSettings,
    ConsertSettings,
    MlmAutoEncoderSettings,
    MlmSettings,
    NoiseMatchingSettings,
    SimCseBceSettings,
    SimCseSettings,
    TsdaeSettings,
    loss_default,
)
from sentsweep.trainables.unsupervised import build_unsupervised
from tests.conftest import CORPUS_FILE, typed_trial

STEPS = 3
GENERATOR_DRAWN = ("consert", "mlm", "mlm_ae")  # the losses whose random draws come from `loss.generator`


def examples_of(method: str, trial, sentences: list[str], rng: random.Random) -> dict[str, list]:
    """A batch's dataset columns, as sentsweep's loop builds the loss's inputs from the batch and the step's rng."""
    settings = trial.objectives[method]
    if method == "nm":
        noise = WordNoise("delete", settings.nm_noise_ratio)
        return {"sentence": sentences, "noised": [noise(x, rng) for x in sentences]}
    if method == "tsdae":
        noise = WordNoise(settings.noise_type, settings.noise_ratio)
        return {"noised": [noise(x, rng) for x in sentences], "sentence": sentences}
    if method == "ct":
        from sentsweep.losses.contrastive_tension import contrastive_tension_pairs

        firsts, seconds, labels = contrastive_tension_pairs(sentences, settings.negatives_per_positive, rng)
        return {"sentence_A": firsts, "sentence_B": seconds, "label": labels}
    return {"sentence": sentences}


def loop_losses(trial, batches: BatchSchedule) -> list[float]:
    """The loss values of sentsweep's own training steps 0..STEPS-1."""
    torch.manual_seed(0)
    setup = build_unsupervised(trial)
    setup.module.train()
    optimizer = make_optimizer(setup.module, trial.training)
    lr_schedule = make_lr_schedule(optimizer, trial.training, STEPS, 0)
    return [training_step(setup, optimizer, lr_schedule, batches, trial.seed, step) for step in range(STEPS)]


def trainer_losses(trial, method: str, batches: BatchSchedule, output_dir) -> list[float]:
    """The loss values the trainer computes in its first STEPS steps, with the sentsweep loss of `method`."""
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from torch.utils.data import BatchSampler, SequentialSampler
    from transformers import TrainerCallback

    seed, batch_size = trial.seed, trial.training.batch_size
    torch.manual_seed(0)
    setup = build_unsupervised(trial)
    model, loss = setup.model, setup.module[method]
    columns: dict[str, list] = {}
    for step in range(STEPS):
        sentences = batches.batch(step)
        assert len(sentences) == batch_size
        for name, values in examples_of(method, trial, sentences, random.Random(step_seed(seed, step))).items():
            columns.setdefault(name, []).extend(values)

    class SeedEachStep(TrainerCallback):
        """Everything random in a step seeded from (seed, step), as `training_step` seeds it."""

        def on_step_begin(self, args, state, control, **kwargs):
            torch.manual_seed(step_seed(seed, state.global_step))
            if method in GENERATOR_DRAWN:
                rng = random.Random(step_seed(seed, state.global_step))
                loss.generator = torch.Generator().manual_seed(rng.getrandbits(63))

    values: list[float] = []
    loss.register_forward_hook(lambda module, args, output: values.append(output.item()))
    arguments = SentenceTransformerTrainingArguments(
        output_dir=str(output_dir), max_steps=STEPS, per_device_train_batch_size=batch_size,
        learning_rate=trial.training.lr, lr_scheduler_type="constant", warmup_steps=0, weight_decay=0.0,
        optim="adamw_torch_fused", max_grad_norm=0.0, seed=seed, use_cpu=True, report_to=[], save_strategy="no",
        logging_strategy="no", disable_tqdm=True,
        batch_sampler=lambda dataset, batch_size, drop_last, **kwargs: BatchSampler(
            SequentialSampler(dataset), batch_size, drop_last))
    trainer = SentenceTransformerTrainer(model=model, args=arguments, train_dataset=Dataset.from_dict(columns),
                                         loss=loss, callbacks=[SeedEachStep()])
    trainer.train()
    return values


@pytest.mark.parametrize("method", ["nm", "simcse", "simcse_bce", "consert", "ct", "mlm", "clm_ae", "mlm_ae", "tsdae"])
def test_the_trainer_gives_the_loop_s_loss_values_with_sentsweep_s_loss(tiny_model_dir, tmp_path, method):
    trial = typed_trial({"method": method, "model": str(tiny_model_dir), "pooling": "mean", "batch_size": 8,
                         "lr": 1e-3})
    batches = BatchSchedule(read_corpus(str(CORPUS_FILE)), trial.training.batch_size, trial.seed)
    ours = loop_losses(trial, batches)
    theirs = trainer_losses(trial, method, batches, tmp_path)
    difference = max(abs(a - b) for a, b in zip(ours, theirs))
    print(f"{method}: loop {ours} trainer {theirs} largest difference {difference:.3g}")
    assert len(theirs) == STEPS and len(set(ours)) == STEPS  # three steps, the weights moving between them
    assert theirs == pytest.approx(ours, rel=1e-5, abs=1e-6)


def test_a_loss_s_defaults_are_its_settings_defaults():
    from sentsweep.losses import ClmAutoEncoderLoss, ConsertLoss, MaskedLanguageModelingLoss, MlmAutoEncoderLoss

    assert SimCseSettings().temperature == SimCseBceSettings().temperature == 0.05
    assert NoiseMatchingSettings().temperature == 0.05
    assert ConsertSettings().augmentations == ",".join(loss_default(ConsertLoss, "augmentations"))
    assert (ConsertSettings().augmentation_ratio, ConsertSettings().temperature) == (
        loss_default(ConsertLoss, "ratio"), loss_default(ConsertLoss, "temperature")) == (0.2, 0.05)
    assert MlmSettings().mlm_probability == loss_default(MaskedLanguageModelingLoss, "probability")
    assert ClmAutoEncoderSettings().decoder_layers == loss_default(ClmAutoEncoderLoss, "decoder_layers")
    assert MlmAutoEncoderSettings().decoder_mask_ratio == loss_default(MlmAutoEncoderLoss, "mask_ratio")


def test_tsdae_s_tied_decoder_default_is_the_loss_s():
    from sentsweep.losses import TsdaeLoss

    assert TsdaeSettings().tie_decoder is loss_default(TsdaeLoss, "tie_encoder_decoder") is True


def test_each_loss_has_sentence_transformers_contract(tiny_model_dir):
    import inspect

    import sentsweep.losses
    from sentsweep.models import load_sentence_model

    model = load_sentence_model(str(tiny_model_dir), "mean", 32)
    for name in sentsweep.losses.__all__:
        cls = getattr(sentsweep.losses, name)
        assert list(inspect.signature(cls.forward).parameters)[1:3] == ["sentence_features", "labels"], name
        doc = inspect.getdoc(cls)
        assert "Inputs:" in doc and "| Labels" in doc and "SentenceTransformerTrainer" in doc, name
    config = sentsweep.losses.ConsertLoss(model).get_config_dict()
    assert config == {"augmentations": ["token_shuffle", "feature_cutoff"], "ratio": 0.2, "temperature": 0.05}
    assert sentsweep.losses.NoiseMatchingLoss(model, temperature=0.1).get_config_dict() == {"temperature": 0.1}
    assert sentsweep.losses.MlmAutoEncoderLoss(model).get_config_dict()["decoder_name_or_path"] == str(tiny_model_dir)


def test_the_example_trains_a_model_with_simcse_bce_in_the_trainer(tiny_model_dir, tmp_path):
    import importlib.util

    from sentsweep.data import read_corpus
    from tests.helpers.cluster_helpers import PROJECT

    spec = importlib.util.spec_from_file_location("st_losses_example", PROJECT / "examples" / "st_losses.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    model = example.train_in_the_trainer(str(tiny_model_dir), read_corpus(str(CORPUS_FILE))[:64],
                                         str(tmp_path / "model"), max_steps=2)
    untrained = type(model)(str(tiny_model_dir))
    moved = [name for name, value in model.state_dict().items()
             if not torch.equal(value.cpu(), untrained.state_dict()[name].cpu())]
    assert moved and (tmp_path / "model" / "modules.json").exists()
