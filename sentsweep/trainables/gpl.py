"""GPL, Generative Pseudo Labeling (the TSDAE + GPL report draft; Wang et al. 2021), as a trainable.

1. Queries: `queries_per_passage` (3) queries per passage of the corpus from a seq2seq `generator`.
2. Negative mining: a dense `retriever` (default: `model` as released) retrieves the `negatives_top_k` (50)
   passages closest to each query; those other than the query's own passage are its negative candidates.
   Each time a query is in a training batch (once per epoch), its negative P- is drawn afresh among them,
   with the step's seeded generator, as GPL's training data draws a new negative for every training example
   (so two epochs give a query different negatives, and a resumed trial draws the same ones).
3. Pseudo labels: a cross-encoder scores (Q, P+) and (Q, P-), delta = CE(Q, P+) - CE(Q, P-) on logits, each
   pair once (in fp32, whatever the training precision), when it is first drawn. The cross-encoder is
   `cross_encoder` (a trained one), or one trained from `model` on the gold pairs, kept at its best epoch on
   dev (Reiml (2023) §5.1); it stays loaded while the bi-encoder trains.
4. The bi-encoder is trained with MarginMSE (sentence-transformers' MarginMSELoss, dot-product scores):
   L = mean_i ((q_i . p+_i - q_i . p-_i) - delta_i)^2.

With the preparation cache on (`sentsweep.preparation_cache`), the trials of a sweep share the stages
`GPL_STAGES`: the generated queries (their key holds the seed, which samples them), the mined negatives, the
trained cross-encoder (seeded: its new head and its batches) and the positive logits CE(Q, P+) (no seed: both are
deterministic given their inputs, which hold the queries). The seed of the preparation (the corpus sample, the
queries, the cross-encoder) is the trial's, or `preparation_seed` where set: then every trial of a sweep shares one
preparation, as GPL's toolkit reuses the data it generated on later runs, and the seeds vary the training alone.
The negatives' logits are scored as they are drawn, in the trial: scoring every mined candidate up front would
cost more than a trial draws (3 x 50 per passage).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from sentsweep.data import ScoredPairs, read_corpus, read_scored_pairs
from sentsweep.errors import InputError
from sentsweep.models import POOLING_MODES, check_model_source, load_sentence_model, preprocess_on_device
from sentsweep.pair_models import CrossEncoderTeacher
from sentsweep.preparation_cache import PreparationCache, Stage
from sentsweep.preparation_cache.digests import pairs_digest, source_digest, value_digest
from sentsweep.query_generation import check_query_generator, generate_queries, load_query_generator
from sentsweep.references import GPL, REPORT_TSDAE_GPL, THESIS_REIML_2023
from sentsweep.scorers import EmbeddingScorer
from sentsweep.settings import Settings, cited, project_choice, required_input, setting
from sentsweep.trainables.loop import TrainingSetup, run_trial, sample_corpus
from sentsweep.trainables.settings import Method, Trial
from sentsweep.trainables.teachers import (
    in_fresh_memory,
    load_teacher,
    save_teacher,
    teacher_correlations,
    train_teacher,
)

GPL_QUERIES = Stage("gpl_queries", 1, "the queries generated for the passages", seeded=True)
GPL_NEGATIVES = Stage("gpl_negatives", 1, "each query's mined negative candidates", seeded=False)
GPL_TEACHER = Stage("gpl_teacher", 1, "the cross-encoder trained on the gold pairs (without cross_encoder)",
                    seeded=True)
GPL_MARGINS = Stage("gpl_margins", 1, "the cross-encoder's logit CE(Q, P+) of each query and its passage",
                    seeded=False)
GPL_STAGES = (GPL_QUERIES, GPL_NEGATIVES, GPL_TEACHER, GPL_MARGINS)


@dataclass(frozen=True)
class GplSettings(Settings):
    generator: str = setting(help="seq2seq query-generation model (hub name or local folder)",
                             source=required_input())
    cross_encoder: str | None = setting(None, "a trained cross-encoder for the margins (none: train one from "
                                        "`model` on train_file)", project_choice("TSDAE+GPL draft names none"))
    train_file: str | None = setting(None, "gold pairs to train the cross-encoder on when none is given",
                                     project_choice())
    retriever: str | None = setting(None, "dense retriever that mines negatives (none: `model` as released)",
                                    project_choice())
    pooling: str = setting("mean", "the bi-encoder's pooling", project_choice("TSDAE+GPL draft is silent"),
                           choices=POOLING_MODES)
    queries_per_passage: int = setting(3, "queries generated per passage",
                                       cited(REPORT_TSDAE_GPL, "GPL", '"Three queries are generated for each input '
                                             'sentence."'), ge=1)
    negatives_top_k: int = setting(50, "retrieved passages a negative is drawn from",
                                   cited(REPORT_TSDAE_GPL, "GPL", '"50 of the most similar sentences are retrieved"'),
                                   ge=1)
    score_max: float = setting(5.0, "gold scores are divided by it (the cross-encoder's training labels)",
                               cited(THESIS_REIML_2023, "§3.1", '"dividing each score by 5"'), gt=0)
    teacher_epochs: int = setting(3, "epochs of the cross-encoder on the gold pairs",
                                  cited(THESIS_REIML_2023, "§5.2.1",
                                        "Reiml 2023's cross-encoder recipe; TSDAE+GPL draft is silent"),
                                  ge=1)
    teacher_batch_size: int = setting(16, "the cross-encoder's batch size",
                                      cited(THESIS_REIML_2023, "§5.1",
                                            "Reiml 2023's recipe; TSDAE+GPL draft is silent"), ge=1)
    teacher_lr: float = setting(2e-5, "the cross-encoder's learning rate",
                                cited(THESIS_REIML_2023, "§5.1", "Reiml 2023's recipe; TSDAE+GPL draft is silent"),
                                gt=0)
    query_max_length: int = setting(64, "tokens per generated query", project_choice(), ge=1)
    preparation_seed: int | None = setting(
        None, "seed of the data preparation: the corpus sample, the generated queries and the trained cross-encoder "
        "(none: the trial's seed, each seed prepares its own data; a number: one preparation shared by every trial "
        "of the sweep, whatever its seed)",
        project_choice("TSDAE+GPL draft is silent. None keeps the preparation's randomness in the seed-to-seed "
                       "spread. GPL's toolkit (UKPLab/gpl, gpl/train.py) generates queries, hard negatives and pseudo "
                       "labels once into path_to_generated_data and reuses them on later runs; a number does the "
                       "same"), ge=0)

    def __post_init__(self) -> None:
        check_query_generator(self.generator)
        if self.cross_encoder:
            check_model_source(self.cross_encoder)
        elif not self.train_file:
            raise InputError("method 'gpl' needs cross_encoder (a trained cross-encoder) or train_file (gold pairs "
                             "to train one)")


def mine_negatives(retriever_scorer, queries: list[str], owners: list[int], passages: list[str],
                   top_k: int) -> list[list[int]]:
    """For each query, its `top_k` retrieved passages that are not its own (`owners`), best first: the
    candidates its negatives are drawn from."""
    if len(passages) < 2:
        raise InputError(f"GPL needs at least 2 passages to mine negatives, got {len(passages)}")
    _, retrieved = retriever_scorer.top_k(queries, passages, top_k + 1)
    return [[int(p) for p in row if int(p) != owner][:top_k] for owner, row in zip(owners, retrieved)]


def draw_negatives(candidates: list[list[int]], query_ids: list[int], rng: random.Random) -> list[int]:
    """A negative for each query of `query_ids`, drawn uniformly among its mined candidates with `rng`."""
    return [rng.choice(candidates[query]) for query in query_ids]


def cross_encoder_logits(teacher, texts1: list[str], texts2: list[str]) -> list[float]:
    """The cross-encoder's logits of the pairs, in fp32 (labels in fp32 under a bf16 training step too)."""
    device_type = "cuda" if torch.cuda.is_available() else "cpu"
    with torch.autocast(device_type, enabled=False):
        return [float(logit) for logit in teacher.predict(texts1, texts2, logits=True)]


