"""The training loop every trained method shares (its settings: `TrainingSettings`, `EvaluationSettings`).

The optimiser with its learning-rate schedule runs over shuffled mini-batches for `max_steps` steps or `epochs`
epochs; every `eval_steps` steps (and at step 0, the untrained model) the STS dev score is computed, and the test
score only for the checkpoint `select_checkpoint` selects; the evaluation tasks are scored once, at the end, with
the selected weights. Each evaluation is reported with a checkpoint from which the trial resumes exactly (batches,
noise and dropout seeded from (seed, step)); reports carry the timing metrics (`preparation_seconds`,
`seconds_per_step`, `evaluation_seconds`, `checkpoint_seconds`).

    run_trial(trial, build_setup, session)     # each report: scores, timings and a checkpoint to resume from

Checkpoint selection, the step-0 cache and each timing metric: docs/mlflow.md, "What the training loop evaluates
and reports"."""

from __future__ import annotations

import copy
import math
import random
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from sentsweep.data import read_corpus, read_scored_pairs
from sentsweep.errors import InputError
from sentsweep.preparation_cache import RESULT_KEY, CacheUse, PreparationCache, Stage
from sentsweep.preparation_cache.digests import module_digest, pairs_digest
from sentsweep.scorers import EmbeddingScorer
from sentsweep.tasks import TASKS, build_tasks, evaluate_tasks
from sentsweep.tasks.sts import StsEvaluator
from sentsweep.trainables.session import TuneSession, current_trial_id
from sentsweep.trainables.settings import SELECTED_TASK_DEV, EvaluationSettings, TrainingSettings, Trial

CHECKPOINT_FILE = "trial_state.pt"
MODEL_FOLDER = "model"  # the selected model in a trial's last checkpoint (`keep_model`): SentenceTransformer(path)
UNTRAINED_EVALUATION = Stage("untrained_evaluation", 1, "STS dev and test scores of the model before its first "
                             "step", seeded=False)
# The scores the loop reports: those of every trial, and those of each checkpoint rule (`reports_metric`).
EVERY_TRIAL_METRICS = ("step", "sts_dev", "best_sts_dev", "sts_test_at_best_dev", "best_step", "total_steps",
                       "train_loss", "lr")
RULE_METRICS = {
    "last": ("sts_test_last",),
    "validation_loss": ("validation_loss", "best_validation_loss", "sts_test_at_best_validation_loss",
                        "best_validation_step"),
    "best_task_dev": ("task_dev", "best_task_dev", "sts_test_at_best_task_dev", "best_task_step"),
}


@dataclass
class TrainingSetup:
    """What a method contributes to the shared loop.

    model: the SentenceTransformer that is evaluated; module: everything optimised and checkpointed (it
    contains the model); batch_loss(batch, rng): the method's loss on one batch of training examples.
    examples: the training examples (labelled pairs, triplets...); None for the training corpus
    (raw sentences, sampled to `sample_size`). metrics: what the preparation measured (a teacher's
    dev score, the number of silver pairs), reported with every evaluation. cache_uses: the preparation cache
    entries the method's preparation used, by stage.
    """

    model: torch.nn.Module
    module: torch.nn.Module
    batch_loss: Callable[[list, random.Random], torch.Tensor]
    examples: list | None = None
    metrics: dict = field(default_factory=dict)
    cache_uses: dict[str, CacheUse] = field(default_factory=dict)


