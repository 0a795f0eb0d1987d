"""Lexical baselines as methods: TF-IDF cosine (scikit-learn) and Okapi BM25, scored like the trained methods.

Nothing is trained. TF-IDF takes its IDF statistics from the sweep's corpus; BM25 indexes the documents of
each evaluation (for STS pairs: the second sentences, each pair scored with its first sentence as the
query). The trial reports the same metric names as a trained method at step 0 (its dev score is also its
best dev score), and the same evaluation tasks, so it sits in the same tables.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from sentsweep.data import read_corpus, read_scored_pairs
from sentsweep.errors import InputError
from sentsweep.scorers import Bm25Scorer, TfidfScorer
from sentsweep.tasks import build_tasks, evaluate_tasks
from sentsweep.tasks.sts import sts_spearman
from sentsweep.tasks.transfer import TRANSFER_TASKS
from sentsweep.trainables.session import TuneSession

LEXICAL_METHODS = ("tfidf", "bm25")


def validate_lexical_config(config: dict) -> None:
    """BM25 has scores but no vectors, so it cannot run transfer classification."""
    if config["method"] == "bm25":
        transfer = [name for name in config.get("eval_tasks") or {} if name in TRANSFER_TASKS]
        if transfer:
            raise InputError(f"method 'bm25' has no sentence vectors for the transfer task(s) {', '.join(transfer)}")


def lexical_scorer(config: dict):
    return TfidfScorer(read_corpus(config["corpus"])) if config["method"] == "tfidf" else Bm25Scorer()


def train_lexical(config: dict, session=None) -> None:
    """Ray Tune function trainable of the lexical baselines (see the module docstring)."""
    session = session or TuneSession()
    scorer = lexical_scorer(config)
    dev, test = (
        sts_spearman(scorer, read_scored_pairs(config[f"{split}_file"], config.get("eval_format", "stsb"), split))
        for split in ("dev", "test")
    )
    metrics = {"step": 0, "sts_dev": dev, "best_sts_dev": dev, "sts_test_at_best_dev": test, "best_step": 0}
    tasks = build_tasks(config.get("eval_tasks") or {})
    if tasks:
        final = evaluate_tasks(tasks, scorer, "test")
        metrics.update(final.metrics)
        metrics["per_query"] = final.per_query
    with tempfile.TemporaryDirectory() as directory:
        session.report(metrics, Path(directory))
