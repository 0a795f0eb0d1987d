"""Lexical baselines as a method: TF-IDF cosine similarity, scored like the trained methods.

Nothing is trained; the IDF statistics come from the sweep's corpus. The trial reports the same metric
names as a trained method at step 0 (its dev score is also its best dev score), so it sits in the same tables.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from sentsweep.data import read_corpus, read_scored_pairs
from sentsweep.evaluation import spearman
from sentsweep.lexical import tfidf_similarities
from trainables.session import TuneSession

LEXICAL_METHODS = ("tfidf",)


def validate_lexical_config(config: dict) -> None:
    """Nothing to check beyond the shared settings: TF-IDF has no hyperparameter in the sweeps."""


def lexical_sts(config: dict, split: str, corpus: list[str]) -> float:
    """100 x Spearman of the TF-IDF cosines (IDF from `corpus`) of a split's pairs against their gold scores."""
    pairs = read_scored_pairs(config[f"{split}_file"], config.get("eval_format", "stsb"), split)
    similarities = tfidf_similarities(pairs.sentences1, pairs.sentences2, corpus)
    return 100.0 * spearman(similarities, np.asarray(pairs.scores))


def train_lexical(config: dict, session=None) -> None:
    """Ray Tune function trainable of the TF-IDF baseline (see the module docstring)."""
    session = session or TuneSession()
    corpus = read_corpus(config["corpus"])
    dev, test = lexical_sts(config, "dev", corpus), lexical_sts(config, "test", corpus)
    metrics = {"step": 0, "sts_dev": dev, "best_sts_dev": dev, "sts_test_at_best_dev": test, "best_step": 0}
    with tempfile.TemporaryDirectory() as directory:
        session.report(metrics, Path(directory))
