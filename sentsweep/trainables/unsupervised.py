"""Every unsupervised method: one objective, or two trained as L = L_first + w * L_second on one model.

When both objectives read the encoder only through sentence embeddings of the clean batch ("simcse+clm_ae",
"simcse+mlm_ae"), the encoder runs once per batch: one pass over the batch stacked as often as the objectives
need views ([x; x] for SimCSE's two dropout views), and each objective's loss is computed from that pass, the
auto-encoder's decoder conditioned on the first view f(x) (Wang (2022) eq. 3.6 and Figure 3.5: f(x) is the
representation both terms share). Other methods run each objective on its own.
"""

from __future__ import annotations

import torch
from torch import nn

from sentsweep.data import read_corpus
from sentsweep.losses.contrastive import encode_views
from sentsweep.models import check_model_source, load_sentence_model, preprocess_on_device
from sentsweep.noise import corpus_vocabulary
from sentsweep.trainables.loop import TrainingSetup, run_trial
from sentsweep.trainables.objectives import (
    OBJECTIVES,
    EncodedBatch,
    Objective,
    UnsupervisedSettings,
    check_dropout,
    check_kept_encoder_decoder,
    check_weight,
    parse_method,
)
from sentsweep.trainables.settings import Method, Trial


def build_unsupervised(trial: Trial) -> TrainingSetup:
    """The shared model, every objective's extra modules, and the combined batch loss."""
    specs = [OBJECTIVES.get(name) for name in trial.objectives]
    training = trial.training
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dropout = 0.0 if any(spec.dropout_free for spec in specs) else training.dropout
    model = load_sentence_model(training.model, trial.settings.pooling, training.max_seq_length, device=device,
                                dropout=dropout)
    noise_types = {getattr(settings, "noise_type", None) for settings in trial.objectives.values()}
    vocabulary = corpus_vocabulary(read_corpus(training.corpus_file())) if noise_types & {"insert", "replace"} else ()
    source = check_model_source(training.model)
    objectives = [spec.build(model, trial.objectives[spec.name], source, vocabulary) for spec in specs]
    weights = [1.0] + ([trial.settings.w] if len(specs) == 2 else [])
    module = nn.ModuleDict({"model": model, **{spec.name: o.module for spec, o in zip(specs, objectives)}}).to(device)
    return TrainingSetup(model=model, module=module, batch_loss=combined_loss(model, objectives, weights))


def combined_loss(model, objectives: list[Objective], weights: list[float]):
    """batch_loss(sentences, rng) = sum_k weights[k] * L_k; with two objectives that can share an encoder pass,
    the batch is encoded once (as many stacked copies as the objectives need views) and both read that pass."""
    if len(objectives) > 1 and all(objective.loss_on_views is not None for objective in objectives):
        views = max(objective.views for objective in objectives)

        def batch_loss(sentences, rng):
            features = preprocess_on_device(model, sentences)
            encoded = EncodedBatch(features, encode_views(model, features, views))
            return sum(weight * objective.loss_on_views(encoded, rng)
                       for weight, objective in zip(weights, objectives))
    else:
        def batch_loss(sentences, rng):
            return sum(weight * objective.loss(sentences, rng) for weight, objective in zip(weights, objectives))

    return batch_loss


def check_unsupervised(trial: Trial) -> None:
    check_weight(trial)
    check_dropout(trial)
    check_kept_encoder_decoder(trial)


def unsupervised_method(name: str) -> Method:
    """The method of one objective or two joined by '+' ('mlm+nm'); unknown objectives are an `InputError`."""
    names = parse_method(name)
    return Method(
        name=name,
        settings=UnsupervisedSettings,
        run=lambda trial, session: run_trial(trial, build_unsupervised, session),
        reference=OBJECTIVES.get(names[0]).reference,
        check=check_unsupervised,
        objectives={objective: OBJECTIVES.get(objective).settings for objective in names},
    )
