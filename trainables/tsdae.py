"""TSDAE (Wang et al., 2021): a denoising auto-encoder whose decoder sees only the sentence vector.

The encoder embeds the noised sentence x~ into s; the decoder reconstructs the original x from s alone
(cross-attention keys and values are [s]), trained with

    J(theta) = E_x [ sum_t log P(x_t | x~) ],   P(x_t | x~) = softmax(h_t^T E)_{x_t}

sentence-transformers' DenoisingAutoEncoderLoss implements the decoder and the loss; the noise is ours
(sentsweep.noise), so no NLTK data is needed. The decoder is tied to the encoder or a separate copy.
"""

from __future__ import annotations

import torch

from sentsweep.errors import InputError
from sentsweep.models import POOLING_MODES, check_model_source, load_sentence_model
from sentsweep.noise import check_ratio, delete_words
from trainables.loop import TrainingSetup, move_features, run_trial

NOISE_FUNCTIONS = {"delete": delete_words}


def validate_tsdae_config(config: dict) -> None:
    """Raise an `InputError` naming the first bad TSDAE-specific value of `config`."""
    if config["noise_type"] not in NOISE_FUNCTIONS:
        raise InputError(f"unknown noise type {config['noise_type']!r}; expected one of {sorted(NOISE_FUNCTIONS)}")
    check_ratio(config["noise_ratio"], "noise ratio")
    if config["pooling"] not in POOLING_MODES:
        raise InputError(f"unknown pooling {config['pooling']!r}; expected one of {', '.join(POOLING_MODES)}")
    if not isinstance(config["tie_decoder"], bool):
        raise InputError(f"tie_decoder {config['tie_decoder']!r} must be true or false")


def build_tsdae(config: dict) -> TrainingSetup:
    from sentence_transformers.sentence_transformer.losses import DenoisingAutoEncoderLoss

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = load_sentence_model(config["model"], config["pooling"], config["max_seq_length"], device=device)
    # Untied: a separate decoder initialised from the same checkpoint; tied: the loss builds it from the encoder.
    decoder_source = None if config["tie_decoder"] else check_model_source(config["model"])
    loss = DenoisingAutoEncoderLoss(
        model, decoder_name_or_path=decoder_source, tie_encoder_decoder=config["tie_decoder"]
    ).to(device)
    add_noise = NOISE_FUNCTIONS[config["noise_type"]]
    ratio = config["noise_ratio"]

    def batch_loss(sentences, rng):
        noisy = [add_noise(sentence, ratio, rng) for sentence in sentences]
        features = [move_features(model.preprocess(texts), device) for texts in (noisy, sentences)]
        return loss(features, None)

    return TrainingSetup(model=model, module=loss, batch_loss=batch_loss)


def train_tsdae(config: dict, session=None) -> None:
    """Ray Tune function trainable for TSDAE (see the module docstring for the objective)."""
    run_trial(config, build_tsdae, session)
