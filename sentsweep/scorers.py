"""How a method scores texts against each other, the one interface every evaluation task uses.

A scorer answers three questions, each with "higher = more similar":
- pair_similarities(texts1, texts2): the score of each pair (STS, paraphrase identification);
- candidate_similarities(queries, candidate_lists): the score of every candidate of each query's own list
  (reranking: AskUbuntu, SciDocs, sentence retrieval with distractors);
- top_k(queries, documents, k): the k best documents of each query in one shared corpus (retrieval).
`features(texts)` gives vectors for transfer classification, where the method has them (BM25 has none).

`Scorer` states the three questions as a `typing.Protocol` and `FeatureScorer` states `features`: any class
with these methods is one, without inheriting. `EmbeddingScorer` uses the cosine of sentence embeddings;
`TfidfScorer` the cosine of TF-IDF vectors (scikit-learn); `Bm25Scorer` BM25 (`sentsweep.bm25_index.Bm25Index`,
in one of its variants) with the first text as the query; `Bm25DenseScorer` BM25 + alpha x the cosine of an
encoder's embeddings (Wang (2022), eq. 5.1).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import torch

from sentsweep.bm25_index import Bm25Index, bm25_parameters, lexical_tokens, top_k_in_blocks
from sentsweep.encoding import cosine_similarities, encode, nearest_neighbours
from sentsweep.errors import InputError


@runtime_checkable
class Scorer(Protocol):
    """What the evaluation tasks (`sentsweep.tasks`) call on a method; every score is "higher = more similar"."""

    def pair_similarities(self, texts1: list[str], texts2: list[str]) -> np.ndarray:
        """The score of each pair (texts1[i], texts2[i])."""

    def candidate_similarities(self, queries: list[str], candidate_lists: list[list[str]]) -> list[np.ndarray]:
        """For each query, the scores of the candidates of its own list, in the list's order."""

    def top_k(self, queries: list[str], documents: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, document indices), each queries x k, of each query's k best documents, best first."""


@runtime_checkable
class FeatureScorer(Protocol):
    """What the transfer classification tasks call on a method: vectors of texts, for a classifier on top."""

    def features(self, texts: list[str]):
        """One row of features per text (a dense array or a scipy sparse matrix)."""


def _unique(texts: list[str]) -> tuple[list[str], dict[str, int]]:
    unique = list(dict.fromkeys(texts))
    return unique, {text: index for index, text in enumerate(unique)}


