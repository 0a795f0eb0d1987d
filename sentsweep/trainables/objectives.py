"""The unsupervised objectives, each built on a shared SentenceTransformer, and how they combine.

A method is one objective ("tsdae") or two joined by '+' ("mlm+nm", "simcse+clm_ae"), trained with

    L = L_first + w * L_second

which is the multi-task loss of thesis 001 (eq. 3.6, contrastive + w x auto-encoder) and the auxiliary
objectives of thesis 000 chapter 6 (MLM / TSDAE + w x NM). sentence-transformers supplies Contrastive
Tension (ContrastiveTensionLossInBatchNegatives) and TSDAE (DenoisingAutoEncoderLoss, which sentsweep's
TsdaeLoss computes with less work); sentsweep.losses supplies the rest (SimCSE as
MultipleNegativesRankingLoss over (x, x), in one pass).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

import torch
from torch import Tensor, nn

from sentsweep.errors import InputError
from sentsweep.losses.consert import ConsertLoss, check_augmentations
from sentsweep.losses.contrastive import NoiseMatchingLoss, SimCseLoss
from sentsweep.losses.reconstruction import ClmAutoEncoderLoss, MaskedLanguageModelingLoss, MlmAutoEncoderLoss
from sentsweep.losses.tsdae import TsdaeLoss
from sentsweep.models import check_model_source, check_pooling, preprocess_on_device
from sentsweep.noise import WordNoise, check_noise_type, check_ratio

# Each objective's settings with their defaults (the values of the seed documents where they give one).
OBJECTIVE_DEFAULTS = {
    "tsdae": {"noise_type": "delete", "noise_ratio": 0.6, "tie_decoder": True},
    "simcse": {"temperature": 0.05},
    "nm": {"noise_ratio": 0.6, "temperature": 0.05},
    "ct": {"temperature": 0.05},
    "mlm": {"mlm_probability": 0.15},
    "consert": {"augmentations": "token_shuffle,feature_cutoff", "augmentation_ratio": 0.1, "temperature": 0.1},
    "clm_ae": {"decoder_layers": 2},
    "mlm_ae": {"decoder_layers": 2, "decoder_mask_ratio": 0.8},
}
# Methods whose sentence embedding is dropout-free by definition (ConSERT removes the encoder's dropout).
DROPOUT_FREE = {"consert"}


@dataclass
class Objective:
    """An objective's trainable parts (beyond the shared model) and its loss on a batch of raw sentences."""

    module: nn.Module
    loss: Callable[[list[str], random.Random], Tensor]


def parse_method(method: str) -> tuple[str, ...]:
    """'mlm+nm' -> ('mlm', 'nm'); unknown objectives or more than two are an `InputError`."""
    parts = tuple(part.strip() for part in str(method).split("+"))
    unknown = [part for part in parts if part not in OBJECTIVE_DEFAULTS]
    if unknown or not 1 <= len(parts) <= 2 or len(set(parts)) != len(parts):
        raise InputError(
            f"unknown method {method!r}; expected tfidf, bm25, sbert, augsbert, gpl, one of "
            f"{', '.join(OBJECTIVE_DEFAULTS)} or two of those joined by '+'"
        )
    return parts


def with_defaults(config: dict) -> dict:
    """The config completed with the defaults of its method's objectives (explicit values win)."""
    complete = {}
    for objective in parse_method(config["method"]):
        complete.update(OBJECTIVE_DEFAULTS[objective])
    complete.update(config)
    return complete


CHECKPOINT_SELECTIONS = ("best_sts_dev", "last")


def check_checkpoint_selection(selection: str) -> str:
    """'best_sts_dev' (the checkpoint with the best STS dev score) or 'last' (fixed steps, no selection: the
    TSDAE paper's protocol for its USEB tasks, which uses no in-domain labels for early stopping)."""
    if selection not in CHECKPOINT_SELECTIONS:
        raise InputError(f"select_checkpoint {selection!r}; expected one of {', '.join(CHECKPOINT_SELECTIONS)}")
    return selection


