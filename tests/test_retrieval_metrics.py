"""Ranking metrics: hand-checkable examples, and scikit-learn on larger random cases."""

import math

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, ndcg_score

from sentsweep.retrieval_metrics import (
    average_precision,
    mean_average_precision,
    mrr_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    top1_accuracy,
)

RANKED = [["d3", "d1", "d7", "d2"], ["d5", "d6", "d4", "d9"]]
RELEVANT = [{"d1", "d2"}, {"d8"}]


def test_by_hand():
    assert recall_at_k(RANKED, RELEVANT, 2) == pytest.approx((1 / 2 + 0) / 2)
    assert recall_at_k(RANKED, RELEVANT, 4) == pytest.approx((2 / 2 + 0) / 2)
    assert mrr_at_k(RANKED, RELEVANT, 10) == pytest.approx((1 / 2 + 0) / 2)
    first = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(RANKED, RELEVANT, 10) == pytest.approx(first / 2)
    assert precision_at_k(RANKED, RELEVANT, 2) == pytest.approx((1 / 2 + 0) / 2)
    assert average_precision([0.9, 0.8, 0.7, 0.6], [0, 1, 0, 1]) == pytest.approx((1 / 2 + 2 / 4) / 2)
    # trec_eval's MAP: a third relevant document that was never ranked still counts in the denominator
    assert average_precision([0.9, 0.8, 0.7, 0.6], [0, 1, 0, 1], relevant_total=3) == pytest.approx((1 / 2 + 2 / 4) / 3)
    assert average_precision([0.5, 0.5, 0.1], [0, 1, 0]) == pytest.approx(1 / 2)  # a tie keeps the given order
    result = top1_accuracy([[0.1, 0.9, 0.3], [0.8, 0.2]], [1, 1])
    assert result == {"accuracy": 0.5, "chance": pytest.approx((1 / 3 + 1 / 2) / 2), "per_query": [1, 0]}


@pytest.mark.parametrize("seed", range(3))
def test_against_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(20, 30))
    labels = (rng.random((20, 30)) < 0.2).astype(int)
    labels[:, 0] = 1  # every query has a relevant document
    for s, query_labels in zip(scores, labels):
        assert average_precision(s, query_labels) == pytest.approx(average_precision_score(query_labels, s))
    assert mean_average_precision(scores, labels) == pytest.approx(
        np.mean([average_precision_score(query_labels, s) for s, query_labels in zip(scores, labels)]))
    ranked = [list(np.argsort(-s)) for s in scores]
    relevant = [set(np.flatnonzero(query_labels)) for query_labels in labels]
    assert ndcg_at_k(ranked, relevant, 10) == pytest.approx(
        np.mean([ndcg_score([query_labels], [s], k=10) for s, query_labels in zip(scores, labels)]))
