"""Evaluation speed: encoding throughput against SentenceTransformer.encode, and exact nearest-neighbour
search over 100k sentence vectors against sentence_transformers.util.semantic_search (same top-k results).
Each side is measured 3 times, alternating, and its best round counts."""

from __future__ import annotations

import torch

from benchmarks.common import Result, benchmark_model_path, benchmark_sentences, best_of_alternating, timed

SENTENCES, BATCH_SIZE = 3000, 64
CORPUS, QUERIES, K, DIM = 100_000, 1000, 10, 384


def run() -> list[Result]:
    from sentence_transformers.util import semantic_search

    from sentsweep.encoding import encode, nearest_neighbours
    from sentsweep.models import load_sentence_model

    model = load_sentence_model(benchmark_model_path(), pooling=None, max_seq_length=128)
    sentences = benchmark_sentences(SENTENCES)
    encode(model, sentences[:64], BATCH_SIZE)  # warm-up
    best = best_of_alternating({
        "ours": lambda: SENTENCES / timed(lambda: encode(model, sentences, BATCH_SIZE)),
        "reference": lambda: SENTENCES / timed(
            lambda: model.encode(sentences, batch_size=BATCH_SIZE, convert_to_tensor=True)),
    })
    results = [Result("STS evaluation encoding (MiniLM)", best["ours"], best["reference"], "sentences/s",
                      "SentenceTransformer.encode", goal=1.0)]

    generator = torch.Generator().manual_seed(0)
    corpus = torch.nn.functional.normalize(torch.randn(CORPUS, DIM, generator=generator), dim=-1)
    queries = torch.nn.functional.normalize(torch.randn(QUERIES, DIM, generator=generator), dim=-1)
    nearest_neighbours(queries[:100], corpus, K)  # warm-up on both sides
    semantic_search(queries[:100], corpus, top_k=K)
    found = {}
    best = best_of_alternating({
        "ours": lambda: QUERIES / timed(lambda: found.update(ours=nearest_neighbours(queries, corpus, K))),
        "reference": lambda: QUERIES / timed(
            lambda: found.update(reference=semantic_search(queries, corpus, top_k=K))),
    })
    reference_scores = torch.tensor([[hit["score"] for hit in hits] for hits in found["reference"]])
    reference_ids = torch.tensor([[hit["corpus_id"] for hit in hits] for hits in found["reference"]])
    assert torch.allclose(found["ours"][0], reference_scores, atol=1e-5), "exact search disagrees"
    agree = (found["ours"][1] == reference_ids).float().mean().item()  # near-ties may swap places
    assert agree > 0.99, f"only {agree:.3f} of the neighbours agree with semantic_search"
    results.append(Result("exact top-10 search, 100k corpus", best["ours"], best["reference"], "queries/s",
                          "sentence_transformers.util.semantic_search", goal=1.0))
    return results


if __name__ == "__main__":
    for result in run():
        print(result.row())
