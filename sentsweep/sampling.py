"""Silver sentence pairs for Augmented SBERT (Reiml (2023), sections 2.10 and 4.3.2), as (i, j) index pairs.

- random: pairs drawn uniformly (mostly dissimilar);
- bm25: each sentence with its `top_k` lexically closest other sentences by Okapi BM25 (mostly similar);
- semantic: each sentence with its `top_k` nearest other sentences by an embedding model's cosine;
- semantic_random: each sentence with its `top_k` semantic neighbours (positives) and `random_per_sentence`
  random other sentences (negatives), the thesis' "combined approach of semantic and random sampling"
  (section 6.2) and its topic pairs, "2 positive and 2 negative sentence pairs ... obtained from semantic
  search and random search" per sentence (section 5.6.1);
- kde: the thesis' iterative KDE (Algorithm 1), which keeps the annotated candidates (the semantic_random
  pairs: "It also seems essential to sample candidates using semantic search rather than just randomly",
  section 6.2) whose score is denser under the gold scores' KDE than under the KDE of the silver pairs kept
  so far, so the silver score distribution comes to match the gold one; it runs until a pass over the
  remaining candidates keeps none.
An unordered pair appears once, and never a sentence with itself.
"""

from __future__ import annotations

import random

import numpy as np

from sentsweep.bm25_index import Bm25Index, lexical_tokens
from sentsweep.errors import InputError

SAMPLING_STRATEGIES = ("none", "random", "bm25", "semantic", "semantic_random", "kde")


def check_sampling(strategy: str) -> str:
    if strategy not in SAMPLING_STRATEGIES:
        raise InputError(f"unknown sampling strategy {strategy!r}; expected one of {', '.join(SAMPLING_STRATEGIES)}")
    return strategy


def _unordered(pairs) -> list[tuple[int, int]]:
    return list(dict.fromkeys((min(i, j), max(i, j)) for i, j in pairs if i != j))


def random_pairs(count: int, n_sentences: int, rng: random.Random) -> list[tuple[int, int]]:
    """`count` distinct unordered pairs of distinct sentences (fewer if there are not that many)."""
    if n_sentences < 2:
        raise InputError(f"random pairs need at least 2 sentences, got {n_sentences}")
    wanted = min(count, n_sentences * (n_sentences - 1) // 2)
    chosen: dict[tuple[int, int], None] = {}
    while len(chosen) < wanted:
        i, j = rng.sample(range(n_sentences), 2)
        chosen[(min(i, j), max(i, j))] = None
    return list(chosen)


def random_partner_pairs(n_sentences: int, per_sentence: int, rng: random.Random,
                         exclude: dict[int, set[int]] | None = None) -> list[tuple[int, int]]:
    """Each sentence i with `per_sentence` distinct random partners j != i drawn uniformly, none of them in
    `exclude[i]` (fewer when there are not that many); unordered pairs, each once."""
    if n_sentences < 2:
        raise InputError(f"random pairs need at least 2 sentences, got {n_sentences}")
    if per_sentence < 1:
        raise InputError(f"random partners per sentence must be >= 1, got {per_sentence}")
    exclude = exclude or {}
    pairs = []
    for i in range(n_sentences):
        banned = exclude.get(i, set()) | {i}
        allowed = n_sentences - len([j for j in banned if 0 <= j < n_sentences])
        wanted = min(per_sentence, allowed)
        partners: dict[int, None] = {}
        while len(partners) < wanted:
            j = rng.randrange(n_sentences)
            if j not in banned:
                partners[j] = None
        pairs.extend((i, j) for j in partners)
    return _unordered(pairs)


def semantic_random_pairs(embedding_scorer, sentences: list[str], top_k: int, random_per_sentence: int,
                          rng: random.Random) -> list[tuple[int, int]]:
    """Each sentence with its `top_k` semantic neighbours and `random_per_sentence` random other sentences
    that are not among them; the semantic pairs first, then the random ones, each unordered pair once."""
    semantic = semantic_pairs(embedding_scorer, sentences, top_k)
    neighbours: dict[int, set[int]] = {}
    for i, j in semantic:
        neighbours.setdefault(i, set()).add(j)
        neighbours.setdefault(j, set()).add(i)
    randoms = random_partner_pairs(len(sentences), random_per_sentence, rng, neighbours)
    return list(dict.fromkeys(semantic + randoms))


def bm25_pairs(sentences: list[str], top_k: int) -> list[tuple[int, int]]:
    """Each sentence with its `top_k` best BM25 matches among the other sentences (itself as the query)."""
    index = Bm25Index([lexical_tokens(s) for s in sentences])
    _, neighbours = index.top_k([lexical_tokens(s) for s in sentences], top_k + 1)
    return _unordered((i, int(j)) for i, row in enumerate(neighbours) for j in [j for j in row if j != i][:top_k])


def semantic_pairs(embedding_scorer, sentences: list[str], top_k: int) -> list[tuple[int, int]]:
    """Each sentence with its `top_k` nearest other sentences by cosine of the scorer's embeddings."""
    _, neighbours = embedding_scorer.top_k(sentences, sentences, top_k + 1)
    return _unordered((i, int(j)) for i, row in enumerate(neighbours) for j in [j for j in row if j != i][:top_k])


def iterative_kde(gold_scores, silver_scores, rng: random.Random) -> list[int]:
    """Indices of `silver_scores` kept by the thesis' Algorithm 1 (see the module docstring)."""
    from scipy.stats import gaussian_kde

    gold_scores, silver_scores = np.asarray(gold_scores, float), np.asarray(silver_scores, float)
    if len(silver_scores) < 3:
        raise InputError(f"iterative KDE needs at least 3 candidate pairs, got {len(silver_scores)}")
    gold_density = gaussian_kde(gold_scores)
    remaining = list(range(len(silver_scores)))
    rng.shuffle(remaining)
    kept, remaining = remaining[:2], remaining[2:]
    if silver_scores[kept[0]] == silver_scores[kept[1]]:  # a KDE needs spread: nudge the second start apart
        kept[1] = next((i for i in remaining if silver_scores[i] != silver_scores[kept[0]]), kept[1])
        remaining = [i for i in remaining if i != kept[1]]
    silver_density = gaussian_kde(silver_scores[kept])
    while True:
        added = False
        for index in list(remaining):
            score = silver_scores[index]
            if gold_density(score)[0] > silver_density(score)[0]:
                kept.append(index)
                remaining.remove(index)
                silver_density = gaussian_kde(silver_scores[kept])
                added = True
        if not added:
            return kept