class MarginLabels:
    """GPL's pseudo labels delta = CE(Q, P+) - CE(Q, P-) on the cross-encoder's logits. CE(Q, P+) is scored
    for every query up front (or given: `positive_logits`); CE(Q, P-) when the pair is first asked for, then
    remembered."""

    def __init__(self, teacher, queries: list[str], positives: list[str], passages: list[str],
                 positive_logits: list[float] | None = None) -> None:
        self.teacher, self.queries, self.passages = teacher, queries, passages
        self.positive_logits = (cross_encoder_logits(teacher, queries, positives) if positive_logits is None
                                else positive_logits)
        self.negative_logits: dict[tuple[int, int], float] = {}

    def __call__(self, query_ids: list[int], negative_ids: list[int]) -> list[float]:
        new = list(dict.fromkeys(pair for pair in zip(query_ids, negative_ids) if pair not in self.negative_logits))
        if new:
            logits = cross_encoder_logits(self.teacher, [self.queries[q] for q, _ in new],
                                          [self.passages[n] for _, n in new])
            self.negative_logits.update(zip(new, logits))
        return [float(self.positive_logits[q]) - self.negative_logits[(q, n)] for q, n in zip(query_ids, negative_ids)]


def generated_queries(settings: GplSettings, passages: list[str], seed: int, device: str) -> list[list[str]]:
    """`queries_per_passage` queries for each passage, sampled with the trial's seed."""
    generator, tokenizer = load_query_generator(settings.generator)
    return generate_queries(generator.to(device), tokenizer, passages, settings.queries_per_passage, seed,
                            settings.query_max_length)


