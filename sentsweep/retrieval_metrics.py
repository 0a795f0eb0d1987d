"""Ranking metrics of the seeds' retrieval and reranking tasks, on ranked lists of document ids.

- recall_at_k: |relevant in top k| / |relevant|, averaged over queries (duplicate-question retrieval, Wang 2022 ch. 4);
- precision_at_k: |relevant in top k| / k, averaged;
- mrr_at_k: 1 / rank of the first relevant document in the top k (0 if none), averaged;
- ndcg_at_k: binary-relevance DCG of the top k, sum 1 / log2(rank + 1), over the ideal DCG, averaged;
- average_precision: sum of the precision at the rank of each relevant document, divided by the number of
  relevant documents ranked (AskUbuntu MAP over candidate reranking; TwitterPara AP over scored pairs;
  CQADupStack MAP@100 over the top 100), or by `relevant_total` when given (trec_eval's MAP: SciDocs);
- top1_accuracy: share of queries whose best-scored candidate is the right one, within each query's pool of
  distractors, with the chance baseline mean(1 / pool size) (sentence retrieval, Malmberg 2021).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def recall_at_k(ranked: Sequence[Sequence], relevant: Sequence[set], k: int) -> float:
    return float(np.mean([len(set(r[:k]) & rel) / len(rel) for r, rel in zip(ranked, relevant)]))


def mrr_at_k(ranked: Sequence[Sequence], relevant: Sequence[set], k: int) -> float:
    """Mean reciprocal rank at `k`: per query (its documents `ranked`, best first, and its `relevant` set) one over
    the rank of the first relevant document among the first `k` (0 where none), averaged over the queries.

    Examples:
        >>> sentsweep.mrr_at_k([["a", "b", "c"], ["d", "e"]], [{"b"}, {"x"}], k=10)
        0.25
    """
    def reciprocal_rank(r, rel):
        return next((1.0 / (i + 1) for i, doc in enumerate(r[:k]) if doc in rel), 0.0)

    return float(np.mean([reciprocal_rank(r, rel) for r, rel in zip(ranked, relevant)]))


def precision_at_k(ranked: Sequence[Sequence], relevant: Sequence[set], k: int) -> float:
    return float(np.mean([len(set(r[:k]) & rel) / k for r, rel in zip(ranked, relevant)]))


def ndcg_at_k(ranked: Sequence[Sequence], relevant: Sequence[set], k: int) -> float:
    def ndcg(r, rel):
        dcg = sum(1.0 / math.log2(i + 2) for i, doc in enumerate(r[:k]) if doc in rel)
        ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(rel), k)))
        return dcg / ideal

    return float(np.mean([ndcg(r, rel) for r, rel in zip(ranked, relevant)]))


def average_precision(scores: Sequence[float], labels: Sequence[int], relevant_total: int | None = None) -> float:
    """AP of one ranking: documents ordered by descending score (ties keep their given order), `labels` 1 for
    relevant; 0 when nothing relevant is ranked."""
    order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
    hits = np.asarray(labels)[order].astype(bool)
    if not hits.any():
        return 0.0
    precision_at_hits = np.cumsum(hits)[hits] / (np.flatnonzero(hits) + 1)
    return float(precision_at_hits.sum() / (relevant_total if relevant_total is not None else hits.sum()))


def mean_average_precision(per_query_scores: Sequence[Sequence[float]],
                           per_query_labels: Sequence[Sequence[int]]) -> float:
    """MAP: the mean over queries of `average_precision` of each query's candidate scores and 1/0 labels.

    Examples:
        >>> sentsweep.mean_average_precision([[0.9, 0.2, 0.5], [0.1, 0.8]], [[1, 0, 1], [1, 0]])
        0.75
    """
    return float(np.mean([average_precision(scores, labels)
                          for scores, labels in zip(per_query_scores, per_query_labels)]))


def top1_accuracy(per_query_scores: Sequence[Sequence[float]], correct_index: Sequence[int]) -> dict:
    """{'accuracy', 'chance', 'per_query'}: per_query is 1/0 per query, kept for paired tests."""
    per_query = [int(int(np.argmax(scores)) == answer) for scores, answer in zip(per_query_scores, correct_index)]
    chance = float(np.mean([1.0 / len(scores) for scores in per_query_scores]))
    return {"accuracy": float(np.mean(per_query)), "chance": chance, "per_query": per_query}
