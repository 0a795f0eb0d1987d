"""How a method scores texts against each other, the one interface every evaluation task uses.

A scorer answers three questions, each with "higher = more similar":
- pair_similarities(texts1, texts2): the score of each pair (STS, paraphrase identification);
- candidate_similarities(queries, candidate_lists): the score of every candidate of each query's own list
  (reranking: AskUbuntu, SciDocs, sentence retrieval with distractors);
- top_k(queries, documents, k): the k best documents of each query in one shared corpus (retrieval).
`features(texts)` gives vectors for transfer classification, where the method has them (BM25 has none).

`Scorer` states the three questions as a `typing.Protocol` and `FeatureScorer` states `features`: any class
with these methods is one, without inheriting. `EmbeddingScorer` uses the cosine of sentence embeddings;
`TfidfScorer` the cosine of TF-IDF vectors (scikit-learn); `Bm25Scorer` Okapi BM25
(`sentsweep.bm25_index.Bm25Index`) with the first text as the query.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import torch

from sentsweep.bm25_index import Bm25Index, lexical_tokens, top_k_in_blocks
from sentsweep.encoding import cosine_similarities, encode, nearest_neighbours


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


class TfidfScorer:
    """Cosine of TF-IDF vectors; IDF from `fit_corpus` when given, else from the texts of each call."""

    def __init__(self, fit_corpus: list[str] | None = None) -> None:
        self.fit_corpus = fit_corpus

    def _vectorize(self, texts: list[str]):
        from sklearn.feature_extraction.text import TfidfVectorizer

        vectorizer = TfidfVectorizer(tokenizer=lexical_tokens, lowercase=False, token_pattern=None)
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
    """Okapi BM25 (rank-bm25's BM25Okapi formula); the documents of each call form the index (their IDF)."""

    def pair_similarities(self, texts1: list[str], texts2: list[str]) -> np.ndarray:
        unique, position = _unique(texts2)
        index = Bm25Index([lexical_tokens(text) for text in unique])
        queries = index.query_matrix([lexical_tokens(text) for text in texts1])
        document_rows = index.term_weights.T.tocsr()[[position[text] for text in texts2]]
        return np.asarray(queries.multiply(document_rows).sum(axis=1)).ravel()

    def candidate_similarities(self, queries: list[str], candidate_lists: list[list[str]]) -> list[np.ndarray]:
        unique, position = _unique([text for candidates in candidate_lists for text in candidates])
        index = Bm25Index([lexical_tokens(text) for text in unique])
        return [
            index.scores([lexical_tokens(query)])[0][[position[text] for text in candidates]]
            for query, candidates in zip(queries, candidate_lists)
        ]

    def top_k(self, queries: list[str], documents: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        index = Bm25Index([lexical_tokens(text) for text in documents])
        return index.top_k([lexical_tokens(text) for text in queries], k)

