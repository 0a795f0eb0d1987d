"""Okapi BM25 on a sparse term matrix (TF-IDF cosine lives in sentsweep.scorers.TfidfScorer).

`Bm25Index` scores exactly as rank-bm25's `BM25Okapi` (the reference), for a query q and document d:

    score(q, d) = sum_{t in q} idf(t) * tf(t, d) (k1 + 1) / (tf(t, d) + k1 (1 - b + b |d| / avgdl))
    idf(t)      = log(N - n(t) + 0.5) - log(n(t) + 0.5),  floored at epsilon * mean idf where negative

but precomputes every (document, term) weight once, so scoring a query is one sparse matrix-vector product
instead of a Python loop over all documents per query term.
"""

from __future__ import annotations

import re

import numpy as np
from scipy import sparse

_TOKEN = re.compile(r"\w+")


def lexical_tokens(text: str) -> list[str]:
    """Lower-cased word tokens (punctuation dropped), the tokenization both BM25 implementations get."""
    return _TOKEN.findall(text.lower())


class Bm25Index:
    """BM25Okapi over tokenized documents (see the module docstring)."""

    def __init__(self, documents: list[list[str]], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        self.vocabulary: dict[str, int] = {}
        columns = [self.vocabulary.setdefault(token, len(self.vocabulary)) for doc in documents for token in doc]
        lengths = np.array([len(doc) for doc in documents], dtype=np.float64)
        rows = np.repeat(np.arange(len(documents)), lengths.astype(np.int64))
        shape = (len(documents), len(self.vocabulary))
        term_counts = sparse.csr_matrix((np.ones(len(columns)), (rows, np.array(columns, dtype=np.int64))), shape)
        term_counts.sum_duplicates()
        document_frequency = np.bincount(term_counts.indices, minlength=shape[1])
        idf = np.log(shape[0] - document_frequency + 0.5) - np.log(document_frequency + 0.5)
        idf[idf < 0] = epsilon * idf.mean()
        length_norm = k1 * (1 - b + b * lengths / lengths.mean())
        entry_rows = np.repeat(np.arange(shape[0]), np.diff(term_counts.indptr))
        tf = term_counts.data
        weights = idf[term_counts.indices] * tf * (k1 + 1) / (tf + length_norm[entry_rows])
        # Term-major (terms x documents): a query only touches the rows of its own terms.
        self.term_weights = sparse.csr_matrix((weights, term_counts.indices, term_counts.indptr), shape).T.tocsr()

    def query_matrix(self, queries: list[list[str]]) -> sparse.csr_matrix:
        rows, columns = [], []
        for row, query in enumerate(queries):
            for token in query:  # a repeated query term counts again, as in rank-bm25
                if token in self.vocabulary:
                    rows.append(row)
                    columns.append(self.vocabulary[token])
        return sparse.csr_matrix((np.ones(len(rows)), (rows, columns)), (len(queries), len(self.vocabulary)))

    def get_scores(self, query: list[str]) -> np.ndarray:
        """BM25 score of every document for one tokenized query."""
        return self.scores(queries=[query])[0]

    def scores(self, queries: list[list[str]]) -> np.ndarray:
        """Dense (queries x documents) BM25 scores."""
        return (self.query_matrix(queries) @ self.term_weights).toarray()

    def top_k(self, queries: list[list[str]], k: int, batch_size: int = 256) -> tuple[np.ndarray, np.ndarray]:
        """(scores, document indices) of the k best documents per query, best first, in query batches."""
        return top_k_in_blocks(lambda start, stop: self.scores(queries[start:stop]), len(queries), k, batch_size)


def top_k_in_blocks(score_block, n_queries: int, k: int, batch_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k (scores, indices) per query, best first; `score_block(start, stop)` scores queries start..stop-1."""
    best_scores, best_indices = [], []
    for start in range(0, n_queries, batch_size):
        block = score_block(start, min(start + batch_size, n_queries))
        k_eff = min(k, block.shape[1])
        part = np.argpartition(-block, k_eff - 1, axis=1)[:, :k_eff]
        part_scores = np.take_along_axis(block, part, axis=1)
        order = np.argsort(-part_scores, axis=1, kind="stable")
        best_indices.append(np.take_along_axis(part, order, axis=1))
        best_scores.append(np.take_along_axis(part_scores, order, axis=1))
    return np.vstack(best_scores), np.vstack(best_indices)