class EmbeddingScorer:
    """Cosine similarity of a SentenceTransformer's embeddings; every distinct text is encoded once per call."""

    def __init__(self, model, batch_size: int = 64) -> None:
        self.model = model
        self.batch_size = batch_size

    def embed(self, texts: list[str]) -> torch.Tensor:
        """Embeddings of `texts`, in order (the model is put back in its previous mode afterwards)."""
        was_training = self.model.training
        unique, position = _unique(texts)
        embeddings = encode(self.model, unique, self.batch_size)
        self.model.train(was_training)
        return embeddings[[position[text] for text in texts]]

    def pair_similarities(self, texts1: list[str], texts2: list[str]) -> np.ndarray:
        embeddings = self.embed(texts1 + texts2)
        return cosine_similarities(embeddings[: len(texts1)], embeddings[len(texts1):])

    def candidate_similarities(self, queries: list[str], candidate_lists: list[list[str]]) -> list[np.ndarray]:
        flat = [text for candidates in candidate_lists for text in candidates]
        # cosines in float64: near-equal similarities keep their order whichever way they are computed
        embeddings = torch.nn.functional.normalize(self.embed(queries + flat).double(), dim=-1)
        query_embeddings, candidate_embeddings = embeddings[: len(queries)], embeddings[len(queries):]
        scores, start = [], 0
        for query_embedding, candidates in zip(query_embeddings, candidate_lists):
            block = candidate_embeddings[start:start + len(candidates)]
            scores.append((block @ query_embedding).cpu().numpy())
            start += len(candidates)
        return scores

    def top_k(self, queries: list[str], documents: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        scores, indices = nearest_neighbours(self.embed(queries), self.embed(documents), k)
        return scores.cpu().numpy(), indices.cpu().numpy()

    def features(self, texts: list[str]) -> np.ndarray:
        return self.embed(texts).float().cpu().numpy()


def check_lemmatizer() -> None:
    """An `InputError` when simplemma (the `lemmatize` extra) is not installed."""
    try:
        import simplemma  # noqa: F401
    except ImportError:
        raise InputError("lemmatize=true needs simplemma: pip install 'sentsweep[lemmatize]'") from None


def lemmatized_tokens(text: str) -> list[str]:
    """`lexical_tokens` mapped to their English lemmas ("walking" -> "walk", "cars" -> "car")."""
    import simplemma

    return [simplemma.lemmatize(token, lang="en") for token in lexical_tokens(text)]


class TfidfScorer:
    """Cosine of TF-IDF vectors (scikit-learn's `TfidfVectorizer`: raw counts x idf(t) = ln((1 + N) / (1 + n(t)))
    + 1, rows L2-normalised); IDF from `fit_corpus` when given, else from the texts of each call.

    `max_features` keeps only the most frequent terms of the fitted texts ("the top 1024 features ordered by
    term frequency across the corpus", Malmberg (2021), §3.3.3); the idf of a kept term is unchanged,
    and a vector is normalised over the kept terms only. `lemmatize` maps each token to its English lemma
    first, so inflected forms share one term (Malmberg 2021 §3.3.3: "walk" and "walking"), with simplemma's dictionary
    (the `lemmatize` extra: `pip install 'sentsweep[lemmatize]'`).
    """

    def __init__(self, fit_corpus: list[str] | None = None, max_features: int | None = None,
                 lemmatize: bool = False) -> None:
        if max_features is not None and (isinstance(max_features, bool) or not isinstance(max_features, int)
                                         or max_features < 1):
            raise InputError(f"TF-IDF max_features={max_features!r} must be a whole number >= 1 (or none)")
        self.fit_corpus = fit_corpus
        self.max_features = max_features
        self.tokens = lemmatized_tokens if lemmatize else lexical_tokens
        if lemmatize:
            check_lemmatizer()

    def _vectorize(self, texts: list[str]):
        from sklearn.feature_extraction.text import TfidfVectorizer

        vectorizer = TfidfVectorizer(tokenizer=self.tokens, lowercase=False, token_pattern=None,
                                     max_features=self.max_features)
        vectorizer.fit(self.fit_corpus if self.fit_corpus is not None else texts)
        return vectorizer.transform(texts)  # rows L2-normalised: dot products are cosines

    def pair_similarities(self, texts1: list[str], texts2: list[str]) -> np.ndarray:
        vectors = self._vectorize(texts1 + texts2)
        return np.asarray(vectors[: len(texts1)].multiply(vectors[len(texts1):]).sum(axis=1)).ravel()

    def candidate_similarities(self, queries: list[str], candidate_lists: list[list[str]]) -> list[np.ndarray]:
        flat = [text for candidates in candidate_lists for text in candidates]
        vectors = self._vectorize(queries + flat)
        query_vectors, candidate_vectors = vectors[: len(queries)], vectors[len(queries):]
        scores, start = [], 0
        for row, candidates in enumerate(candidate_lists):
            block = candidate_vectors[start:start + len(candidates)]
            scores.append(np.asarray((block @ query_vectors[row].T).todense()).ravel())
            start += len(candidates)
        return scores

    def top_k(self, queries: list[str], documents: list[str], k: int, batch_size: int = 256):
        vectors = self._vectorize(queries + documents)
        query_vectors, document_vectors = vectors[: len(queries)], vectors[len(queries):].T.tocsc()
        return top_k_in_blocks(lambda start, stop: (query_vectors[start:stop] @ document_vectors).toarray(),
                                len(queries), k, batch_size)

    def features(self, texts: list[str]):
        return self._vectorize(texts)


class Bm25Scorer:
    """BM25 in a variant of `sentsweep.bm25_index.BM25_VARIANTS` (k1 and b: the variant's unless given); the
    documents of each call form the index (their IDF)."""

    def __init__(self, variant: str = "okapi", k1: float | None = None, b: float | None = None) -> None:
        bm25_parameters(variant, k1, b)  # bad values fail here, before any index is built
        self.variant, self.k1, self.b = variant, k1, b

    def index(self, documents: list[str]) -> Bm25Index:
        return Bm25Index.of_variant([lexical_tokens(text) for text in documents], self.variant, self.k1, self.b)

    def pair_similarities(self, texts1: list[str], texts2: list[str]) -> np.ndarray:
        unique, position = _unique(texts2)
        index = self.index(unique)
        queries = index.query_matrix([lexical_tokens(text) for text in texts1])
        document_rows = index.term_weights.T.tocsr()[[position[text] for text in texts2]]
        return np.asarray(queries.multiply(document_rows).sum(axis=1)).ravel()

    def candidate_similarities(self, queries: list[str], candidate_lists: list[list[str]]) -> list[np.ndarray]:
        unique, position = _unique([text for candidates in candidate_lists for text in candidates])
        index = self.index(unique)
        return [
            index.scores([lexical_tokens(query)])[0][[position[text] for text in candidates]]
            for query, candidates in zip(queries, candidate_lists)
        ]

    def top_k(self, queries: list[str], documents: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.index(documents).top_k([lexical_tokens(text) for text in queries], k)


class Bm25DenseScorer:
    """BM25 rescored with a dense encoder, Wang (2022), §5.3.2, eq. 5.1:

        score(q, d) = BM25(q, d) + alpha * cos(f(q), f(d))

    with f the encoder's sentence embedding, neither score normalised (Wang 2022 tunes alpha in {0, 1, 5, ..., 120}
    on the raw sums and finds alpha = 20 best, Table 5.8 / Fig. 5.2; alpha = 0 is BM25 alone).

    - `top_k` (retrieval from one shared corpus) follows Wang 2022's "We rescore BM25 top1000 retrieval results":
      the `rescore_depth` best BM25 documents among those sharing a term with the query (Lucene's hit list;
      none: every hit) get the sum; they come first, best first. Any further documents follow in BM25 order,
      at the score bm25 - alpha (the least the sum could give them, the cosine being >= -1), capped at the
      lowest rescored score, so the returned scores never increase.
    - `pair_similarities` and `candidate_similarities` score every given pair or candidate with the sum (a
      candidate list is itself the depth being re-ranked).

    `encoder` is anything with `embed(texts) -> tensor` (an `EmbeddingScorer`); with alpha = 0 it is not called.
    """

    def __init__(self, encoder, alpha: float, rescore_depth: int | None = 1000, variant: str = "okapi",
                 k1: float | None = None, b: float | None = None, batch_size: int = 256) -> None:
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha >= 0:
            raise InputError(f"BM25 + dense alpha={alpha!r} must be a number >= 0")
        if rescore_depth is not None and (isinstance(rescore_depth, bool) or not isinstance(rescore_depth, int)
                                          or rescore_depth < 1):
            raise InputError(f"rescore_depth={rescore_depth!r} must be a whole number >= 1 (or none)")
        self.bm25 = Bm25Scorer(variant, k1, b)
        self.encoder = encoder
        self.alpha = float(alpha)
        self.rescore_depth = rescore_depth
        self.batch_size = batch_size

    def _cosines(self, texts1: list[str], texts2: list[str]) -> np.ndarray:
        embeddings = torch.nn.functional.normalize(self.encoder.embed(texts1 + texts2).double(), dim=-1)
        return (embeddings[: len(texts1)] * embeddings[len(texts1):]).sum(-1).cpu().numpy()

    def pair_similarities(self, texts1: list[str], texts2: list[str]) -> np.ndarray:
        lexical = self.bm25.pair_similarities(texts1, texts2)
        return lexical if self.alpha == 0 else lexical + self.alpha * self._cosines(texts1, texts2)

    def candidate_similarities(self, queries: list[str], candidate_lists: list[list[str]]) -> list[np.ndarray]:
        lexical = self.bm25.candidate_similarities(queries, candidate_lists)
        if self.alpha == 0:
            return lexical
        flat_queries = [query for query, candidates in zip(queries, candidate_lists) for _ in candidates]
        flat = self._cosines(flat_queries, [text for candidates in candidate_lists for text in candidates])
        scores, start = [], 0
        for row in lexical:
            scores.append(row + self.alpha * flat[start:start + len(row)])
            start += len(row)
        return scores

    def top_k(self, queries: list[str], documents: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        index = self.bm25.index(documents)
        tokens = [lexical_tokens(text) for text in queries]
        wanted = min(k, len(documents))
        heads, tails = [], []  # per query: (ids, BM25 scores) rescored, and (ids, BM25 scores) after them
        for start in range(0, len(queries), self.batch_size):
            block = tokens[start:start + self.batch_size]
            for row_scores, row_hits in zip(index.scores(block), index.matches(block)):
                hits = np.flatnonzero(row_hits)
                depth = len(hits) if self.rescore_depth is None else min(self.rescore_depth, len(hits))
                head = hits[_best(row_scores[hits], depth)]
                rest = np.ones(len(documents), dtype=bool)
                rest[head] = False
                others = np.flatnonzero(rest)
                tail = others[_best(row_scores[others], max(0, wanted - len(head)))]
                heads.append((head, row_scores[head]))
                tails.append((tail, row_scores[tail]))
        cosines = self._head_cosines(queries, documents, [head for head, _ in heads])
        all_scores, all_indices = [], []
        for (head, head_bm25), (tail, tail_bm25), head_cosines in zip(heads, tails, cosines):
            combined = head_bm25 + self.alpha * head_cosines
            order = np.argsort(-combined, kind="stable")
            tail_scores = tail_bm25 - self.alpha
            if len(head):
                tail_scores = np.minimum(tail_scores, combined.min())
            all_indices.append(np.concatenate([head[order], tail])[:wanted])
            all_scores.append(np.concatenate([combined[order], tail_scores])[:wanted])
        shape = (len(queries), wanted)
        scores = np.array(all_scores, dtype=np.float64).reshape(shape)
        return scores, np.array(all_indices, dtype=np.int64).reshape(shape)

    def _head_cosines(self, queries: list[str], documents: list[str], heads: list[np.ndarray]) -> list[np.ndarray]:
        """Cosine of each query with each of its rescored documents; every text is embedded once."""
        if self.alpha == 0:
            return [np.zeros(len(head)) for head in heads]
        needed = np.unique(np.concatenate(heads)) if heads else np.zeros(0, dtype=np.int64)
        row_of = {int(document): row for row, document in enumerate(needed)}
        embeddings = torch.nn.functional.normalize(
            self.encoder.embed(queries + [documents[i] for i in needed]).double(), dim=-1)
        query_embeddings, document_embeddings = embeddings[: len(queries)], embeddings[len(queries):]
        return [
            (document_embeddings[[row_of[int(i)] for i in head]] @ query_embedding).cpu().numpy()
            for query_embedding, head in zip(query_embeddings, heads)
        ]


def _best(scores: np.ndarray, count: int) -> np.ndarray:
    """Positions of the `count` highest of `scores`, highest first (equal scores: lower position first; at the
    cut, which of several equal scores is kept is argpartition's choice, as in `top_k_in_blocks`)."""
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    if count < len(scores):
        part = np.argpartition(-scores, count - 1)[:count]
        return part[np.lexsort((part, -scores[part]))]
    return np.argsort(-scores, kind="stable")