@dataclass
class Progress:
    step: int = 0
    best_sts_dev: float = -math.inf
    sts_test_at_best_dev: float = math.nan
    best_step: int = -1
    best_validation_loss: float = math.inf
    sts_test_at_best_validation_loss: float = math.nan
    best_validation_step: int = -1
    best_task_dev: float = -math.inf
    sts_test_at_best_task_dev: float = math.nan
    best_task_step: int = -1


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

    A batch never holds a sentence twice: with fewer sentences than `batch_size`, each step is the whole
    corpus once (the epoch as one batch, as a PyTorch DataLoader gives it), so that no sentence meets its own
    copy as an in-batch negative.
    """

    GROUP_WINDOW = 50

    def __init__(self, corpus: list[str], batch_size: int, seed: int, group_by_length: bool = True) -> None:
        self.corpus = corpus
        self.batch_size = min(batch_size, len(corpus))
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


def make_optimizer(module: torch.nn.Module, training: TrainingSettings) -> torch.optim.Optimizer:
    """The trial's optimiser at its peak rate: AdamW, or RMSProp (Contrastive Tension, TSDAE paper App. B; its
    smoothing and epsilon, which the paper does not give, are PyTorch's defaults).

    The fused AdamW updates all parameters in one kernel per step instead of one small kernel per tensor,
    which matters on CPU where the update of a BERT and its decoder is a large share of a step.
    """
    if training.optimizer == "rmsprop":
        return torch.optim.RMSprop(module.parameters(), lr=training.lr, weight_decay=training.weight_decay)
    return torch.optim.AdamW(module.parameters(), lr=training.lr, weight_decay=training.weight_decay, fused=True)


# TSDAE paper App. B, CT: "1e-5 for step 1 to 500; 8e-6 for step 501 to 1000; 6e-6 for step 1001 to 1500; 4e-6
# for step 1501 to 2000; 2e-6 for others": (last step of the segment, factor of the initial rate).
CT_SEGMENTS = ((500, 1.0), (1000, 0.8), (1500, 0.6), (2000, 0.4))
CT_FINAL_FACTOR = 0.2


def ct_segment_factor(step: int) -> float:
    """The factor of the initial rate at 0-based `step` (the paper counts from 1)."""
    return next((factor for last, factor in CT_SEGMENTS if step + 1 <= last), CT_FINAL_FACTOR)


def make_lr_schedule(optimizer, training: TrainingSettings, total_steps: int, warmup_steps: int):
    """transformers' schedules: linear warm-up over `warmup_steps`, then constant or linear decay to 0 at
    `total_steps`; or the segmented-constant rate of CT (after the warm-up, if one is set)."""
    from transformers import get_constant_schedule_with_warmup, get_linear_schedule_with_warmup

    if training.lr_schedule == "linear":
        return get_linear_schedule_with_warmup(optimizer, warmup_steps, total_steps)
    if training.lr_schedule == "ct_segments":
        return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: (
            step / warmup_steps if step < warmup_steps else ct_segment_factor(step)))
    return get_constant_schedule_with_warmup(optimizer, warmup_steps)


def training_step(setup: TrainingSetup, optimizer, lr_schedule, schedule: BatchSchedule, seed: int, step: int,
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
    lr_schedule.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()


def split_validation(corpus: list[str], size: int, seed: int) -> tuple[list[str], list[str]]:
    """(training sentences, `size` held-out validation sentences), drawn with the trial's seed."""
    if size >= len(corpus):
        raise InputError(f"validation_size {size} leaves no training sentences of the corpus's {len(corpus)}")
    order = list(range(len(corpus)))
    random.Random(step_seed(seed, -(10**9))).shuffle(order)
    held_out = set(order[:size])
    return ([s for i, s in enumerate(corpus) if i not in held_out], [corpus[i] for i in sorted(held_out)])


@torch.no_grad()
def validation_loss(setup: TrainingSetup, sentences: list[str], batch_size: int, seed: int) -> float:
    """The method's loss on held-out sentences: in training mode (contrastive views need dropout), with noise
    and dropout seeded identically at every evaluation, so two checkpoints are compared on the same draws."""
    losses, sizes = [], []
    for index, start in enumerate(range(0, len(sentences), batch_size)):
        batch = sentences[start:start + batch_size]
        torch.manual_seed(step_seed(seed, -(10**6) - index))
        losses.append(setup.batch_loss(batch, random.Random(step_seed(seed, -(10**6) - index))).item())
        sizes.append(len(batch))
    return float(np.average(losses, weights=sizes))


def sample_corpus(corpus: list[str], sample_size: int | None, seed: int) -> list[str]:
    """The first `sample_size` sentences of a seeded shuffle (all sentences when None or larger)."""
    if sample_size is None or sample_size >= len(corpus):
        return corpus
    return random.Random(seed).sample(corpus, sample_size)


