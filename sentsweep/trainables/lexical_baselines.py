"""Lexical baselines as methods: TF-IDF cosine (scikit-learn), BM25, and BM25 rescored with a dense encoder,
scored like the trained methods.

Nothing is trained. TF-IDF takes its IDF statistics from the sweep's corpus; BM25 indexes the documents of
each evaluation (for STS pairs: the second sentences, each pair scored with its first sentence as the
query). `bm25_dense` adds alpha x the cosine of the `model`'s embeddings to BM25 (Wang (2022), eq. 5.1; see
`sentsweep.scorers.Bm25DenseScorer`). The trial reports the same metric names as a trained method at step 0
(its dev score is also its best dev score), and the same evaluation tasks, so it sits in the same tables.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch

from sentsweep.bm25_index import BM25_VARIANTS
from sentsweep.data import read_corpus, read_scored_pairs
from sentsweep.errors import InputError
from sentsweep.models import POOLING_MODES, check_model_source, load_sentence_model
from sentsweep.references import BM25, THESIS_MALMBERG_2021, THESIS_WANG_2022
from sentsweep.scorers import Bm25DenseScorer, Bm25Scorer, EmbeddingScorer, TfidfScorer
from sentsweep.settings import Settings, cited, project_choice, required_input, setting
from sentsweep.tasks import build_tasks, evaluate_tasks
from sentsweep.tasks.sts import sts_spearman
from sentsweep.tasks.transfer import TRANSFER_TASKS
from sentsweep.trainables.session import TuneSession
from sentsweep.trainables.settings import Method, Trial

# Wang 2022 §5.3.2 / Fig. 5.2: the alphas of eq. 5.1 the thesis compares (0 is BM25 alone), for a sweep axis.
BM25_DENSE_ALPHAS = (0, 1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 120)


@dataclass(frozen=True)
class TfidfSettings(Settings):
    corpus: str = setting(help="sentences whose document frequencies give the IDF weights", source=required_input())
    max_features: int | None = setting(
        None, "keep only this many terms, the most frequent in the corpus (none: the full vocabulary)",
        cited(THESIS_MALMBERG_2021, "§3.3.3, Table 3.1", 'both configurations: Table 3.1\'s "max size vocab" and '
              '§3.3.3\'s "restricting the features used by the algorithm to the top 1024 features ordered by term '
              'frequency across the corpus"'), ge=1)
    lemmatize: bool = setting(
        False, "map words to their English lemma before counting (simplemma; the `lemmatize` extra)",
        project_choice("Malmberg 2021 §3.3.3 compares TF-IDF with and without lemmatisation (NLTK 3.5, whose WordNet "
                       "data no package registry serves); simplemma's dictionary maps walking -> walk, as Malmberg "
                       "2021's example"))


def _variant_defaults(parameter: str) -> str:
    """"okapi 1.5 (rank-bm25), lucene 1.2 (TSDAE App. B), ...": each variant's default and where it comes from."""
    def origin(source) -> str:
        return f"{source.reference.label} {source.where}" if source.reference else "rank-bm25"

    return ", ".join(f"{name} {getattr(variant, parameter)} ({origin(variant.source)})"
                     for name, variant in BM25_VARIANTS.items())


@dataclass(frozen=True)
class Bm25Settings(Settings):
    """The BM25 formula and its parameters (`sentsweep.bm25_index`: each variant's formula and cited defaults)."""

    bm25_variant: Literal["okapi", "lucene", "pyserini"] = setting(
        "okapi", "okapi: rank-bm25's BM25Okapi; lucene: Lucene/Elasticsearch's BM25Similarity (idf "
        "ln(1 + (N - n + 0.5) / (n + 0.5)), no k1 + 1 factor since Lucene 8) at its defaults; pyserini: the same "
        "formula at Pyserini's defaults",
        project_choice("okapi keeps earlier runs comparable; lucene is TSDAE App. B's Elasticsearch BM25, pyserini "
                       "Wang 2022 §5.2.1's"))
    k1: float | None = setting(
        None, "term-frequency saturation k1 (none: the variant's default)",
        project_choice(f"the variant's cited default: {_variant_defaults('k1')}"), ge=0)
    b: float | None = setting(
        None, "document-length normalisation b (none: the variant's default)",
        project_choice(f"the variant's cited default: {_variant_defaults('b')}"), ge=0, le=1)


