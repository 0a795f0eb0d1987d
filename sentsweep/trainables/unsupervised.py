"""The Ray Tune trainable of every unsupervised method: one objective, or two as L = L_first + w * L_second."""

from __future__ import annotations

import torch
from torch import nn

from sentsweep.data import read_corpus
from sentsweep.models import load_sentence_model
from sentsweep.noise import corpus_vocabulary
from sentsweep.trainables.loop import TrainingSetup, run_trial
from sentsweep.trainables.objectives import DROPOUT_FREE, build_objective, parse_method, with_defaults


def build_unsupervised(config: dict) -> TrainingSetup:
    """The shared model, every objective's extra modules, and the combined batch loss."""
    config = with_defaults(config)
    names = parse_method(config["method"])
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = load_sentence_model(
        config["model"], config["pooling"], config["max_seq_length"], device=device,
        dropout_free=any(name in DROPOUT_FREE for name in names),
    )
    vocabulary = corpus_vocabulary(read_corpus(config["corpus"])) if config.get("noise_type") in ("insert", "replace") else ()
    objectives = [build_objective(name, model, config, vocabulary) for name in names]
    weights = [1.0] + ([float(config["w"])] if len(names) == 2 else [])
    module = nn.ModuleDict({"model": model, **{name: o.module for name, o in zip(names, objectives)}}).to(device)

    def batch_loss(sentences, rng):
        return sum(weight * objective.loss(sentences, rng) for weight, objective in zip(weights, objectives))

    return TrainingSetup(model=model, module=module, batch_loss=batch_loss)


def train_unsupervised(config: dict, session=None) -> None:
    """Ray Tune function trainable: trains `config['method']` (see sentsweep.trainables.objectives) and reports STS."""
    run_trial(config, build_unsupervised, session)
