"""Contrastive training step (sentences/s): SimCSE and Noise Matching against MultipleNegativesRankingLoss.

Same model (all-MiniLM-L6-v2, mean pooling), batch size 64, max sequence length 32, AdamW. The reference is a
training step with sentence-transformers' MultipleNegativesRankingLoss on (x, x) pairs (SimCSE as its docs
show it) and on (x, T(x)) pairs (the same positives as NM, without the stop-gradient). Each is measured
3 times, alternating, from a fresh model each time, and its best round counts.
"""

from __future__ import annotations

import random

from benchmarks.common import Result, benchmark_model_path, benchmark_sentences, best_of_alternating, timed

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

    def simcse():
        model = fresh()
        loss = SimCseLoss(model, 0.05)
        return steps_per_second(model, lambda i: loss([model.preprocess(batches[i])], None))

    def mnrl_same_sentence():
        model = fresh()
        loss = MultipleNegativesRankingLoss(model, scale=20.0)
        return steps_per_second(model, lambda i: loss([model.preprocess(batches[i])] * 2, None))

    def mnrl_noised_copy():
        model = fresh()
        loss = MultipleNegativesRankingLoss(model, scale=20.0)
        return steps_per_second(model, lambda i: loss([model.preprocess(batches[i]), model.preprocess(noisy[i])],
                                                      None))

    def noise_matching():
        model = fresh()
        loss = NoiseMatchingLoss(model, 0.05)
        return steps_per_second(model, lambda i: loss([model.preprocess(batches[i]), model.preprocess(noisy[i])],
                                                      None))

    best = best_of_alternating({"simcse": simcse, "mnrl_xx": mnrl_same_sentence,
                                "nm": noise_matching, "mnrl_xtx": mnrl_noised_copy})
    results = [Result("SimCSE step (MiniLM, bs 64)", best["simcse"], best["mnrl_xx"], "sentences/s",
                      "MultipleNegativesRankingLoss (x, x)", goal=1.0),
               Result("Noise Matching step (MiniLM, bs 64)", best["nm"], best["mnrl_xtx"], "sentences/s",
                      "MultipleNegativesRankingLoss (x, T(x))", goal=1.0)]
    return results


if __name__ == "__main__":
    for result in run():
        print(result.row())