def validate_config(config: dict) -> None:
    """Raise an `InputError` naming the first bad value of an unsupervised trial config."""
    objectives = parse_method(config["method"])
    config = with_defaults(config)
    check_pooling(config["pooling"])
    if len(objectives) == 2:
        weight = config.get("w")
        if not isinstance(weight, (int, float)) or isinstance(weight, bool) or weight < 0:
            raise InputError(f"weight w {weight!r} of method {config['method']!r} must be a number >= 0")
    if "noise_type" in config:
        check_noise_type(config["noise_type"])
    if "noise_ratio" in config:
        check_ratio(config["noise_ratio"], "noise ratio")
    if "temperature" in config and not config["temperature"] > 0:
        raise InputError(f"temperature {config['temperature']!r} must be > 0")
    if "augmentations" in config:
        check_augmentations(config["augmentations"])
        check_ratio(config["augmentation_ratio"], "augmentation ratio")
    for key in ("mlm_probability", "decoder_mask_ratio"):
        if key in config and not 0 < config[key] < 1:
            raise InputError(f"{key} {config[key]!r} must lie in (0, 1)")
    if "tie_decoder" in config and not isinstance(config["tie_decoder"], bool):
        raise InputError(f"tie_decoder {config['tie_decoder']!r} must be true or false")
    check_checkpoint_selection(config.get("select_checkpoint", "best_sts_dev"))


def _generator(rng: random.Random) -> torch.Generator:
    return torch.Generator().manual_seed(rng.getrandbits(63))


def build_objective(name: str, model, config: dict, vocabulary: tuple[str, ...]) -> Objective:
    """The objective `name` on `model`, with settings from the (defaults-completed) `config`."""
    source = check_model_source(config["model"])
    if name == "tsdae":
        # Untied: a separate decoder initialised from the same checkpoint; tied: built from the encoder.
        loss = TsdaeLoss(model, decoder_name_or_path=None if config["tie_decoder"] else source,
                         tie_encoder_decoder=config["tie_decoder"])
        noise = WordNoise(config["noise_type"], config["noise_ratio"], vocabulary, model.tokenizer.mask_token)
        return Objective(loss, lambda s, rng: loss(
            [preprocess_on_device(model, [noise(x, rng) for x in s]), preprocess_on_device(model, s)], None))
    if name == "simcse":
        loss = SimCseLoss(model, config["temperature"])
        return Objective(loss, lambda s, rng: loss(preprocess_on_device(model, s)))
    if name == "ct":
        from sentence_transformers.sentence_transformer.losses import ContrastiveTensionLossInBatchNegatives

        loss = ContrastiveTensionLossInBatchNegatives(model, scale=1.0 / config["temperature"])
        return Objective(loss, lambda s, rng: loss([preprocess_on_device(model, s)], None))
    if name == "nm":
        loss = NoiseMatchingLoss(model, config["temperature"])
        noise = WordNoise("delete", config["noise_ratio"])
        return Objective(loss, lambda s, rng: loss(
            preprocess_on_device(model, s), preprocess_on_device(model, [noise(x, rng) for x in s])))
    if name == "consert":
        loss = ConsertLoss(model, config["augmentations"], config["augmentation_ratio"], config["temperature"])
        return Objective(loss, lambda s, rng: loss(preprocess_on_device(model, s), _generator(rng)))
    if name == "mlm":
        loss = MaskedLanguageModelingLoss(model, source, config["mlm_probability"])
        return Objective(loss, lambda s, rng: loss(preprocess_on_device(model, s), _generator(rng)))
    if name == "clm_ae":
        loss = ClmAutoEncoderLoss(model, source, config["decoder_layers"])
        return Objective(loss, lambda s, rng: loss(preprocess_on_device(model, s)))
    if name == "mlm_ae":
        loss = MlmAutoEncoderLoss(model, source, config["decoder_layers"], config["decoder_mask_ratio"])
        return Objective(loss, lambda s, rng: loss(preprocess_on_device(model, s), _generator(rng)))
    raise InputError(f"unknown objective {name!r}")