def run_trial(trial: Trial, build_setup: Callable[[Trial], TrainingSetup], session=None,
              clock: Callable[[], float] = time.perf_counter) -> Progress:
    """Train one configuration for its steps or epochs, evaluating, reporting and checkpointing as described
    above; `clock` (seconds) times the preparation and the steps."""
    started = clock()
    session = session or TuneSession()
    seed, training, evaluation = trial.seed, trial.training, trial.evaluation
    cache = PreparationCache(training.preparation_cache)
    seed_everything(seed)
    dev = StsEvaluator(read_scored_pairs(evaluation.dev_file, evaluation.eval_format, "dev"))
    test = StsEvaluator(read_scored_pairs(evaluation.test_file, evaluation.eval_format, "test"))
    tasks = build_tasks(evaluation.eval_tasks or {})
    setup = build_setup(trial)
    by_validation_loss = evaluation.select_checkpoint == "validation_loss"
    by_task = evaluation.select_checkpoint == "best_task_dev"
    if by_task:
        selection_key = task_metric_key(tasks[evaluation.selection_task], evaluation.selection_metric)
    corpus, validation = _trial_corpus(setup, training, evaluation, seed)
    max_steps, eval_steps = training.total_steps(len(corpus)), training.evaluation_interval(len(corpus))
    setup.module.train()
    optimizer = make_optimizer(setup.module, training)
    lr_schedule = make_lr_schedule(optimizer, training, max_steps, training.warmup(len(corpus)))
    # the selected checkpoint's model weights, kept only when tasks are scored at the end or the model is kept
    keeps_selected = bool(tasks) or evaluation.keep_model
    progress, selected_weights, resumed_at = _restore(session, setup, optimizer, lr_schedule)

    schedule = BatchSchedule(corpus, training.batch_size, seed, training.group_by_length)
    losses: list[float] = []
    step_seconds: list[float] = []  # of the steps since the last report
    first_report = True
    evaluation_seconds = checkpoint_seconds = 0.0
    while True:
        at_eval = progress.step % eval_steps == 0 or progress.step == max_steps
        if at_eval and progress.step != resumed_at:
            evaluated = clock()
            scorers = untrained_scorers(cache, setup.model, dev, test) if progress.step == 0 else (dev, test)
            metrics = setup.metrics | _evaluate(setup.model, *scorers, progress) | {"total_steps": max_steps}
            if by_validation_loss:
                metrics |= _select_by_validation_loss(setup, validation, training.batch_size, seed, test, progress)
            if evaluation.select_checkpoint == "last" and progress.step >= max_steps:
                metrics["sts_test_last"] = test(setup.model)
            if by_task:
                metrics |= _select_by_task_dev(setup.model, tasks[evaluation.selection_task], selection_key, test,
                                               progress)
            selected_step = (progress.best_validation_step if by_validation_loss else
                             progress.best_task_step if by_task else progress.best_step)
            if keeps_selected and selected_step == progress.step:
                selected_weights = {key: value.detach().clone() for key, value in setup.model.state_dict().items()}
            if tasks and progress.step >= max_steps:
                metrics |= _final_task_metrics(setup, evaluation, tasks, selected_weights, selected_step,
                                                progress)
            if losses:
                metrics["train_loss"] = float(np.mean(losses))
                metrics["lr"] = lr_schedule.get_last_lr()[0]
                losses = []
            if step_seconds:
                metrics["seconds_per_step"] = float(np.median(step_seconds))
                step_seconds = []
            if progress.step == 0:
                metrics["preparation_seconds"] = clock() - started
            else:
                evaluation_seconds += clock() - evaluated
            if first_report and (uses := setup.cache_uses | cache.used):
                metrics[RESULT_KEY] = {stage: {"key": use.key, "status": use.status} for stage, use in uses.items()}
            first_report = False
            checkpoint_seconds = _checkpoint_and_report(
                session, metrics, setup, optimizer, lr_schedule, progress, selected_weights,
                evaluation.keep_model and progress.step >= max_steps, evaluation.select_checkpoint == "last",
                clock, evaluation_seconds, checkpoint_seconds)
        if progress.step >= max_steps:
            return progress
        step_started = clock()
        losses.append(training_step(setup, optimizer, lr_schedule, schedule, seed, progress.step, training.precision))
        step_seconds.append(clock() - step_started)
        progress.step += 1


def _trial_corpus(setup: TrainingSetup, training, evaluation: EvaluationSettings, seed: int):
    """(training sentences, validation sentences) of a trial: the setup's own examples, else its corpus file read,
    with the validation sentences --select-checkpoint validation_loss scores (read, or split off the corpus), and
    the sentences sampled to the trial's sample size."""
    by_validation_loss = evaluation.select_checkpoint == "validation_loss"
    validation: list[str] = []
    if setup.examples is not None:
        return setup.examples, validation
    corpus = read_corpus(training.corpus_file())
    if by_validation_loss and evaluation.validation_file:
        validation = read_corpus(evaluation.validation_file)
    elif by_validation_loss:
        corpus, validation = split_validation(corpus, evaluation.validation_size, seed)
    return sample_corpus(corpus, training.sample_size, seed), validation


