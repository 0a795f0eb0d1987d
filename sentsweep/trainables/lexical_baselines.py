"""Lexical baselines as methods: TF-IDF cosine (scikit-learn) and Okapi BM25, scored like the trained methods.

Nothing is trained. TF-IDF takes its IDF statistics from the sweep's corpus; BM25 indexes the documents of
each evaluation (for STS pairs: the second sentences, each pair scored with its first sentence as the
query). The trial reports the same metric names as a trained method at step 0 (its dev score is also its
best dev score), and the same evaluation tasks, so it sits in the same tables.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from sentsweep.data import read_corpus, read_scored_pairs
from sentsweep.errors import InputError
from sentsweep.references import BM25, THESIS_MALMBERG_2021
from sentsweep.scorers import Bm25Scorer, TfidfScorer
from sentsweep.settings import Settings, required_input, setting
from sentsweep.tasks import build_tasks, evaluate_tasks
from sentsweep.tasks.sts import sts_spearman
from sentsweep.tasks.transfer import TRANSFER_TASKS
from sentsweep.trainables.session import TuneSession
from sentsweep.trainables.settings import Method, Trial


@dataclass(frozen=True)
class TfidfSettings(Settings):
    corpus: str = setting(help="sentences whose document frequencies give the IDF weights", source=required_input())


@dataclass(frozen=True)
class Bm25Settings(Settings):
    """BM25Okapi's k1 = 1.5, b = 0.75 (rank-bm25's defaults) are fixed in `sentsweep.bm25_index`."""


def check_bm25_tasks(trial: Trial) -> None:
    """BM25 has scores but no vectors, so it cannot run transfer classification."""
    transfer = [name for name in trial.evaluation.eval_tasks or {} if name in TRANSFER_TASKS]
    if transfer:
        raise InputError(f"method 'bm25' has no sentence vectors for the transfer task(s) {', '.join(transfer)}")


def train_lexical(trial: Trial, session=None) -> None:
    """A trial of a lexical baseline (see the module docstring)."""
    session = session or TuneSession()
    scorer = TfidfScorer(read_corpus(trial.settings.corpus)) if trial.method == "tfidf" else Bm25Scorer()
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
    with tempfile.TemporaryDirectory() as directory:
        session.report(metrics, Path(directory))


LEXICAL_METHODS = (
    Method("tfidf", TfidfSettings, train_lexical, THESIS_MALMBERG_2021, trains=False),
    Method("bm25", Bm25Settings, train_lexical, BM25, trains=False, check=check_bm25_tasks),
)
