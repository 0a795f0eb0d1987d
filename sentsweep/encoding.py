"""Evaluation primitives: Spearman's rho (of similarities rounded to 1e-6), cosine similarity, length-sorted
encoding, exact nearest neighbours."""

from __future__ import annotations

import numpy as np
import torch

from sentsweep.models import preprocess_on_device


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n of `values`, ties sharing the mean of the ranks they span (the convention of Spearman's rho)."""
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    # Start index of each run of equal values, and the average 1-based rank of that run.
    run_starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    run_ends = np.r_[run_starts[1:], len(values)]
    run_ranks = (run_starts + run_ends + 1) / 2.0
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.repeat(run_ranks, run_ends - run_starts)
    return ranks


SIMILARITY_DECIMALS = 6  # similarities are ranked after rounding to 1e-6


def rounded_similarities(similarities) -> np.ndarray:
    """`similarities` rounded to 1e-6 (`SIMILARITY_DECIMALS`), in float64, before they are ranked.

    Cosines of identical (or equally similar) sentences should tie, but they differ in their last float bits,
    and those bits change with the batch an embedding was computed in (padding length changes the kernels),
    so unrounded ties would be broken by batch composition. Rounded, they tie and share their mean rank.
    (Two values within 1e-16 of a rounding boundary can still fall apart: vanishingly rare, never systematic.)
    """
    return np.round(np.asarray(similarities, dtype=np.float64), SIMILARITY_DECIMALS)


def spearman(predicted: np.ndarray, gold: np.ndarray) -> float:
    """Spearman's rho: the Pearson correlation of the average ranks of `predicted` (rounded by
    `rounded_similarities`: every STS score of the project ranks its similarities here) and `gold`."""
    rank_predicted = average_ranks(rounded_similarities(predicted))
    rank_gold = average_ranks(gold)
    rank_predicted -= rank_predicted.mean()
    rank_gold -= rank_gold.mean()
    return float((rank_predicted @ rank_gold) / np.sqrt((rank_predicted @ rank_predicted) * (rank_gold @ rank_gold)))


def cosine_similarities(embeddings1: torch.Tensor, embeddings2: torch.Tensor) -> np.ndarray:
    """Row-wise cosine similarity of two equally shaped embedding matrices."""
    return torch.nn.functional.cosine_similarity(embeddings1.double(), embeddings2.double(), dim=1).cpu().numpy()


def encode(model, sentences: list[str], batch_size: int = 64) -> torch.Tensor:
    """Sentence embeddings of `sentences`, in input order, with the model in eval mode (no dropout).

    Batches are cut from the sentences sorted by length (so little padding is computed), run in inference
    mode through every module of the model, and put back in input order.
    """
    model.eval()
    order = sorted(range(len(sentences)), key=lambda index: -len(sentences[index]))
    chunks = []
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            features = preprocess_on_device(model, [sentences[index] for index in order[start:start + batch_size]])
            chunks.append(model(features)["sentence_embedding"])
    embeddings = torch.cat(chunks)
    in_order = torch.empty_like(embeddings)
    in_order[torch.tensor(order)] = embeddings
    return in_order


def nearest_neighbours(queries: torch.Tensor, corpus: torch.Tensor, k: int, query_batch: int = 256,
                       corpus_batch: int = 100_000) -> tuple[torch.Tensor, torch.Tensor]:
    """Exact top-k cosine neighbours of each query in `corpus`: (scores, indices), best first.

    Scores are computed block by block (query_batch x corpus_batch at a time, 100 MB of float32 at the
    defaults) and merged into a running top-k, so memory stays bounded however large the corpus is.
    """
    queries = torch.nn.functional.normalize(queries.float(), dim=-1)
    corpus = torch.nn.functional.normalize(corpus.float(), dim=-1)
    k = min(k, len(corpus))
    all_scores, all_indices = [], []
    for q_start in range(0, len(queries), query_batch):
        block = queries[q_start:q_start + query_batch]
        best_scores = torch.full((len(block), k), -float("inf"))
        best_indices = torch.zeros((len(block), k), dtype=torch.long)
        for c_start in range(0, len(corpus), corpus_batch):
            scores = block @ corpus[c_start:c_start + corpus_batch].T
            top = scores.topk(min(k, scores.shape[1]), dim=1)
            merged_scores = torch.cat([best_scores, top.values], dim=1)
            merged_indices = torch.cat([best_indices, top.indices + c_start], dim=1)
            keep = merged_scores.topk(k, dim=1)
            best_scores, best_indices = keep.values, merged_indices.gather(1, keep.indices)
        all_scores.append(best_scores)
        all_indices.append(best_indices)
    return torch.cat(all_scores), torch.cat(all_indices)