def _restore(session, setup: TrainingSetup, optimizer, lr_schedule):
    """(progress, selected checkpoint's weights, step resumed at) of a trial: from the session's latest checkpoint,
    loaded into the module, optimizer and schedule, or fresh (Progress(), None, None)."""
    checkpoint_dir = session.latest_checkpoint_dir()
    if checkpoint_dir is None:
        return Progress(), None, None
    state = torch.load(Path(checkpoint_dir) / CHECKPOINT_FILE, weights_only=False)
    setup.module.load_state_dict(state["module"])
    optimizer.load_state_dict(state["optimizer"])
    lr_schedule.load_state_dict(state["lr_schedule"])
    progress = Progress(**state["progress"])
    return progress, state.get("selected_weights"), progress.step


def _final_task_metrics(setup: TrainingSetup, evaluation: EvaluationSettings, tasks: dict, selected_weights,
                        selected_step: int, progress: Progress) -> dict:
    """The --eval-task tasks' scores of the selected checkpoint (the last with --select-checkpoint last), their
    per-query scores and artifacts, and the selection task's dev score."""
    last = evaluation.select_checkpoint == "last"
    weights = setup.model.state_dict() if last else selected_weights
    final = score_tasks_with_weights(setup.model, weights, tasks, checkpoint_revision(
        current_trial_id(), progress.step if last else selected_step))
    metrics = dict(final.metrics)
    metrics["per_query"] = final.per_query
    if final.artifacts:  # e.g. MTEB's result JSON (sentsweep.tasks.mteb_tasks)
        metrics["artifacts"] = final.artifacts
    if evaluation.selection_task in tasks:
        by_task = evaluation.select_checkpoint == "best_task_dev"
        metrics[SELECTED_TASK_DEV] = progress.best_task_dev if by_task else selected_task_dev(
            setup.model, weights, tasks[evaluation.selection_task], evaluation.selection_metric)
    return metrics


def _checkpoint_and_report(session, metrics: dict, setup: TrainingSetup, optimizer, lr_schedule, progress: Progress,
                           selected_weights, keep_model: bool, last: bool, clock: Callable[[], float],
                           evaluation_seconds: float, checkpoint_seconds: float) -> float:
    """Save the trial's checkpoint (and, with `keep_model`, its selected model: the last with `last`) and report
    `metrics` with it to the session; returns the seconds spent saving and handing checkpoints over so far."""
    with tempfile.TemporaryDirectory() as directory:
        saving = clock()
        torch.save(
            {
                "module": setup.module.state_dict(),
                "optimizer": optimizer.state_dict(),
                "lr_schedule": lr_schedule.state_dict(),
                "progress": asdict(progress),
                "selected_weights": selected_weights,
            },
            Path(directory) / CHECKPOINT_FILE,
        )
        if keep_model:
            save_selected_model(setup.model, None if last else selected_weights, Path(directory) / MODEL_FOLDER)
        checkpoint_seconds += clock() - saving
        metrics |= {"evaluation_seconds": evaluation_seconds, "checkpoint_seconds": checkpoint_seconds}
        handing = clock()
        session.report(metrics, Path(directory))
        checkpoint_seconds += clock() - handing
    return checkpoint_seconds


def reports_metric(evaluation: EvaluationSettings, metric: str) -> bool | None:
    """Whether a trial of `evaluation`'s settings reports `metric`: a score of every trial, of its checkpoint rule
    (`sts_test_last` only where it reports its last checkpoint), `selected_task_dev` where a selection task is
    scored, or a metric of a registered task (`askubuntu_map`) where that task is one of its `eval_tasks`; None for
    a metric the loop does not report (a method's own, such as a teacher's score)."""
    task_names = sorted(TASKS.names(), key=len, reverse=True)
    tasks = evaluation.eval_tasks or {}
    if metric in EVERY_TRIAL_METRICS:
        return True
    for rule, metrics in RULE_METRICS.items():
        if metric in metrics:
            return evaluation.select_checkpoint == rule
    if metric == SELECTED_TASK_DEV:
        return evaluation.selection_task in tasks
    task = next((name for name in task_names if metric.startswith(f"{name}_")), None)
    return None if task is None else task in tasks


def save_selected_model(model, weights: dict | None, folder: Path) -> None:
    """`model` with `weights` loaded (None: as it is) saved as a sentence-transformers folder; the trained model
    is left as it is."""
    selected = copy.deepcopy(model)
    if weights is not None:
        selected.load_state_dict(weights)
    selected.save(str(folder))


