"""The training loop every trained method shares (its settings: `TrainingSettings`, `EvaluationSettings`).

AdamW at a constant learning rate over shuffled mini-batches of the corpus; every `eval_steps` steps (and at
step 0, the untrained model) the STS dev score is computed; when it improves, the test score of that
checkpoint is computed too, so test is only ever reported for the dev-selected checkpoint. The evaluation
tasks of `eval_tasks` ({name: path}, see sentsweep.tasks) are scored once, at the end, on the test
splits and with the dev-selected weights (or, with `select_checkpoint: last`, the final weights). Each
evaluation is reported together with a checkpoint from which the trial resumes exactly: batches, noise and
dropout are seeded from (seed, step), not from state carried across steps.
"""

from __future__ import annotations

import copy
import math
import random
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from sentsweep.data import read_corpus, read_scored_pairs
from sentsweep.scorers import EmbeddingScorer
from sentsweep.tasks import build_tasks, evaluate_tasks
from sentsweep.tasks.sts import StsEvaluator
from sentsweep.trainables.session import TuneSession
from sentsweep.trainables.settings import Trial

CHECKPOINT_FILE = "trial_state.pt"


@dataclass
class TrainingSetup:
    """What a method contributes to the shared loop.

    model: the SentenceTransformer that is evaluated; module: everything optimised and checkpointed (it
    contains the model); batch_loss(batch, rng): the method's loss on one batch of training examples.
    examples: the training examples (labelled pairs, triplets...); None for the training corpus
    (raw sentences, sampled to `sample_size`). metrics: what the preparation measured (a teacher's
    dev score, the number of silver pairs), reported with every evaluation.
    """

    model: torch.nn.Module
    module: torch.nn.Module
    batch_loss: Callable[[list, random.Random], torch.Tensor]
    examples: list | None = None
    metrics: dict = field(default_factory=dict)


@dataclass
class Progress:
    step: int = 0
    best_sts_dev: float = -math.inf
    sts_test_at_best_dev: float = math.nan
    best_step: int = -1


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def step_seed(seed: int, step: int) -> int:
    """A seed for everything random in one step, independent of how the trial got there (resume-exact)."""
    return (seed * 1_000_003 + step) % 2**63


def text_length(example) -> int:
    """Characters of a sentence, or of all the texts of an example (a pair, a triplet)."""
    return len(example) if isinstance(example, str) else sum(len(x) for x in example if isinstance(x, str))


