"""The settings every trial shares, and the typed form of a trial: `Trial` and the `Method` that runs it.

A trial reaches its trainable as a flat dict (Ray Tune's `param_space`, logged as MLflow params under the
same keys). `sentsweep.trainables.catalog.resolve_trial` turns it into a `Trial`: the shared
`TrainingSettings` (the training loop's) and `EvaluationSettings`, and the method's own settings, each
checked field by field (see `sentsweep.settings`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from sentsweep.errors import InputError
from sentsweep.plugins import USER_CODE_KEY
from sentsweep.preparation_cache import Stage
from sentsweep.references import THESIS_WANG_2022, Reference
from sentsweep.settings import Settings, cited, project_choice, required_input, setting

# Config keys that are bookkeeping of the sweep, not settings of a method. `pretrained`: in a chained stage that
# starts from each configuration of an earlier stage, which one (its row of that stage's table);
# `parent_model_run_id`: the MLflow run whose model the trial starts from (lineage); `__point__`: which trial of a
# list of trials (sentsweep.search_spaces.param_spaces.points_param_space); `user_code`: the researcher's modules
# every worker imports first (sentsweep.plugins); `dataset`: which of a table's data sets the run's files are
# (a sweep's `data_labels`); `checkpoint`: which of a table's checkpoints the run's model is (a data label too);
# `target_task`: the task whose own training data the trial trained on, its in-domain column
# (sentsweep.sweep.search.target_tasks).
TASK_AXIS = "target_task"
BOOKKEEPING_KEYS = ("method", "seed", "seeds", "__trial_index__", "__point__", "stage", "pretrained",
                    "parent_model_run_id", "dataset", "checkpoint", TASK_AXIS, USER_CODE_KEY)

# The reported checkpoint's dev score on `selection_task`, whatever rule selected it (the loop's `selected_task_dev`).
SELECTED_TASK_DEV = "selected_task_dev"

# The loop's default schedule, for every method whose protocol gives none: the seeds give it for TSDAE only.
TSDAE_SCHEDULE = ('TSDAE\'s, Reiml 2023 §5.4.1: "constant learning rate of 3e-5, no warm-up period, and a weight decay '
                  'of 0.0"; the other methods\' protocols give their own')


@dataclass(frozen=True)
class TrainingSettings(Settings):
    """The shared training loop's settings (`sentsweep.trainables.loop`): every trained method takes them.

    A trial lasts `max_steps` steps, or `epochs` passes over its training examples (both: whichever ends first).
    """

    model: str = setting(help="Hugging Face model name or local folder to start from", source=required_input())
    lr: float = setting(help="peak learning rate (reached after the warm-up)", source=required_input(), gt=0)
    batch_size: int = setting(help="training examples per step", source=required_input(), ge=1)
    max_seq_length: int = setting(help="tokens per text; longer texts are truncated", source=required_input(), ge=1)
    corpus: str | None = setting(None, "training sentences, one per line (none: the sweep gives no corpus, which "
                                 "only a method that reads none may run without)", required_input())
    max_steps: int | None = setting(
        None, "optimisation steps of the trial (with epochs: at most this many)", project_choice(), ge=1)
    epochs: int | None = setting(
        None, "passes over the training examples (none: max_steps alone decides)", project_choice(), ge=1)
    eval_steps: int | None = setting(
        None, "steps between two dev evaluations (none: at the end of each epoch)", project_choice(), ge=1)
    optimizer: Literal["adamw", "rmsprop"] = setting(
        "adamw", "the optimiser (rmsprop: Contrastive Tension's)",
        project_choice('the loop\'s default for every method: TSDAE App. B trains TSDAE and BERT-flow with AdamW '
                       '("the optimizers are AdamW, RMSProp and AdamW", CT\'s the RMSProp), Reiml 2023 §5.1 every '
                       'model ("The AdamW optimizer is used")'))
    lr_schedule: Literal["constant", "linear", "ct_segments"] = setting(
        "constant", "after the warm-up: constant; linear decay to 0 at the last step; ct_segments: x1 to step "
        "500, x0.8 to 1000, x0.6 to 1500, x0.4 to 2000, x0.2 after (TSDAE App. B, for CT)",
        project_choice(TSDAE_SCHEDULE))
    warmup_steps: int = setting(0, "steps of linear warm-up from 0 to lr", project_choice(TSDAE_SCHEDULE), ge=0)
    warmup_ratio: float = setting(0.0, "warm-up as a share of the trial's steps (instead of warmup_steps)",
                                  project_choice(TSDAE_SCHEDULE), ge=0, lt=1)
    dropout: float | None = setting(
        None, "dropout probability of the trained encoder's hidden layers and attention (none: the checkpoint's "
        "own, BERT's 0.1); the augsbert teacher keeps its checkpoint's",
        project_choice('the checkpoint\'s own; Malmberg 2021 §3.4.2 (its Table 4.1 rows) also trains at 0.3: "In the '
                       'original paper, fine-tuning using a dropout value of 0.1"'), ge=0, lt=1)
    sample_size: int | None = setting(
        None, "training examples drawn with the trial's seed (none: all)", project_choice(), ge=1)
    weight_decay: float = setting(
        0.0, "weight decay of the optimiser",
        project_choice(TSDAE_SCHEDULE), ge=0)
    precision: Literal["fp32", "bf16"] = setting(
        "fp32", "bf16: forward pass under bfloat16 autocast (weights and optimiser state stay fp32)",
        project_choice())
    group_by_length: bool = setting(
        True, "batches of similar-length texts (less padding), in random order", project_choice())
    preparation_cache: str | None = setting(
        None, "folder of the cache of preparation stages (sentsweep.preparation_cache): a sweep's is <storage "
        "path>/cache unless --no-cache; none: every stage is computed", project_choice())

    def __post_init__(self) -> None:
        if self.max_steps is None and self.epochs is None:
            raise InputError("the trial needs max_steps or epochs (or both: whichever ends first)")
        if self.warmup_steps and self.warmup_ratio:
            raise InputError(f"warmup_steps={self.warmup_steps} and warmup_ratio={self.warmup_ratio}: give one")

    def corpus_file(self) -> str:
        """The corpus, for a method that reads it; an `InputError` where the sweep gives none."""
        if self.corpus is None:
            raise InputError("the method trains on a corpus, and the sweep gives none: --corpus FILE")
        return self.corpus

    def steps_per_epoch(self, examples: int) -> int:
        return max(1, math.ceil(examples / self.batch_size))

    def total_steps(self, examples: int) -> int:
        """The trial's optimisation steps for `examples` training examples."""
        by_epochs = self.epochs * self.steps_per_epoch(examples) if self.epochs is not None else None
        return min(steps for steps in (self.max_steps, by_epochs) if steps is not None)

    def evaluation_interval(self, examples: int) -> int:
        return self.eval_steps or self.steps_per_epoch(examples)

    def warmup(self, examples: int) -> int:
        """Warm-up steps: `warmup_steps`, or `warmup_ratio` of the trial's steps (rounded up)."""
        return self.warmup_steps or math.ceil(self.warmup_ratio * self.total_steps(examples))


