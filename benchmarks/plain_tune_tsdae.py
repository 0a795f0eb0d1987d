"""TSDAE as a user of Ray Tune and sentence-transformers writes it, with no sentsweep code: the reference (a) of
benchmarks/race_through_ray.py.

The trainable follows sentence-transformers' TSDAE example (its `DenoisingAutoEncoderLoss`, `model.fit`, the
`EmbeddingSimilarityEvaluator` on STS dev every `eval_steps`, each score handed to `tune.report` from fit's
callback), with the settings of the sweep it is compared with: the tiny model, the demo corpus, batch 8, AdamW at
a constant rate without warm-up or weight decay, an untied decoder, max_seq_length 32. Two things differ from the
example, both forced: the deletion noise is written here (word deletion at the trial's ratio, as
`DenoisingAutoEncoderDataset.delete` does, whose word tokenizer needs nltk, which is not installed), drawn up
front for every pass over the corpus the trial's steps take: sentence-transformers >= 3 turns fit's DataLoader
into a fixed dataset, and fit evaluates at each epoch's end besides every `eval_steps`, so one epoch is the whole
trial (a fresh deletion per pass, and no evaluations beyond sentsweep's). It keeps no checkpoints: a plain trial
cannot resume.

The search is Ray Tune's grid (`BasicVariantGenerator`) with the seed as one more grid axis: `Repeater`, Ray
Tune's way to repeat a configuration over seeds, wraps a `Searcher`, and the grid is not one
(`Repeater(BasicVariantGenerator())` fails: it has no `mode`); the seed axis is what a grid user writes instead,
the same trials.

Each trial reports, beside its scores, where its time went (measured inside it, as sentsweep's reports do):
`trial_seconds` (from the trainable's start to its end), `preparation_seconds` (building the model, the decoder
and the data), `evaluation_seconds` (the evaluator's calls). The imports are at the top, as a user writes them:
a trial's process pays them when it loads the trainable, before the trial starts, as sentsweep's trials do. The
Tuner keeps Ray Tune's defaults, as a user's does: `reuse_actors=False` (Ray 2.60), so every trial is a new
process that imports torch and sentence-transformers again (sentsweep's runner reuses its actors); the
benchmark's "outside the trials" row shows what that costs.
"""

from __future__ import annotations

import random
import time

import torch
from ray import tune
from sentence_transformers import InputExample, SentenceTransformer, losses, models
from sentence_transformers.evaluation import EmbeddingSimilarityEvaluator
from torch.utils.data import DataLoader

BATCH_SIZE, LR, MAX_SEQ_LENGTH = 8, 1e-3, 32  # the quick TSDAE sweep's settings


def delete_words(sentence: str, ratio: float, rng: random.Random) -> str:
    """The sentence with each word deleted with probability `ratio`, one word kept at least (TSDAE's noise)."""
    words = sentence.split()
    kept = [word for word in words if rng.random() >= ratio]
    return " ".join(kept or [rng.choice(words)]) if words else sentence


def tsdae_trainable(config: dict, corpus: list[str], dev: tuple[list[str], list[str], list[float]]) -> None:
    """One TSDAE trial: config holds model (a local folder), noise_ratio, pooling, seed, max_steps, eval_steps."""
    started = time.perf_counter()
    random.seed(config["seed"])
    torch.manual_seed(config["seed"])
    encoder = models.Transformer(config["model"], max_seq_length=MAX_SEQ_LENGTH)
    pooling = models.Pooling(encoder.get_word_embedding_dimension(), pooling_mode=config["pooling"])
    model = SentenceTransformer(modules=[encoder, pooling], device="cpu")
    rng = random.Random(config["seed"])
    passes = -(-config["max_steps"] * BATCH_SIZE // len(corpus))  # one epoch is the whole trial (see above)
    examples = [InputExample(texts=[delete_words(s, config["noise_ratio"], rng), s])
                for _ in range(passes) for s in corpus]
    loader = DataLoader(examples, batch_size=BATCH_SIZE, shuffle=True, drop_last=True)
    loss = losses.DenoisingAutoEncoderLoss(model, decoder_name_or_path=config["model"], tie_encoder_decoder=False)
    timings = {"preparation_seconds": time.perf_counter() - started, "evaluation_seconds": 0.0}

    class TimedEvaluator(EmbeddingSimilarityEvaluator):
        def __call__(self, *args, **kwargs):
            start = time.perf_counter()
            try:
                return super().__call__(*args, **kwargs)
            finally:
                timings["evaluation_seconds"] += time.perf_counter() - start

    evaluator = TimedEvaluator(dev[0], dev[1], [score / 5.0 for score in dev[2]], name="sts-dev")
    best = {"best_sts_dev": -1e9}

    def report(score: float, epoch: int, steps: int) -> None:
        best["best_sts_dev"] = max(best["best_sts_dev"], 100 * score)
        tune.report({"sts_dev": 100 * score, "step": steps, **best, **timings,
                     "trial_seconds": time.perf_counter() - started})

    model.fit(train_objectives=[(loader, loss)], evaluator=evaluator, epochs=1,
              steps_per_epoch=config["max_steps"], evaluation_steps=config["eval_steps"], scheduler="constantlr",
              warmup_steps=0, optimizer_params={"lr": LR}, weight_decay=0.0, callback=report,
              show_progress_bar=False)
    tune.report({**best, **timings, "trial_seconds": time.perf_counter() - started})
