"""BM25 on a sparse term matrix, in the variants the sources use (TF-IDF cosine lives in
sentsweep.scorers.TfidfScorer).

For a query q and document d, with tf(t, d) the count of term t in d, |d| its length in terms, avgdl the mean
length, N the number of documents and n(t) the number holding t:

    score(q, d) = sum_{t in q} idf(t) * tf(t, d) * c / (tf(t, d) + k1 (1 - b + b |d| / avgdl))

- `okapi`: rank-bm25's `BM25Okapi` exactly (the reference the tests compare with): c = k1 + 1 and
  idf(t) = log(N - n(t) + 0.5) - log(n(t) + 0.5), floored at epsilon * mean idf where negative.
- `lucene`: Lucene's `BM25Similarity`, which Elasticsearch ("Elasticsearch with the default settings", TSDAE
  paper, App. B) and Pyserini (Wang (2022), §5.2.1) score with:
  idf(t) = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5)) (never negative, no floor) and c = 1. Lucene 8.0 dropped
  the constant factor k1 + 1 from the numerator (LUCENE-8563; Elasticsearch 7 and the Pyserini releases of
  2021-2022 run on Lucene 8 or later); it changes no ranking, but it sets the scale that a weight on a second
  score (BM25 + alpha x cosine, `sentsweep.scorers.Bm25DenseScorer`) is tuned against.
  Two things of Lucene's are not reproduced: its analyzers (Pyserini's default stems and drops stop words;
  here every variant gets `lexical_tokens`), and its one-byte document lengths (exact for short texts only).

`BM25_VARIANTS` holds each variant's formula and its default k1 and b, each with its source. The index
precomputes every (document, term) weight once, so scoring a query is one sparse matrix-vector product
instead of a Python loop over all documents per query term.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import sparse

from sentsweep.errors import InputError
from sentsweep.references import THESIS_WANG_2022, TSDAE
from sentsweep.settings import Source, cited, project_choice

_TOKEN = re.compile(r"\w+")


def lexical_tokens(text: str) -> list[str]:
    """Lower-cased word tokens (punctuation dropped), the tokenization both BM25 implementations get."""
    return _TOKEN.findall(text.lower())


@dataclass(frozen=True)
class Bm25Variant:
    """A BM25 formula (`idf`: "okapi" or "lucene", see the module docstring) with its default k1 and b."""

    name: str
    idf: Literal["okapi", "lucene"]
    k1: float
    b: float
    source: Source


BM25_VARIANTS: dict[str, Bm25Variant] = {
    variant.name: variant for variant in (
        Bm25Variant("okapi", "okapi", 1.5, 0.75, project_choice(
            "rank-bm25's BM25Okapi and its defaults k1 = 1.5, b = 0.75, epsilon = 0.25: the project's BM25 before "
            "k1 and b were settings, so earlier runs stay comparable")),
        Bm25Variant("lucene", "lucene", 1.2, 0.75, cited(
            TSDAE, "App. B", '"Elasticsearch ... with the default settings": Lucene\'s BM25Similarity, whose defaults '
            "(Elasticsearch's documented ones) are k1 = 1.2, b = 0.75")),
        Bm25Variant("pyserini", "lucene", 0.9, 0.4, cited(
            THESIS_WANG_2022, "§5.2.1", '"We use Pyserini ... implemented BM25 as baseline ... and using default '
            'parameters k = 0.9, b = 0.4"; '
            "Pyserini scores with Lucene's BM25Similarity")),
    )
}


def bm25_parameters(variant: str, k1: float | None = None, b: float | None = None) -> tuple[str, float, float]:
    """(idf formula, k1, b) of `variant`, k1 and b defaulting to the variant's own; bad values are an
    `InputError` naming them."""
    if variant not in BM25_VARIANTS:
        raise InputError(f"unknown BM25 variant {variant!r}; expected one of {', '.join(BM25_VARIANTS)}")
    chosen = BM25_VARIANTS[variant]
    k1 = chosen.k1 if k1 is None else k1
    b = chosen.b if b is None else b
    if not k1 >= 0:
        raise InputError(f"BM25 k1={k1!r} is out of range: must be >= 0")
    if not 0 <= b <= 1:
        raise InputError(f"BM25 b={b!r} is out of range: must be in [0, 1]")
    return chosen.idf, float(k1), float(b)


class Bm25Index:
    """BM25 over tokenized documents (see the module docstring); `idf` picks the formula."""

    def __init__(self, documents: list[list[str]], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25,
                 idf: Literal["okapi", "lucene"] = "okapi") -> None:
        if idf not in ("okapi", "lucene"):
            raise InputError(f"unknown BM25 idf formula {idf!r}; expected 'okapi' or 'lucene'")
        self.vocabulary: dict[str, int] = {}
        columns = [self.vocabulary.setdefault(token, len(self.vocabulary)) for doc in documents for token in doc]
        lengths = np.array([len(doc) for doc in documents], dtype=np.float64)
        rows = np.repeat(np.arange(len(documents)), lengths.astype(np.int64))
        shape = (len(documents), len(self.vocabulary))
        term_counts = sparse.csr_matrix((np.ones(len(columns)), (rows, np.array(columns, dtype=np.int64))), shape)
        term_counts.sum_duplicates()
        document_frequency = np.bincount(term_counts.indices, minlength=shape[1])
        if idf == "okapi":
            weights_idf = np.log(shape[0] - document_frequency + 0.5) - np.log(document_frequency + 0.5)
            weights_idf[weights_idf < 0] = epsilon * weights_idf.mean()
            numerator = k1 + 1
        else:
            weights_idf = np.log1p((shape[0] - document_frequency + 0.5) / (document_frequency + 0.5))
            numerator = 1.0
        average_length = lengths.mean() if len(documents) and lengths.mean() > 0 else 1.0
        length_norm = k1 * (1 - b + b * lengths / average_length)
        entry_rows = np.repeat(np.arange(shape[0]), np.diff(term_counts.indptr))
        tf = term_counts.data
        weights = weights_idf[term_counts.indices] * tf * numerator / (tf + length_norm[entry_rows])
        # Term-major (terms x documents): a query only touches the rows of its own terms.
        self.term_weights = sparse.csr_matrix((weights, term_counts.indices, term_counts.indptr), shape).T.tocsr()
        self._document_terms = (term_counts.indices, term_counts.indptr, shape)
        self._term_presence: sparse.csr_matrix | None = None

    @classmethod
    def of_variant(cls, documents: list[list[str]], variant: str = "okapi", k1: float | None = None,
                   b: float | None = None) -> Bm25Index:
        """The index of `documents` under a variant of `BM25_VARIANTS` (k1 and b: the variant's unless given)."""
        idf, k1, b = bm25_parameters(variant, k1, b)
        return cls(documents, k1=k1, b=b, idf=idf)

    def query_matrix(self, queries: list[list[str]]) -> sparse.csr_matrix:
        rows, columns = [], []
        for row, query in enumerate(queries):
            for token in query:  # a repeated query term counts again, as in rank-bm25 and Lucene's bag of words
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

    def matches(self, queries: list[list[str]]) -> np.ndarray:
        """Dense boolean (queries x documents): does the document hold a term of the query (a hit of Lucene's
        term query)? A score alone cannot tell, since an okapi idf can be 0."""
        if self._term_presence is None:
            indices, indptr, shape = self._document_terms
            presence = sparse.csr_matrix((np.ones(len(indices), dtype=np.float32), indices, indptr), shape)
            self._term_presence = presence.T.tocsr()
        return (self.query_matrix(queries).astype(np.float32) @ self._term_presence).toarray() > 0

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