@dataclass(frozen=True)
class EvaluationSettings(Settings):
    """How every trial is scored: STS dev selects the checkpoint, test is reported for it (and tasks)."""

    dev_file: str = setting(help="scored pairs of the dev split (selects the checkpoint)", source=required_input())
    test_file: str = setting(help="scored pairs of the test split (reported only)", source=required_input())
    eval_format: Literal["stsb", "sick", "hf"] = setting(
        "stsb", "format of dev_file/test_file: STS benchmark CSV, SICK, or a `datasets` source", project_choice())
    eval_tasks: dict[str, str] | None = setting(
        None, "{task name: folder}: scored once at the end, with the selected checkpoint", project_choice())
    select_checkpoint: Literal["best_sts_dev", "last", "validation_loss", "best_task_dev"] = setting(
        "best_sts_dev", "checkpoint whose scores are reported: best on STS dev, the last (fixed steps), the "
        "lowest training loss on held-out corpus sentences (unsupervised methods), or best on the dev split of "
        "`selection_task`",
        project_choice('the loop\'s default for every method: TSDAE App. A\'s for TSDAE ("evaluated every 1.5K '
                       'training steps, reporting the best validation performance"), Reiml 2023 §5.1\'s for every '
                       'model ("take the model with the best Spearman or F1 score at the end")'))
    validation_size: int = setting(
        1000, "sentences held out of the corpus (seeded) whose loss selects the checkpoint, with "
        "select_checkpoint=validation_loss",
        project_choice("Wang 2022 §5.2.2 validates on a separate set of the training domain, 10k for 100k"), ge=1)
    validation_file: str | None = setting(
        None, "sentences, one per line, whose loss selects the checkpoint with select_checkpoint=validation_loss, "
        "so that the whole corpus trains (none: validation_size sentences are held out of the corpus)",
        cited(THESIS_WANG_2022, "§5.1", '"the datasets with 10k size are used as validation datasets during '
              'training, and the other sizes of datasets are used as training datasets"'))
    selection_task: str | None = setting(
        None, "with select_checkpoint=best_task_dev: the eval_tasks task whose dev split selects the checkpoint; with "
        "another rule, the task whose dev split scores the reported checkpoint (selected_task_dev)",
        cited(THESIS_WANG_2022, "§5.3.7", '"We use Recall@10 of Quora devset (validation task) as the best model '
              'checkpoint selection"'))
    selection_metric: str | None = setting(
        None, "the selection task's metric, without its prefix (none: the task's main metric), e.g. recall@10",
        cited(THESIS_WANG_2022, "§5.3.7", "Recall@10 for Quora"))
    keep_model: bool = setting(
        False, "save the selected checkpoint as a sentence-transformers folder in the trial's last checkpoint, for "
        "the sweep to log to MLflow (a sweep sets it from --keep-models)", project_choice())

    def __post_init__(self) -> None:
        if (self.select_checkpoint == "best_task_dev" or self.selection_task is not None) and \
                self.selection_task not in (self.eval_tasks or {}):
            needs = "select_checkpoint='best_task_dev' needs selection_task to name" if \
                self.select_checkpoint == "best_task_dev" else "selection_task must name"
            raise InputError(f"{needs} one of the eval tasks "
                             f"({', '.join(self.eval_tasks or {}) or 'none given: add --eval-task'}); got "
                             f"{self.selection_task!r}")


