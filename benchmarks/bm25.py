"""BM25 over 100k documents: the project's sparse implementation against rank-bm25 (same scores, goal 20x).

Documents are 100,000 synthetic ones of 5-40 words drawn from a Zipf vocabulary of 50,000 words; queries
are 3-8 words. Throughput is queries scored per second against the whole collection.
"""

from __future__ import annotations

import numpy as np

from benchmarks.common import Result, timed

DOCUMENTS, VOCABULARY, QUERIES = 100_000, 50_000, 30


def synthetic(seed: int = 0):
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(VOCABULARY)])
    draw = lambda n: words[np.minimum(rng.zipf(1.2, n), VOCABULARY) - 1].tolist()  # noqa: E731
    documents = [draw(rng.integers(5, 41)) for _ in range(DOCUMENTS)]
    queries = [draw(rng.integers(3, 9)) for _ in range(QUERIES)]
    return documents, queries


def run() -> list[Result]:
    from rank_bm25 import BM25Okapi

    from sentsweep.bm25_index import Bm25Index

    documents, queries = synthetic()
    ours, reference = Bm25Index(documents), BM25Okapi(documents)
    ours_rate = QUERIES / timed(lambda: [ours.get_scores(q) for q in queries])
    reference_rate = QUERIES / timed(lambda: [reference.get_scores(q) for q in queries])
    worst = max(np.max(np.abs(ours.get_scores(q) - reference.get_scores(q))) for q in queries[:5])
    assert worst < 1e-9, f"scores differ by {worst}"
    return [Result("BM25 scoring, 100k documents", ours_rate, reference_rate, "queries/s", "rank-bm25 BM25Okapi",
                   goal=20.0)]


if __name__ == "__main__":
    for result in run():
        print(result.row())
