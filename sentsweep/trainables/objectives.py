"""The unsupervised objectives, each built on a shared SentenceTransformer, and how they combine.

A method is one objective ("tsdae") or two joined by '+' ("mlm+nm", "simcse+clm_ae"), trained with

    L = L_first + w * L_second

which is the multi-task loss of Wang (2022) (eq. 3.6, contrastive + w x auto-encoder) and the auxiliary
objectives of Reiml (2023) chapter 6 (MLM / TSDAE + w x NM). sentence-transformers supplies Contrastive
Tension (`ct`: ContrastiveTensionLoss, two encoders, which sentsweep's ContrastiveTensionBceLoss averages over
the pairs as the TSDAE paper's J_CT does; `ct_in_batch`: ContrastiveTensionLossInBatchNegatives) and TSDAE
(DenoisingAutoEncoderLoss, which sentsweep's TsdaeLoss computes with less work); sentsweep.losses supplies the
rest (SimCSE as MultipleNegativesRankingLoss over (x, x), in one pass).
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from sentsweep.errors import InputError
from sentsweep.losses.consert import AUGMENTATIONS, ConsertLoss, check_augmentations
from sentsweep.losses.contrastive import NoiseMatchingLoss, SimCseBceLoss, SimCseLoss
from sentsweep.losses.reconstruction import ClmAutoEncoderLoss, MaskedLanguageModelingLoss, MlmAutoEncoderLoss
from sentsweep.losses.seq2seq_tsdae import Seq2SeqTsdaeLoss, is_encoder_decoder
from sentsweep.models import POOLING_MODES, is_encoder_decoder_folder, preprocess_on_device, reinitialise
from sentsweep.noise import NOISE_TYPES, WordNoise
from sentsweep.references import (
    BERT,
    CONSERT,
    CONTRASTIVE_TENSION,
    SIMCSE,
    THESIS_REIML_2023,
    THESIS_WANG_2022,
    TSDAE,
    Reference,
)
from sentsweep.registry import Registry, unknown_name
from sentsweep.settings import Settings, cited, project_choice, required_input, setting
from sentsweep.trainables.settings import Trial


def loss_default(loss_class: type, argument: str):
    """The default of `argument` in `loss_class`'s constructor: a loss's defaults are written once, in its
    signature, and its settings class reads them (the setting keeps the source that cites the value)."""
    return inspect.signature(loss_class.__init__).parameters[argument].default


# TSDAE's starting weights: the pre-trained checkpoint's, or random ones of its architecture (TSDAE §8, Table 4's
# "Scratch" row)
INITIALISATIONS = ("checkpoint", "random")


@dataclass(frozen=True)
class TsdaeSettings(Settings):
    noise_type: str = setting("delete", "word noise on the encoder's input", cited(TSDAE, "App. A, Table 5",
                              '"deletion is the best noise type"'), choices=NOISE_TYPES)
    noise_ratio: float = setting(0.6, "share of the words the noise touches", cited(TSDAE, "§3, App. A, Table 6",
                                 '"setting the deletion ratio to 0.6"'), ge=0, lt=1)
    tie_decoder: bool = setting(True, "decoder shares the encoder's weights (false for an encoder-decoder "
                                "checkpoint, BART or T5, whose own decoder reconstructs)",
                                cited(TSDAE, "§3.2, App. A", '"tying the encoder and decoder parameters"'))
    initialisation: str = setting("checkpoint", "the starting weights of the encoder and the decoder: the "
                                  "checkpoint's, or random weights of its architecture (from scratch)",
                                  cited(TSDAE, "§9", '"a new unsupervised sentence embedding learning '
                                                         'method based on pre-trained Transformers"'),
                                  choices=INITIALISATIONS)


@dataclass(frozen=True)
class SimCseSettings(Settings):
    temperature: float = setting(loss_default(SimCseLoss, "temperature"),
                                 "softmax temperature tau of the contrastive loss",
                                 cited(THESIS_WANG_2022, "§5.2.2, Table 5.3", '"temperature 0.05"'), gt=0)


@dataclass(frozen=True)
class SimCseBceSettings(Settings):
    temperature: float = setting(
        loss_default(SimCseBceLoss, "temperature"),
        "temperature tau in the sigmoid g(s) = sigmoid(s / tau) of each pair's cosine similarity s",
        project_choice("Wang 2022 eq. 2.10 prints g(x) = sigma(x^tau) and §5.3.3 keeps Table 5.3's temperature 0.05; "
                       "read as sigma(cos / tau) with tau = 0.05, the scaling of eq. 2.7"), gt=0)


@dataclass(frozen=True)
class NoiseMatchingSettings(Settings):
    # A key of its own: in "tsdae+nm", TSDAE's noise_ratio and NM's are two settings
    nm_noise_ratio: float = setting(0.6, "share of the words deleted from the matched copy",
                                 cited(THESIS_REIML_2023, "§4.2.3", '"60% of the input sentence is noised"'),
                                 ge=0, lt=1)
    temperature: float = setting(loss_default(NoiseMatchingLoss, "temperature"), "softmax temperature tau",
                                 project_choice("Reiml 2023 §4.2.3 gives no value"), gt=0)


@dataclass(frozen=True)
class ContrastiveTensionSettings(Settings):
    negatives_per_positive: int = setting(
        7, "K: random negative pairs (a, b != a) per positive pair (a, a) in a batch",
        project_choice("TSDAE §5.3 samples K random sentences without giving K; with App. B's batch size 8, K=7 "
                       "gives one positive pair per batch, as in sentence-transformers' CT example (pos_neg_ratio 8)"),
        ge=1)


@dataclass(frozen=True)
class ContrastiveTensionInBatchSettings(Settings):
    temperature: float = setting(0.05, "the in-batch softmax's temperature (logit scale 1 / tau)",
                                 project_choice("TSDAE §5.3 defines CT without a temperature"), gt=0)


@dataclass(frozen=True)
class MlmSettings(Settings):
    mlm_probability: float = setting(loss_default(MaskedLanguageModelingLoss, "probability"),
                                     "share of the tokens selected for prediction",
                                     cited(THESIS_REIML_2023, "§2.3.1.3", '"BERT selects 15% of the input tokens"'),
                                     gt=0, lt=1)


@dataclass(frozen=True)
class ConsertSettings(Settings):
    augmentations: str = setting(",".join(loss_default(ConsertLoss, "augmentations")),
                                 f"one augmentation per view, comma-separated ({', '.join(AUGMENTATIONS)})",
                                 cited(THESIS_WANG_2022, "§5.3.1, Table 5.4", "Token Shuffling + Feature Cutoff"))
    augmentation_ratio: float = setting(loss_default(ConsertLoss, "ratio"),
                                        "share of tokens or features an augmentation cuts or drops",
                                        cited(THESIS_WANG_2022, "§5.3.1", '"In ConSERT we use Feature Cutoff with '
                                              'probability 0.2 and Embedding Dropout with probability 0.2"'),
                                        ge=0, lt=1)
    temperature: float = setting(loss_default(ConsertLoss, "temperature"), "NT-Xent temperature",
                                 cited(THESIS_WANG_2022, "Table 5.3", '"temperature 0.05"; §5.3.1: "Other '
                                       'hyperparameters setting is same as basic experimental setup from Table 5.3"'),
                                 gt=0)

    def __post_init__(self) -> None:
        check_augmentations(self.augmentations)


@dataclass(frozen=True)
class ClmAutoEncoderSettings(Settings):
    decoder_layers: int = setting(loss_default(ClmAutoEncoderLoss, "decoder_layers"), "layers of the causal decoder",
                                  cited(THESIS_WANG_2022, "§3.2.1", '"always set 2 layers for decoder in this thesis"'),
                                  ge=1)


@dataclass(frozen=True)
class MlmAutoEncoderSettings(Settings):
    decoder_layers: int = setting(loss_default(MlmAutoEncoderLoss, "decoder_layers"), "layers of the masked-LM decoder",
                                  cited(THESIS_WANG_2022, "§3.2.2, Table 5.3", '"decoder layers 2"'), ge=1)
    decoder_mask_ratio: float = setting(loss_default(MlmAutoEncoderLoss, "mask_ratio"),
                                        "share of the decoder's input tokens masked",
                                        cited(THESIS_WANG_2022, "§3.2.2", '"usually 80% in this thesis"'), gt=0, lt=1)


@dataclass(frozen=True)
class UnsupervisedSettings(Settings):
    """The settings of an unsupervised method as a whole: pooling, and the weight of a second objective."""

    pooling: str = setting(help="how token vectors become the sentence vector", source=required_input(),
                           choices=POOLING_MODES)
    w: float | None = setting(None, "weight of the second objective in L = L_first + w L_second (a method of two "
                              "objectives only)",
                              cited(THESIS_WANG_2022, "eq. 3.6", "no default: each sweep gives w"), ge=0)


@dataclass
class EncodedBatch:
    """One encoder pass over a batch, shared by the objectives of a multi-task method.

    `features`: the tokenized batch x (on the model's device); `views`: the sentence embeddings f(x) of each of
    the copies of x that were stacked and encoded in that single pass ([x; x] for two), one (N, d) tensor per
    copy, each copy with its own dropout mask. views[0] is f(x), the embedding every objective shares.
    """

    features: dict
    views: tuple[Tensor, ...]


@dataclass
class Objective:
    """An objective's trainable parts (beyond the shared model) and its loss on a batch of raw sentences.

    An objective whose loss reads the encoder only through sentence embeddings of the clean batch (SimCSE, the
    CLM / MLM auto-encoders) also gives `loss_on_views(encoded, rng)`, its loss from an `EncodedBatch` with at
    least `views` copies: the objectives of a multi-task method then share one encoder pass (Wang (2022)
    eq. 3.6: the contrastive and auto-encoder terms share f(x)). `loss` is the same loss, encoding by itself.

    Examples:
        >>> import random, torch
        >>> def batch_loss(sentences, rng):
        ...     return torch.tensor(float(len(sentences)))
        >>> built = sentsweep.Objective(torch.nn.Identity(), batch_loss)
        >>> built.loss(["A man is playing a guitar.", "A dog runs."], random.Random(0))
        tensor(2.)
    """

    module: nn.Module
    loss: Callable[[list[str], random.Random], Tensor]
    views: int = 0
    loss_on_views: Callable[[EncodedBatch, random.Random], Tensor] | None = None


@dataclass(frozen=True)
class ObjectiveSpec:
    """A registered objective: its settings, the work that defines it, and how it is built on a model.

    `build(model, settings, source, vocabulary)`: `source` is the checkpoint the model was loaded from (for
    decoders initialised from it), `vocabulary` the corpus's words (for insert/replace noise).
    `dropout_free`: the sentence embedding is computed without the encoder's dropout (ConSERT).
    """

    name: str
    settings: type[Settings]
    reference: Reference
    build: Callable[..., Objective]
    dropout_free: bool = False


OBJECTIVES: Registry[ObjectiveSpec] = Registry("objective")


def objective(name: str, settings: type[Settings], reference: Reference, dropout_free: bool = False):
    """Register the decorated builder as objective `name`, with its `settings` class and the `reference` that
    defines it (`dropout_free`: its sentence embedding is computed without the encoder's dropout). The builder,
    `build(model, settings, source, vocabulary)`, returns the `Objective`; a sweep then takes `method=name`.
    A name registered twice is refused.

    Examples:
        An objective of one's own (examples/own_objective.py sweeps it):

        >>> @sentsweep.objective("align_uniform", AlignUniformSettings, ALIGNMENT_UNIFORMITY)  # doctest: +SKIP
        ... def build_align_uniform(model, settings, source, vocabulary):
        ...     def batch_loss(sentences, rng):
        ...         first, second = sentsweep.encode_views(model, sentsweep.preprocess_on_device(model, sentences))
        ...         return align_uniform_loss(first, second, settings.uniformity_weight, settings.uniformity_t)
        ...     return sentsweep.Objective(torch.nn.Identity(), batch_loss)
    """
    def register(build):
        OBJECTIVES.add(name, ObjectiveSpec(name, settings, reference, build, dropout_free), origin=build.__module__)
        return build
    return register


def parse_method(method: str) -> tuple[str, ...]:
    """'mlm+nm' -> ('mlm', 'nm'); unknown objectives (the closest suggested) or more than two are an `InputError`."""
    parts = tuple(part.strip() for part in str(method).split("+"))
    for part in parts:
        if part not in OBJECTIVES:
            raise InputError(f"method {method!r}: {unknown_name('objective', part, OBJECTIVES.names())}")
    if not 1 <= len(parts) <= 2 or len(set(parts)) != len(parts):
        raise InputError(f"method {method!r}: one objective or two different ones joined by '+'")
    return parts


def check_weight(trial: Trial) -> None:
    """A method of two objectives needs its weight w; a method of one has no second objective to weigh."""
    if len(trial.objectives) == 2 and trial.settings.w is None:
        raise InputError(f"method {trial.method!r} needs the weight w of its second objective (--set w=...)")
    if len(trial.objectives) == 1 and trial.settings.w is not None:
        raise InputError(f"method {trial.method!r} has one objective, so no weight w of a second one; got "
                         f"w={trial.settings.w!r}")


def check_dropout(trial: Trial) -> None:
    """An objective trained without the encoder's dropout (ConSERT) takes no other dropout."""
    dropout = trial.training.dropout
    free = [name for name in trial.objectives if OBJECTIVES.get(name).dropout_free]
    if free and dropout not in (None, 0.0):
        raise InputError(f"method {trial.method!r}: {free[0]} trains without the encoder's dropout; got "
                         f"dropout={dropout!r}")


def check_kept_encoder_decoder(trial: Trial) -> None:
    """TSDAE from a local encoder-decoder checkpoint (BART, T5) keeps no model: its sentence model, the checkpoint's
    encoder, is not one sentence-transformers reloads as trained."""
    if "tsdae" in trial.objectives and trial.evaluation.keep_model and is_encoder_decoder_folder(trial.training.model):
        raise InputError(f"method {trial.method!r} on the encoder-decoder {trial.training.model!r} keeps no model: "
                         "give --keep-models none (its sentence model, the checkpoint's encoder, is not one "
                         "sentence-transformers reloads as trained)")


def _generator(rng: random.Random) -> torch.Generator:
    return torch.Generator().manual_seed(rng.getrandbits(63))


@objective("tsdae", TsdaeSettings, TSDAE)
def build_tsdae(model, settings: TsdaeSettings, source: str, vocabulary: tuple[str, ...]) -> Objective:
    # lazy: sentence_transformers
    from sentsweep.losses.tsdae import TsdaeLoss

    if is_encoder_decoder(source):  # BART, T5: the checkpoint's own encoder and decoder
        if settings.tie_decoder:
            raise InputError(f"TSDAE on the encoder-decoder {source!r}: its own decoder reconstructs, so there is no "
                             "decoder to tie to the encoder; set tie_decoder=false")
        loss = Seq2SeqTsdaeLoss(model, source)
    else:  # untied: a separate decoder initialised from the same checkpoint; tied: built from the encoder
        loss = TsdaeLoss(model, decoder_name_or_path=None if settings.tie_decoder else source,
                         tie_encoder_decoder=settings.tie_decoder)
    if settings.initialisation == "random":  # from scratch: the encoder's and the decoder's weights drawn anew
        reinitialise(loss)
    noise = WordNoise(settings.noise_type, settings.noise_ratio, vocabulary, model.tokenizer.mask_token)
    return Objective(loss, lambda s, rng: loss(
        [preprocess_on_device(model, [noise(x, rng) for x in s]), preprocess_on_device(model, s)], None))


@objective("simcse", SimCseSettings, SIMCSE)
def build_simcse(model, settings: SimCseSettings, source: str, vocabulary: tuple[str, ...]) -> Objective:
    loss = SimCseLoss(model, settings.temperature)
    return Objective(loss, lambda s, rng: loss([preprocess_on_device(model, s)]),
                     views=2, loss_on_views=lambda encoded, rng: loss.loss_on_views(*encoded.views[:2]))


@objective("simcse_bce", SimCseBceSettings, THESIS_WANG_2022)
def build_simcse_bce(model, settings: SimCseBceSettings, source: str, vocabulary: tuple[str, ...]) -> Objective:
    loss = SimCseBceLoss(model, settings.temperature)
    return Objective(loss, lambda s, rng: loss([preprocess_on_device(model, s)]),
                     views=2, loss_on_views=lambda encoded, rng: loss.loss_on_views(*encoded.views[:2]))


@objective("ct", ContrastiveTensionSettings, CONTRASTIVE_TENSION)
def build_ct(model, settings: ContrastiveTensionSettings, source: str, vocabulary: tuple[str, ...]) -> Objective:
    # lazy: sentence_transformers
    from sentsweep.losses.contrastive_tension import ContrastiveTensionBceLoss, contrastive_tension_pairs

    # The loss module holds the copied encoder model1, so the loop optimises and checkpoints it; model2 (the
    # shared model) is the one evaluated.
    loss = ContrastiveTensionBceLoss(model)

    def batch_loss(sentences: list[str], rng: random.Random) -> Tensor:
        firsts, seconds, labels = contrastive_tension_pairs(sentences, settings.negatives_per_positive, rng)
        features = [preprocess_on_device(model, firsts), preprocess_on_device(model, seconds)]
        return loss(features, torch.tensor(labels, dtype=torch.float, device=model.device))

    return Objective(loss, batch_loss)


@objective("ct_in_batch", ContrastiveTensionInBatchSettings, CONTRASTIVE_TENSION)
def build_ct_in_batch(model, settings: ContrastiveTensionInBatchSettings, source: str,
                      vocabulary: tuple[str, ...]) -> Objective:
    from sentence_transformers.sentence_transformer.losses import ContrastiveTensionLossInBatchNegatives

    loss = ContrastiveTensionLossInBatchNegatives(model, scale=1.0 / settings.temperature)
    return Objective(loss, lambda s, rng: loss([preprocess_on_device(model, s)], None))


@objective("nm", NoiseMatchingSettings, THESIS_REIML_2023)
def build_nm(model, settings: NoiseMatchingSettings, source: str, vocabulary: tuple[str, ...]) -> Objective:
    loss = NoiseMatchingLoss(model, settings.temperature)
    noise = WordNoise("delete", settings.nm_noise_ratio)
    return Objective(loss, lambda s, rng: loss(
        [preprocess_on_device(model, s), preprocess_on_device(model, [noise(x, rng) for x in s])]))


@objective("consert", ConsertSettings, CONSERT, dropout_free=True)
def build_consert(model, settings: ConsertSettings, source: str, vocabulary: tuple[str, ...]) -> Objective:
    loss = ConsertLoss(model, settings.augmentations, settings.augmentation_ratio, settings.temperature)
    return Objective(loss, lambda s, rng: loss.batch_loss(preprocess_on_device(model, s), _generator(rng)))


@objective("mlm", MlmSettings, BERT)
def build_mlm(model, settings: MlmSettings, source: str, vocabulary: tuple[str, ...]) -> Objective:
    loss = MaskedLanguageModelingLoss(model, source, settings.mlm_probability)
    return Objective(loss, lambda s, rng: loss.batch_loss(preprocess_on_device(model, s), _generator(rng)))


@objective("clm_ae", ClmAutoEncoderSettings, THESIS_WANG_2022)
def build_clm_ae(model, settings: ClmAutoEncoderSettings, source: str, vocabulary: tuple[str, ...]) -> Objective:
    loss = ClmAutoEncoderLoss(model, source, settings.decoder_layers)
    return Objective(loss, lambda s, rng: loss([preprocess_on_device(model, s)]),
                     views=1, loss_on_views=lambda encoded, rng: loss.batch_loss(encoded.features, encoded.views[0]))


@objective("mlm_ae", MlmAutoEncoderSettings, THESIS_WANG_2022)
def build_mlm_ae(model, settings: MlmAutoEncoderSettings, source: str, vocabulary: tuple[str, ...]) -> Objective:
    loss = MlmAutoEncoderLoss(model, source, settings.decoder_layers, settings.decoder_mask_ratio)
    return Objective(loss, lambda s, rng: loss.batch_loss(preprocess_on_device(model, s), _generator(rng)),
                     views=1, loss_on_views=lambda encoded, rng: loss.batch_loss(encoded.features, _generator(rng),
                                                                                 encoded.views[0]))