class BatchSchedule:
    """Mini-batch `step` of a corpus walked epoch by epoch, each epoch in its own seeded order.

    With `group_by_length`, each window of `GROUP_WINDOW` batches of the shuffled epoch is sorted by
    sentence length before it is cut into batches, and the batches are then shuffled: batches hold
    sentences of similar length, so dynamic padding wastes little compute, and their order stays random.
    """

    GROUP_WINDOW = 50

    def __init__(self, corpus: list[str], batch_size: int, seed: int, group_by_length: bool = True) -> None:
        self.corpus = corpus
        self.batch_size = batch_size
        self.seed = seed
        self.group_by_length = group_by_length
        self._permutations: dict[int, list[int]] = {}

    def _permutation(self, epoch: int) -> list[int]:
        if epoch not in self._permutations:
            rng = random.Random(step_seed(self.seed, -1 - epoch))
            order = list(range(len(self.corpus)))
            rng.shuffle(order)
            if self.group_by_length:
                window = self.batch_size * self.GROUP_WINDOW
                order = [i for start in range(0, len(order), window)
                         for i in sorted(order[start:start + window], key=lambda i: text_length(self.corpus[i]))]
                batches = [order[start:start + self.batch_size] for start in range(0, len(order), self.batch_size)]
                rng.shuffle(batches)
                order = [i for batch in batches for i in batch]
            self._permutations = {epoch: order}
        return self._permutations[epoch]

    def batch(self, step: int) -> list[str]:
        positions = range(step * self.batch_size, (step + 1) * self.batch_size)
        size = len(self.corpus)
        return [self.corpus[self._permutation(p // size)[p % size]] for p in positions]


def make_optimizer(module: torch.nn.Module, lr: float, weight_decay: float = 0.0) -> torch.optim.Optimizer:
    """AdamW at a constant learning rate (the seeds' setting; weight decay 0 as in the TSDAE replication).

    The fused implementation updates all parameters in one kernel per step instead of one small kernel per
    tensor, which matters on CPU where the update of a BERT and its decoder is a large share of a step.
    """
    return torch.optim.AdamW(module.parameters(), lr=lr, weight_decay=weight_decay, fused=True)


def training_step(setup: TrainingSetup, optimizer, schedule: BatchSchedule, seed: int, step: int,
                  precision: str = "fp32") -> float:
    """One optimisation step on batch `step`, with everything random seeded from (seed, step); returns the loss.

    `precision="bf16"` runs the forward pass under bfloat16 autocast (matrix products in bf16, weights,
    gradients and optimizer state in fp32): on GPUs and on CPUs with AMX or AVX512-BF16 matrix units.
    """
    torch.manual_seed(step_seed(seed, step))
    device_type = next(setup.module.parameters()).device.type
    with torch.autocast(device_type, dtype=torch.bfloat16, enabled=precision == "bf16"):
        loss = setup.batch_loss(schedule.batch(step), random.Random(step_seed(seed, step)))
    if not torch.isfinite(loss):
        raise FloatingPointError(f"loss is {loss.item()} at step {step}")
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()


def sample_corpus(corpus: list[str], sample_size: int | None, seed: int) -> list[str]:
    """The first `sample_size` sentences of a seeded shuffle (all sentences when None or larger)."""
    if sample_size is None or sample_size >= len(corpus):
        return corpus
    return random.Random(seed).sample(corpus, sample_size)


def run_trial(trial: Trial, build_setup: Callable[[Trial], TrainingSetup], session=None) -> Progress:
    """Train one configuration to `max_steps`, evaluating, reporting and checkpointing as described above."""
    session = session or TuneSession()
    seed, training, evaluation = trial.seed, trial.training, trial.evaluation
    seed_everything(seed)
    dev = StsEvaluator(read_scored_pairs(evaluation.dev_file, evaluation.eval_format, "dev"))
    test = StsEvaluator(read_scored_pairs(evaluation.test_file, evaluation.eval_format, "test"))
    tasks = build_tasks(evaluation.eval_tasks or {})
    setup = build_setup(trial)
    corpus = setup.examples if setup.examples is not None else sample_corpus(
        read_corpus(training.corpus), training.sample_size, seed)
    setup.module.train()
    optimizer = make_optimizer(setup.module, training.lr, training.weight_decay)
    progress = Progress()
    best_weights = None  # the dev-selected model's weights, kept only when tasks are scored at the end

    checkpoint_dir = session.latest_checkpoint_dir()
    if checkpoint_dir is not None:
        state = torch.load(Path(checkpoint_dir) / CHECKPOINT_FILE, weights_only=False)
        setup.module.load_state_dict(state["module"])
        optimizer.load_state_dict(state["optimizer"])
        progress = Progress(**state["progress"])
        best_weights = state.get("best_weights")
        resumed_at = progress.step
    else:
        resumed_at = None

    schedule = BatchSchedule(corpus, training.batch_size, seed, training.group_by_length)
    max_steps, eval_steps = training.max_steps, training.eval_steps
    losses: list[float] = []
    while True:
        at_eval = progress.step % eval_steps == 0 or progress.step == max_steps
        if at_eval and progress.step != resumed_at:
            metrics = setup.metrics | _evaluate(setup.model, dev, test, progress)
            if tasks and progress.best_step == progress.step:
                best_weights = {key: value.detach().clone() for key, value in setup.model.state_dict().items()}
            if tasks and progress.step >= max_steps:
                last = evaluation.select_checkpoint == "last"
                final = score_tasks_with_weights(setup.model, setup.model.state_dict() if last else best_weights, tasks)
                metrics.update(final.metrics)
                metrics["per_query"] = final.per_query
            if losses:
                metrics["train_loss"] = float(np.mean(losses))
                losses = []
            with tempfile.TemporaryDirectory() as directory:
                torch.save(
                    {
                        "module": setup.module.state_dict(),
                        "optimizer": optimizer.state_dict(),
                        "progress": asdict(progress),
                        "best_weights": best_weights,
                    },
                    Path(directory) / CHECKPOINT_FILE,
                )
                session.report(metrics, Path(directory))
        if progress.step >= max_steps:
            return progress
        losses.append(training_step(setup, optimizer, schedule, seed, progress.step, training.precision))
        progress.step += 1


def score_tasks_with_weights(model, weights: dict, tasks: dict):
    """The tasks' test metrics of `model` with `weights` loaded (a copy: the trained model is left as it is)."""
    selected = copy.deepcopy(model)
    selected.load_state_dict(weights)
    return evaluate_tasks(tasks, EmbeddingScorer(selected), "test")


def _evaluate(model, dev: StsEvaluator, test: StsEvaluator, progress: Progress) -> dict:
    """Score dev; on a new best, score test for this checkpoint. Returns the metrics to report."""
    sts_dev = dev(model)
    if sts_dev > progress.best_sts_dev:
        progress.best_sts_dev = sts_dev
        progress.sts_test_at_best_dev = test(model)
        progress.best_step = progress.step
    return {
        "step": progress.step,
        "sts_dev": sts_dev,
        "best_sts_dev": progress.best_sts_dev,
        "sts_test_at_best_dev": progress.sts_test_at_best_dev,
        "best_step": progress.best_step,
    }
