"""TSDAE training throughput (sentences/s): the project's loop against sentence-transformers' own pipeline.

Both train all-MiniLM-L6-v2 with DenoisingAutoEncoderLoss (tied decoder), deletion noise 0.6, batch size 8,
max sequence length 128, constant lr 3e-5, on the same sentences for the same number of steps. The reference
is SentenceTransformerTrainer with the noise applied in the dataset, as sentence-transformers documents it;
ours is sentsweep.trainables.loop (length-grouped batches, dynamic padding, noise on the fly) with sentsweep's TsdaeLoss
(the LM head only on target tokens, embedding lookups adding their rows into the tied gradient), in fp32 and
with bfloat16 autocast (`precision: bf16`). Each is measured 3 times, alternating, and its best round counts. Both
train on the GPU where there is one, and there the reference also trains with the trainer's bf16 mixed precision
(a third row, for information), else on the CPU.

The CPU goal (1.3x) is on the fp32 row; the bf16 row carries the GPU goal (2x). On a CPU the bf16 row is for
information: its time swings most from round to round, because each step casts the 30522 x 384 embedding
matrix to bf16 and its gradient back, into freshly allocated memory.
"""

from __future__ import annotations

import random
import tempfile

from benchmarks.common import Result, benchmark_model_path, benchmark_sentences, best_of_alternating, timed

STEPS, BATCH_SIZE = 40, 8


def ours(model_path: str, sentences: list[str], precision: str = "fp32") -> float:
    from sentsweep.trainables.catalog import resolve_trial
    from sentsweep.trainables.loop import BatchSchedule, make_lr_schedule, make_optimizer, training_step
    from sentsweep.trainables.unsupervised import build_unsupervised

    config = dict(method="tsdae", model=model_path, corpus="", pooling="cls", max_seq_length=128, noise_ratio=0.6,
                  noise_type="delete", tie_decoder=True, dev_file="", test_file="", lr=3e-5, batch_size=BATCH_SIZE,
                  max_steps=STEPS, eval_steps=STEPS, seed=0)
    trial = resolve_trial(config)
    setup = build_unsupervised(trial)
    setup.module.train()
    optimizer = make_optimizer(setup.module, trial.training)
    lr_schedule = make_lr_schedule(optimizer, trial.training, STEPS + 1, 0)
    schedule = BatchSchedule(sentences, BATCH_SIZE, seed=0, group_by_length=True)
    training_step(setup, optimizer, lr_schedule, schedule, 0, 0, precision)  # warm-up, outside the timing
    seconds = timed(lambda: [training_step(setup, optimizer, lr_schedule, schedule, 0, s, precision)
                             for s in range(1, STEPS + 1)])
    return STEPS * BATCH_SIZE / seconds


def reference(model_path: str, sentences: list[str], precision: str = "fp32") -> float:
    """sentence-transformers' own TSDAE training on the GPU where there is one (else the CPU), in fp32 or with the
    trainer's bfloat16 mixed precision (`bf16=True`)."""
    import time

    import torch
    from datasets import Dataset
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.sentence_transformer.losses import DenoisingAutoEncoderLoss
    from transformers import TrainerCallback

    from sentsweep.models import load_sentence_model
    from sentsweep.noise import delete_words

    model = load_sentence_model(model_path, "cls", 128)
    loss = DenoisingAutoEncoderLoss(model, tie_encoder_decoder=True)
    rng = random.Random(0)
    dataset = Dataset.from_dict({"text": sentences})  # the trainer draws shuffled batches from the same sentences
    dataset.set_transform(lambda batch: {"noisy": [delete_words(t, 0.6, rng) for t in batch["text"]],
                                         "text": batch["text"]})
    with tempfile.TemporaryDirectory() as output:
        arguments = SentenceTransformerTrainingArguments(
            output_dir=output, per_device_train_batch_size=BATCH_SIZE, max_steps=STEPS + 1, learning_rate=3e-5,
            lr_scheduler_type="constant", warmup_steps=0, weight_decay=0.0, save_strategy="no", report_to="none",
            logging_strategy="no", use_cpu=not torch.cuda.is_available(), bf16=precision == "bf16",
            dataloader_num_workers=0, disable_tqdm=True,
        )
        step_ends: list[float] = []

        class StepClock(TrainerCallback):  # times steps 2 .. STEPS + 1, so the warm-up step counts on neither side
            def on_step_end(self, args, state, control, **kwargs):
                if torch.cuda.is_available() and state.global_step in (1, STEPS + 1):
                    torch.cuda.synchronize()  # the GPU's work queued so far done (ours waits for each loss)
                step_ends.append(time.perf_counter())

        trainer = SentenceTransformerTrainer(model=model, args=arguments, train_dataset=dataset, loss=loss,
                                             callbacks=[StepClock()])
        trainer.train()
    return STEPS * BATCH_SIZE / (step_ends[-1] - step_ends[0])


def run() -> list[Result]:
    import torch

    model_path, sentences = benchmark_model_path(), benchmark_sentences(5000)
    gpu = torch.cuda.is_available()
    measurements = {"reference": lambda: reference(model_path, sentences),
                    "fp32": lambda: ours(model_path, sentences),
                    "bf16": lambda: ours(model_path, sentences, "bf16")}
    if gpu:  # both in bf16 on the same GPU, for information (the goal is against the fp32 reference)
        measurements["reference bf16"] = lambda: reference(model_path, sentences, "bf16")
    best = best_of_alternating(measurements)
    device = f"GPU ({torch.cuda.get_device_name()})" if gpu else "CPU"
    reference_name = "SentenceTransformerTrainer + DenoisingAutoEncoderLoss (fp32)"
    results = [Result(f"TSDAE training (MiniLM, bs 8, {device}, fp32)", best["fp32"], best["reference"],
                      "sentences/s", reference_name, goal=None if gpu else 1.3),
               Result(f"TSDAE training (MiniLM, bs 8, {device}, bf16 autocast)", best["bf16"], best["reference"],
                      "sentences/s", reference_name, goal=2.0 if gpu else None)]
    if gpu:
        results.append(Result(f"TSDAE training (MiniLM, bs 8, {device}, bf16 autocast)", best["bf16"],
                              best["reference bf16"], "sentences/s",
                              "SentenceTransformerTrainer + DenoisingAutoEncoderLoss (bf16=True)"))
    return results


if __name__ == "__main__":
    for result in run():
        print(result.row())