@dataclass(frozen=True)
class Trial:
    """One trial's settings, typed: its method, seed, the shared groups and the method's own settings.

    `training` is None for methods that train nothing (the lexical baselines). `objectives` holds the
    settings of each objective of an unsupervised method ("mlm+nm": those of mlm and of nm), by name.
    """

    method: str
    seed: int
    evaluation: EvaluationSettings
    training: TrainingSettings | None
    settings: Settings
    objectives: Mapping[str, Settings] = field(default_factory=dict)


@dataclass(frozen=True)
class Method:
    """A trainable method: its name, its own settings, whether it runs the shared training loop, how a trial of
    it runs, the checks across its settings, the work it implements, and the preparation stages it caches
    (`sentsweep.preparation_cache`; the loop's own, the untrained model's evaluation, besides)."""

    name: str
    settings: type[Settings]
    run: Callable[[Trial, object], None]
    reference: Reference
    trains: bool = True
    check: Callable[[Trial], None] = lambda trial: None
    objectives: Mapping[str, type[Settings]] = field(default_factory=dict)
    cached_stages: tuple[Stage, ...] = ()
    citation: str = ""  # the work as BibTeX, where the method has its own (a sentence-transformers loss)
    # The data settings a trial of this method is given but does not read (a method of labelled pairs reads no
    # corpus): `resolve_trial` sets them to none, so that they are neither read nor recorded as the trial's inputs.
    unread_data: Callable[[Trial], tuple[str, ...]] = lambda trial: ()
    # A trainer script of one's own (sentsweep.trainables.trainer_script): its own trainer, not the shared loop,
    # decides what of `TrainingSettings` it uses, and the trial reports what it really used.
    own_trainer: bool = False

    def settings_groups(self) -> list[type[Settings]]:
        """Every settings class a trial of this method reads."""
        groups = [EvaluationSettings, self.settings, *self.objectives.values()]
        return ([TrainingSettings] if self.trains else []) + groups

    def reads_corpus(self, trial: Trial) -> bool:
        """Whether a trial of this method reads the corpus (`TrainingSettings.corpus`, or a setting of its own of
        that name, as TF-IDF's vocabulary). A trainer script reads it only where its script asks `run.training`."""
        if self.own_trainer or "corpus" in self.unread_data(trial):
            return False
        return self.trains or "corpus" in self.settings.field_names()

    def setting_names(self) -> set[str]:
        return {name for group in self.settings_groups() for name in group.field_names()}