def checkpoint_revision(trial_id: str | None, step: int) -> str:
    """What a trained checkpoint's records name as its model's revision: "trial-<Ray Tune trial id>-step-<step>"
    ("step-<step>" outside Ray Tune), so that MTEB's result files of different trials and checkpoints of one model
    lie in folders of their own."""
    return f"trial-{trial_id}-step-{step}" if trial_id else f"step-{step}"


def score_tasks_with_weights(model, weights: dict, tasks: dict, revision: str | None = None):
    """The tasks' test metrics of `model` with `weights` loaded (a copy: the trained model is left as it is), the
    copy's records naming `revision` (`checkpoint_revision`) as its model's revision."""
    selected = copy.deepcopy(model)
    selected.load_state_dict(weights)
    if revision is not None and getattr(selected, "model_card_data", None) is not None:
        selected.model_card_data.base_model_revision = revision
    return evaluate_tasks(tasks, EmbeddingScorer(selected), "test")


def selected_task_dev(model, weights: dict, task, metric: str | None) -> float:
    """The reported checkpoint's score on the selection task's dev split (its main metric, or `metric`), where the
    checkpoint is selected by another rule (the last, or STS-B dev): so that a stage which selects on the task and
    one that does not are compared on the same split (TSDAE §6, Figure 2); nan for a task without a dev split."""
    if "dev" not in task.splits:
        return math.nan
    selected = copy.deepcopy(model)
    selected.load_state_dict(weights)
    return task.evaluate(EmbeddingScorer(selected), "dev").metrics[task_metric_key(task, metric)]


def _keep_if_best(progress: Progress, score: float, fields: tuple[str, str, str], test: StsEvaluator, model,
                  lower_is_better: bool = False) -> dict:
    """When `score` beats the best so far, keep it, the STS test score of this checkpoint and the step, in the
    `progress` fields (best, test at best, best step); returns those three fields as metrics."""
    best, test_at_best, best_step = fields
    if (score < getattr(progress, best)) if lower_is_better else (score > getattr(progress, best)):
        setattr(progress, best, score)
        setattr(progress, test_at_best, test(model))
        setattr(progress, best_step, progress.step)
    return {name: getattr(progress, name) for name in fields}


def untrained_scorers(cache: PreparationCache, model, dev: StsEvaluator, test: StsEvaluator):
    """The (dev, test) scorers of step 0: they return the untrained model's scores, computed once per model and
    pairs with the cache on."""
    scores = cache.get_or_compute(
        UNTRAINED_EVALUATION,
        lambda: {"model": module_digest(model), "dev": pairs_digest(dev.pairs), "test": pairs_digest(test.pairs)},
        lambda: {"sts_dev": dev(model), "sts_test": test(model)})
    return (lambda _: scores["sts_dev"]), (lambda _: scores["sts_test"])


def _evaluate(model, dev: StsEvaluator, test: StsEvaluator, progress: Progress) -> dict:
    """Score dev; on a new best, score test for this checkpoint. Returns the metrics to report."""
    sts_dev = dev(model)
    return {"step": progress.step, "sts_dev": sts_dev} | _keep_if_best(
        progress, sts_dev, ("best_sts_dev", "sts_test_at_best_dev", "best_step"), test, model)


def _select_by_validation_loss(setup: TrainingSetup, validation: list[str], batch_size: int, seed: int,
                               test: StsEvaluator, progress: Progress) -> dict:
    """The held-out loss; on a new lowest one, the STS test score of this checkpoint. Returns the metrics."""
    loss = validation_loss(setup, validation, batch_size, seed)
    return {"validation_loss": loss} | _keep_if_best(
        progress, loss, ("best_validation_loss", "sts_test_at_best_validation_loss", "best_validation_step"), test,
        setup.model, lower_is_better=True)


def task_metric_key(task, metric: str | None) -> str:
    """The metric key of `task` that selects the checkpoint: `metric` with the task's prefix, or its main one."""
    return task.metric_key(metric) if metric else task.main_metric_key


def _select_by_task_dev(model, task, key: str, test: StsEvaluator, progress: Progress) -> dict:
    """The selection task's dev metric; on a new best, the STS test score of this checkpoint. Returns the metrics."""
    metrics = task.evaluate(EmbeddingScorer(model), "dev").metrics
    if key not in metrics:
        raise InputError(f"selection metric {key!r} is not one of task {task.name!r}'s: {', '.join(sorted(metrics))}")
    score = metrics[key]
    return {"task_dev": score} | _keep_if_best(
        progress, score, ("best_task_dev", "sts_test_at_best_task_dev", "best_task_step"), test, model)