@dataclass(frozen=True, kw_only=True)
class Bm25DenseSettings(Bm25Settings):
    """BM25 + alpha x cosine (Wang 2022 eq. 5.1); the BM25 settings as `bm25`'s, but Pyserini's by default (Wang
    2022's)."""

    bm25_variant: Literal["okapi", "lucene", "pyserini"] = setting(
        "pyserini", Bm25Settings.__dataclass_fields__["bm25_variant"].metadata["help"],
        cited(THESIS_WANG_2022, "§5.2.1, §5.3.2", "eq. 5.1 rescores the thesis's Pyserini BM25"))
    model: str = setting(help="the dense encoder: Hugging Face model name or local folder", source=required_input())
    alpha: float = setting(
        20.0, "weight of the cosine in BM25 + alpha x cosine (0: BM25 alone)",
        cited(THESIS_WANG_2022, "§5.3.2, Table 5.8, Fig. 5.2", '"we observe α = 20 has the best performance on '
              'eProduct task" (of 0, 1, 5, 10, 20, ..., 120)'), ge=0)
    rescore_depth: int | None = setting(
        1000, "retrieval: how many of BM25's best hits are rescored (none: all of them)",
        cited(THESIS_WANG_2022, "§5.3.2", '"We rescore BM25 top1000 retrieval results"'), ge=1)
    encoder_pooling: str | None = setting(
        None, "the encoder's pooling (none: the model's own, as released)", project_choice(), choices=POOLING_MODES)
    encoder_max_seq_length: int = setting(128, "tokens per text for the encoder; longer texts are truncated",
                                          project_choice(), ge=1)


def check_no_transfer_tasks(trial: Trial) -> None:
    """BM25 has scores but no vectors, so it cannot run transfer classification."""
    transfer = [name for name in trial.evaluation.eval_tasks or {} if name in TRANSFER_TASKS]
    if transfer:
        raise InputError(f"method {trial.method!r} has no sentence vectors for the transfer task(s) "
                         f"{', '.join(transfer)}")



def check_bm25_dense(trial: Trial) -> None:
    check_no_transfer_tasks(trial)
    check_model_source(trial.settings.model)


def lexical_scorer(trial: Trial):
    """The scorer of a lexical baseline's trial."""
    settings = trial.settings
    if trial.method == "tfidf":
        return TfidfScorer(read_corpus(settings.corpus), settings.max_features, settings.lemmatize)
    if trial.method == "bm25":
        return Bm25Scorer(settings.bm25_variant, settings.k1, settings.b)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = load_sentence_model(settings.model, settings.encoder_pooling, settings.encoder_max_seq_length, device)
    encoder = EmbeddingScorer(model)
    return Bm25DenseScorer(encoder, settings.alpha, settings.rescore_depth, settings.bm25_variant, settings.k1,
                           settings.b)


def train_lexical(trial: Trial, session=None) -> None:
    """A trial of a lexical baseline (see the module docstring)."""
    report_untrained_scores(trial, lexical_scorer(trial), session)


def report_untrained_scores(trial: Trial, scorer, session=None) -> None:
    """Report the scores of a method that trains nothing: STS dev and test and the evaluation tasks' test
    metrics, under a trained method's metric names at step 0."""
    session = session or TuneSession()
    evaluation = trial.evaluation
    dev, test = (
        sts_spearman(scorer, read_scored_pairs(getattr(evaluation, f"{split}_file"), evaluation.eval_format, split))
        for split in ("dev", "test")
    )
    metrics = {"step": 0, "sts_dev": dev, "best_sts_dev": dev, "sts_test_at_best_dev": test, "best_step": 0}
    tasks = build_tasks(evaluation.eval_tasks or {})
    if tasks:
        final = evaluate_tasks(tasks, scorer, "test")
        metrics.update(final.metrics)
        metrics["per_query"] = final.per_query
        if final.artifacts:
            metrics["artifacts"] = final.artifacts
    with tempfile.TemporaryDirectory() as directory:
        session.report(metrics, Path(directory))


LEXICAL_METHODS = (
    Method("tfidf", TfidfSettings, train_lexical, THESIS_MALMBERG_2021, trains=False),
    Method("bm25", Bm25Settings, train_lexical, BM25, trains=False, check=check_no_transfer_tasks),
    Method("bm25_dense", Bm25DenseSettings, train_lexical, THESIS_WANG_2022, trains=False, check=check_bm25_dense),
)