def mined_negatives(source: str, max_seq_length: int, queries: list[str], owners: list[int], passages: list[str],
                    top_k: int, device: str) -> list[list[int]]:
    """Each query's negative candidates, retrieved by the dense retriever `source` (with its own pooling)."""
    retriever = load_sentence_model(source, None, max_seq_length, device)
    return mine_negatives(EmbeddingScorer(retriever), queries, owners, passages, top_k)


def trained_cross_encoder(trial: Trial, gold: ScoredPairs, dev: ScoredPairs, seed: int, device: str) -> tuple:
    """(the cross-encoder trained from `model` on the gold pairs with `seed`, kept at its best epoch on dev, its
    TeacherFit)."""
    settings, training = trial.settings, trial.training
    torch.manual_seed(seed)
    teacher = CrossEncoderTeacher(training.model, training.max_seq_length, device)
    fit = train_teacher(teacher, gold, settings.score_max, settings.teacher_epochs, settings.teacher_batch_size,
                        settings.teacher_lr, seed, dev=dev)
    in_fresh_memory(teacher)  # as a teacher loaded from the cache is
    return teacher, fit


def build_gpl(trial: Trial) -> TrainingSetup:
    """GPL's preparation (each stage through the preparation cache: `GPL_STAGES`) and MarginMSE training setup."""
    settings, training, seed = trial.settings, trial.training, trial.seed
    preparation_seed = seed if settings.preparation_seed is None else settings.preparation_seed
    device = "cuda" if torch.cuda.is_available() else "cpu"
    cache = PreparationCache(training.preparation_cache)
    passages = sample_corpus(read_corpus(training.corpus_file()), training.sample_size, preparation_seed)

    generated = cache.get_or_compute(GPL_QUERIES, lambda: {
        "generator": source_digest(settings.generator), "passages": value_digest(passages),
        "per_passage": settings.queries_per_passage, "max_length": settings.query_max_length,
        "seed": preparation_seed},
        lambda: generated_queries(settings, passages, preparation_seed, device))
    queries = [q for per_passage in generated for q in per_passage]
    owners = [i for i, per_passage in enumerate(generated) for _ in per_passage]

    retriever = settings.retriever or training.model
    candidates = cache.get_or_compute(GPL_NEGATIVES, lambda: {
        "retriever": source_digest(retriever), "max_seq_length": training.max_seq_length,
        "queries": value_digest(generated), "passages": value_digest(passages), "top_k": settings.negatives_top_k},
        lambda: mined_negatives(retriever, training.max_seq_length, queries, owners, passages,
                                settings.negatives_top_k, device))

    metrics = {}
    if settings.cross_encoder:
        teacher = CrossEncoderTeacher(settings.cross_encoder, training.max_seq_length, device)

        def teacher_identity() -> str:
            return source_digest(settings.cross_encoder)
    else:
        gold = read_scored_pairs(settings.train_file, trial.evaluation.eval_format, "train")
        dev = read_scored_pairs(trial.evaluation.dev_file, trial.evaluation.eval_format, "dev")
        test = read_scored_pairs(trial.evaluation.test_file, trial.evaluation.eval_format, "test")

        def teacher_inputs() -> dict:
            return {"model": source_digest(training.model), "max_seq_length": training.max_seq_length,
                    "gold": pairs_digest(gold), "dev": pairs_digest(dev), "score_max": settings.score_max,
                    "epochs": settings.teacher_epochs, "batch_size": settings.teacher_batch_size,
                    "lr": settings.teacher_lr, "seed": preparation_seed}

        teacher, fit = cache.get_or_compute(
            GPL_TEACHER, teacher_inputs, lambda: trained_cross_encoder(trial, gold, dev, preparation_seed, device),
            save_teacher,
            lambda folder: load_teacher("ce", folder, training.max_seq_length, device))
        _, metrics["teacher_sts_dev"], _ = teacher_correlations(teacher, dev)
        _, metrics["teacher_sts_test"], metrics["teacher_sts_test_pearson"] = teacher_correlations(teacher, test)
        metrics["teacher_best_epoch"] = fit.best_epoch

        def teacher_identity() -> str:
            return cache.key(GPL_TEACHER, teacher_inputs())
    positives = [passages[i] for i in owners]
    positive_logits = cache.get_or_compute(GPL_MARGINS, lambda: {
        "teacher": teacher_identity(), "max_seq_length": training.max_seq_length, "queries": value_digest(queries),
        "positives": value_digest(positives)}, lambda: cross_encoder_logits(teacher, queries, positives))
    labels = MarginLabels(teacher, queries, positives, passages, positive_logits)
    examples = [(query, passages[owner], index) for index, (query, owner) in enumerate(zip(queries, owners))]

    torch.manual_seed(seed)
    model = load_sentence_model(training.model, settings.pooling, training.max_seq_length, device=device,
                                dropout=training.dropout)
    from sentence_transformers.sentence_transformer.losses import MarginMSELoss

    loss = MarginMSELoss(model)

    def batch_loss(batch, rng):
        query_ids = [example[2] for example in batch]
        negatives = draw_negatives(candidates, query_ids, rng)
        texts = ([example[0] for example in batch], [example[1] for example in batch], [passages[n] for n in negatives])
        features = [preprocess_on_device(model, part) for part in texts]
        margins = torch.tensor(labels(query_ids, negatives), dtype=torch.float32, device=model.device)
        return loss(features, margins)

    metrics["gpl_queries"] = len(examples)
    return TrainingSetup(model=model, module=model, batch_loss=batch_loss, examples=examples, metrics=metrics,
                         cache_uses=cache.used)


GPL_METHOD = Method("gpl", GplSettings, lambda trial, session: run_trial(trial, build_gpl, session), GPL,
                    cached_stages=GPL_STAGES)
