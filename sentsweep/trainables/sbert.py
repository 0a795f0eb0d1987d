"""SBERT trainables: bi-encoders trained on labelled pairs (Reiml (2023), chapters 4-6; TSDAE paper, table 10).

- `sbert`: a bi-encoder trained on gold scored pairs with SBERT's CosineSimilarityLoss,
  L = mean_i (cos(u_i, v_i) - y_i)^2, y = score / score_max; with `sample_size` labelled pairs it is the
  in-domain supervised reference of the labelled-data intersection search.
- `sbert_nli`: a bi-encoder trained on NLI pairs (SNLI + MultiNLI, `nli_file`) with
  MultipleNegativesRankingLoss: each premise with one of its entailed hypotheses as positive and one of its
  contradicting hypotheses as hard negative (drawn with the trial's seed), the TSDAE paper's first NLI+STS step
  (§5.1); `sbert` with the cosine (MSE) loss on STS-B's train set is the second.

The loss setups (`cosine_similarity_setup`, `multiple_negatives_setup`) and the gold pairs (`gold_pairs`) serve
Augmented SBERT's bi-encoder too (`sentsweep.trainables.augsbert`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

import torch

from sentsweep.data import NliPremises, ScoredPairs, read_nli_file, read_scored_pairs
from sentsweep.errors import InputError
from sentsweep.models import POOLING_MODES, load_sentence_model, preprocess_on_device
from sentsweep.references import SBERT, THESIS_REIML_2023, TSDAE
from sentsweep.settings import Settings, cited, project_choice, required_input, setting
from sentsweep.trainables.loop import TrainingSetup, run_trial
from sentsweep.trainables.settings import Method, Trial


@dataclass(frozen=True)
class SbertSettings(Settings):
    """SBERT on gold scored pairs."""

    train_file: str = setting(help="the gold scored pairs (an STS benchmark sts-train.csv, SICK, a `datasets` "
                              "source, or a USEB data-train/<task>/supervised folder)", source=required_input())
    pooling: str = setting("mean", "how token vectors become the sentence vector",
                           cited(THESIS_REIML_2023, "§2.4.4", "SBERT found MEAN pooling best"), choices=POOLING_MODES)
    score_max: float = setting(5.0, "gold scores are divided by it to lie in [0, 1]",
                               cited(THESIS_REIML_2023, "§3.1", '"dividing each score by 5"'), gt=0)
    loss: Literal["cosine", "mnrl"] = setting(
        "cosine", "cosine: MSE of the cosine against the scaled score (sentence-transformers' CosineSimilarityLoss); "
        "mnrl: the pairs as positives, the batch's other second sentences as negatives "
        "(MultipleNegativesRankingLoss)",
        cited(TSDAE, "§5.1", '"For AskUbuntu, CQADupStack and SciDocs ... trained with MNRL ... For TwitterPara ... '
              'the MSE loss"; STS-B\'s scored pairs: cosine'))
    mnrl_scale: float = setting(
        20.0, "MNRL's similarity scale: softmax over scale x cosine",
        project_choice("TSDAE writes MNRL with a cosine sigma and no scale; sentence-transformers' MNRL, which TSDAE "
                       "trained with (App. B), multiplies the cosine by 20"), gt=0)


@dataclass(frozen=True)
class NliSbertSettings(Settings):
    """SBERT on NLI pairs: entailments as positives, contradictions as hard negatives, MNRL."""

    nli_file: str = setting(help="NLI pairs in the format of sentence-transformers' AllNLI.tsv.gz (SNLI + MultiNLI; "
                            "tab-separated split, sentence1, sentence2, label; gzipped or not): its train split",
                            source=required_input())
    pooling: str = setting("mean", "how token vectors become the sentence vector",
                           cited(THESIS_REIML_2023, "§2.4.4", "SBERT found MEAN pooling best"), choices=POOLING_MODES)
    mnrl_scale: float = setting(
        20.0, "MNRL's similarity scale: softmax over scale x cosine",
        project_choice("TSDAE writes MNRL with a cosine sigma and no scale; sentence-transformers' MNRL, which TSDAE "
                       "trained with (App. B), multiplies the cosine by 20"), gt=0)


def check_sbert_nli(trial: Trial) -> None:
    read_nli_file(trial.settings.nli_file)  # a missing or malformed file fails before anything is trained


def hard_negative_triplets(premises: NliPremises, seed: int) -> list[tuple[str, str, str]]:
    """(premise, entailed hypothesis, contradicting hypothesis) for each premise that has both, one of each drawn
    with `seed` (sentence-transformers' NLI recipe, training_nli_v2.py: "Entailments are positive pairs and the
    contradiction on AllNLI dataset is added as a hard negative"; TSDAE §5.1 names MNRL and the data only)."""
    rng = random.Random(seed)
    return [(premise, rng.choice(entailed), rng.choice(premises.contradictions[premise]))
            for premise, entailed in premises.entailments.items() if premise in premises.contradictions]


def gold_pairs(trial: Trial) -> ScoredPairs:
    """The gold training pairs, `sample_size` of them drawn with the trial's seed when given; a size above the
    file's pairs is an `InputError` (the trial would train on fewer pairs than its size says; a sweep refuses it
    before launch, `sentsweep.sweep.launch.data_sizes`)."""
    pairs = read_scored_pairs(trial.settings.train_file, trial.evaluation.eval_format, "train")
    size, seed = trial.training.sample_size, trial.seed
    if size is not None and size > len(pairs):
        raise InputError(f"sample_size {size} exceeds the {len(pairs)} labelled pairs of {trial.settings.train_file}")
    if size is None or size == len(pairs):
        return pairs
    chosen = sorted(random.Random(seed).sample(range(len(pairs)), size))
    return ScoredPairs([pairs.sentences1[i] for i in chosen], [pairs.sentences2[i] for i in chosen],
                       [pairs.scores[i] for i in chosen], f"{pairs.source}[{size} of {len(pairs)}]")


def cosine_similarity_setup(model, examples: list[tuple[str, str, float]],
                            metrics: dict | None = None) -> TrainingSetup:
    """A bi-encoder trained on (sentence1, sentence2, label) with sentence-transformers' CosineSimilarityLoss."""
    from sentence_transformers.sentence_transformer.losses import CosineSimilarityLoss

    loss = CosineSimilarityLoss(model)

    def batch_loss(batch, rng):
        first = preprocess_on_device(model, [example[0] for example in batch])
        second = preprocess_on_device(model, [example[1] for example in batch])
        labels = torch.tensor([example[2] for example in batch], dtype=torch.float32, device=model.device)
        return loss([first, second], labels)

    return TrainingSetup(model=model, module=model, batch_loss=batch_loss, examples=examples, metrics=metrics or {})


def trial_device() -> str:
    """Where a trial trains: its GPU when it has one."""
    return "cuda" if torch.cuda.is_available() else "cpu"


def multiple_negatives_setup(model, pairs: list[tuple[str, ...]], scale: float,
                             metrics: dict | None = None) -> TrainingSetup:
    """A bi-encoder trained on relevant pairs with sentence-transformers' MultipleNegativesRankingLoss:
    -1/M sum_i log(exp(s cos(f(x_i), f(y_i))) / sum_j exp(s cos(f(x_i), f(y_j)))) over a batch of M pairs, the
    TSDAE paper's in-domain SBERT (§5.1, its MNRL formula with sigma = cosine, App. B) with scale s. Triplets
    (x, y, z) add each z as a hard negative: the sum over j then runs over the batch's y and z."""
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    loss = MultipleNegativesRankingLoss(model, scale=scale)

    def batch_loss(batch, rng):
        return loss([preprocess_on_device(model, list(column)) for column in zip(*batch)], None)

    return TrainingSetup(model=model, module=model, batch_loss=batch_loss, examples=pairs, metrics=metrics or {})


def build_sbert(trial: Trial) -> TrainingSetup:
    settings, training = trial.settings, trial.training
    pairs = gold_pairs(trial)
    model = load_sentence_model(training.model, settings.pooling, training.max_seq_length, device=trial_device(),
                                dropout=training.dropout)
    if settings.loss == "mnrl":
        positives = [(a, b) for a, b in zip(pairs.sentences1, pairs.sentences2)]
        return multiple_negatives_setup(model, positives, settings.mnrl_scale, {"gold_pairs": len(positives)})
    examples = [(a, b, s / settings.score_max) for a, b, s in zip(pairs.sentences1, pairs.sentences2, pairs.scores)]
    return cosine_similarity_setup(model, examples, {"gold_pairs": len(examples)})


def build_sbert_nli(trial: Trial) -> TrainingSetup:
    settings, training = trial.settings, trial.training
    triplets = hard_negative_triplets(read_nli_file(settings.nli_file), trial.seed)
    model = load_sentence_model(training.model, settings.pooling, training.max_seq_length, device=trial_device(),
                                dropout=training.dropout)
    return multiple_negatives_setup(model, triplets, settings.mnrl_scale, {"nli_triplets": len(triplets)})

def reads_no_corpus(trial: Trial) -> tuple[str, ...]:
    """A method trained on labelled pairs (or NLI triplets) alone: the corpus is not its data."""
    return ("corpus",)


SBERT_METHODS = (
    Method("sbert", SbertSettings, lambda trial, session: run_trial(trial, build_sbert, session), SBERT,
           unread_data=reads_no_corpus),
    Method("sbert_nli", NliSbertSettings, lambda trial, session: run_trial(trial, build_sbert_nli, session), SBERT,
           check=check_sbert_nli, unread_data=reads_no_corpus),
)
