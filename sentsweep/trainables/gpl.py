"""GPL, Generative Pseudo Labeling (the TSDAE + GPL report draft, 004; Wang et al. 2021), as a trainable.

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
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from sentsweep.data import read_corpus, read_scored_pairs
from sentsweep.errors import InputError
from sentsweep.models import POOLING_MODES, check_model_source, load_sentence_model, preprocess_on_device
from sentsweep.pair_models import CrossEncoderTeacher
from sentsweep.query_generation import check_query_generator, generate_queries, load_query_generator
from sentsweep.references import GPL, REPORT_TSDAE_GPL, THESIS_REIML_2023
from sentsweep.scorers import EmbeddingScorer
from sentsweep.settings import Settings, cited, project_choice, required_input, setting
from sentsweep.trainables.loop import TrainingSetup, run_trial, sample_corpus
from sentsweep.trainables.settings import Method, Trial
from sentsweep.trainables.teachers import teacher_correlations, train_teacher


@dataclass(frozen=True)
class GplSettings(Settings):
    generator: str = setting(help="seq2seq query-generation model (hub name or local folder)",
                             source=required_input())
    cross_encoder: str | None = setting(None, "a trained cross-encoder for the margins (none: train one from "
                                        "`model` on train_file)", project_choice("004 names none"))
    train_file: str | None = setting(None, "gold pairs to train the cross-encoder on when none is given",
                                     project_choice())
    retriever: str | None = setting(None, "dense retriever that mines negatives (none: `model` as released)",
                                    project_choice())
    pooling: str = setting("mean", "the bi-encoder's pooling", project_choice("004 is silent"),
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
                                  cited(THESIS_REIML_2023, "§5.2.1", "000's cross-encoder recipe; 004 is silent"),
                                  ge=1)
    teacher_batch_size: int = setting(16, "the cross-encoder's batch size",
                                      cited(THESIS_REIML_2023, "§5.1", "000's recipe; 004 is silent"), ge=1)
    teacher_lr: float = setting(2e-5, "the cross-encoder's learning rate",
                                cited(THESIS_REIML_2023, "§5.1", "000's recipe; 004 is silent"), gt=0)
    query_max_length: int = setting(64, "tokens per generated query", project_choice(), ge=1)

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


class MarginLabels:
    """GPL's pseudo labels delta = CE(Q, P+) - CE(Q, P-) on the cross-encoder's logits. CE(Q, P+) is scored
    for every query up front; CE(Q, P-) when the pair is first asked for, then remembered."""

    def __init__(self, teacher, queries: list[str], positives: list[str], passages: list[str]) -> None:
        self.teacher, self.queries, self.passages = teacher, queries, passages
        self.positive_logits = self._logits(queries, positives)
        self.negative_logits: dict[tuple[int, int], float] = {}

    def _logits(self, texts1: list[str], texts2: list[str]):
        device_type = "cuda" if torch.cuda.is_available() else "cpu"
        with torch.autocast(device_type, enabled=False):  # labels in fp32 under a bf16 training step too
            return self.teacher.predict(texts1, texts2, logits=True)

    def __call__(self, query_ids: list[int], negative_ids: list[int]) -> list[float]:
        new = list(dict.fromkeys(pair for pair in zip(query_ids, negative_ids) if pair not in self.negative_logits))
        if new:
            logits = self._logits([self.queries[q] for q, _ in new], [self.passages[n] for _, n in new])
            self.negative_logits.update(zip(new, map(float, logits)))
        return [float(self.positive_logits[q]) - self.negative_logits[(q, n)] for q, n in zip(query_ids, negative_ids)]


def build_gpl(trial: Trial) -> TrainingSetup:
    settings, training, seed = trial.settings, trial.training, trial.seed
    device = "cuda" if torch.cuda.is_available() else "cpu"
    passages = sample_corpus(read_corpus(training.corpus), training.sample_size, seed)

    generator, tokenizer = load_query_generator(settings.generator)
    generated = generate_queries(generator.to(device), tokenizer, passages, settings.queries_per_passage, seed,
                                 settings.query_max_length)
    del generator
    queries = [q for per_passage in generated for q in per_passage]
    owners = [i for i, per_passage in enumerate(generated) for _ in per_passage]

    retriever = load_sentence_model(settings.retriever or training.model, None, training.max_seq_length, device)
    candidates = mine_negatives(EmbeddingScorer(retriever), queries, owners, passages, settings.negatives_top_k)
    del retriever

    torch.manual_seed(seed)
    metrics = {}
    if settings.cross_encoder:
        teacher = CrossEncoderTeacher(settings.cross_encoder, training.max_seq_length, device)
    else:
        teacher = CrossEncoderTeacher(training.model, training.max_seq_length, device)
        gold = read_scored_pairs(settings.train_file, trial.evaluation.eval_format, "train")
        dev = read_scored_pairs(trial.evaluation.dev_file, trial.evaluation.eval_format, "dev")
        test = read_scored_pairs(trial.evaluation.test_file, trial.evaluation.eval_format, "test")
        fit = train_teacher(teacher, gold, settings.score_max, settings.teacher_epochs, settings.teacher_batch_size,
                            settings.teacher_lr, seed, dev=dev)
        _, metrics["teacher_sts_dev"], _ = teacher_correlations(teacher, dev)
        _, metrics["teacher_sts_test"], metrics["teacher_sts_test_pearson"] = teacher_correlations(teacher, test)
        metrics["teacher_best_epoch"] = fit.best_epoch
    labels = MarginLabels(teacher, queries, [passages[i] for i in owners], passages)
    examples = [(query, passages[owner], index) for index, (query, owner) in enumerate(zip(queries, owners))]

    torch.manual_seed(seed)
    model = load_sentence_model(training.model, settings.pooling, training.max_seq_length, device=device)
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
    return TrainingSetup(model=model, module=model, batch_loss=batch_loss, examples=examples, metrics=metrics)


GPL_METHOD = Method("gpl", GplSettings, lambda trial, session: run_trial(trial, build_gpl, session), GPL)
