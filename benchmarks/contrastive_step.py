"""Contrastive training step (sentences/s): SimCSE and Noise Matching against MultipleNegativesRankingLoss.

Same model (all-MiniLM-L6-v2, mean pooling), batch size 64, max sequence length 32, AdamW. The reference is a
training step with sentence-transformers' MultipleNegativesRankingLoss on (x, x) pairs (SimCSE as its docs
show it) and on (x, T(x)) pairs (the same positives as NM, without the stop-gradient).
"""

from __future__ import annotations

import random

from benchmarks.common import Result, benchmark_model_path, benchmark_sentences, timed

STEPS, BATCH_SIZE = 15, 64


def steps_per_second(model, step) -> float:
    import torch

    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)

    def one(index):
        loss = step(index)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    one(0)  # warm-up
    return STEPS * BATCH_SIZE / timed(lambda: [one(i) for i in range(1, STEPS + 1)])


def run() -> list[Result]:
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    from sentsweep.losses.contrastive import NoiseMatchingLoss, SimCseLoss
    from sentsweep.models import load_sentence_model
    from sentsweep.noise import delete_words

    path = benchmark_model_path()
    sentences = benchmark_sentences((STEPS + 1) * BATCH_SIZE)
    batches = [sentences[i * BATCH_SIZE:(i + 1) * BATCH_SIZE] for i in range(STEPS + 1)]
    noisy = [[delete_words(s, 0.6, random.Random(i)) for s in batch] for i, batch in enumerate(batches)]

    def fresh():
        model = load_sentence_model(path, "mean", 32)
        model.train()
        return model

    results = []
    model = fresh()
    simcse = SimCseLoss(model, 0.05)
    ours = steps_per_second(model, lambda i: simcse(model.preprocess(batches[i])))
    model = fresh()
    mnrl = MultipleNegativesRankingLoss(model, scale=20.0)
    reference = steps_per_second(model, lambda i: mnrl([model.preprocess(batches[i])] * 2, None))
    results.append(Result("SimCSE step (MiniLM, bs 64)", ours, reference, "sentences/s",
                          "MultipleNegativesRankingLoss (x, x)", goal=1.0))
    model = fresh()
    nm = NoiseMatchingLoss(model, 0.05)
    ours = steps_per_second(model, lambda i: nm(model.preprocess(batches[i]), model.preprocess(noisy[i])))
    model = fresh()
    mnrl = MultipleNegativesRankingLoss(model, scale=20.0)
    reference = steps_per_second(
        model, lambda i: mnrl([model.preprocess(batches[i]), model.preprocess(noisy[i])], None))
    results.append(Result("Noise Matching step (MiniLM, bs 64)", ours, reference, "sentences/s",
                          "MultipleNegativesRankingLoss (x, T(x))", goal=1.0))
    return results


if __name__ == "__main__":
    for result in run():
        print(result.row())
