"""The settings every trial shares, and the typed form of a trial: `Trial` and the `Method` that runs it.

A trial reaches its trainable as a flat dict (Ray Tune's `param_space`, logged as MLflow params under the
same keys). `sentsweep.trainables.catalog.resolve_trial` turns it into a `Trial`: the shared
`TrainingSettings` (the training loop's) and `EvaluationSettings`, and the method's own settings, each
checked field by field (see `sentsweep.settings`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from sentsweep.references import THESIS_REIML_2023, TSDAE, Reference
from sentsweep.settings import Settings, cited, project_choice, required_input, setting

# Config keys that are bookkeeping of the sweep, not settings of a method.
BOOKKEEPING_KEYS = ("method", "seed", "seeds", "__trial_index__", "stage")


@dataclass(frozen=True)
class TrainingSettings(Settings):
    """The shared training loop's settings (`sentsweep.trainables.loop`): every trained method takes them."""

    model: str = setting(help="Hugging Face model name or local folder to start from", source=required_input())
    corpus: str = setting(help="training sentences, one per line", source=required_input())
    lr: float = setting(help="AdamW learning rate (constant)", source=required_input(), gt=0)
    batch_size: int = setting(help="training examples per step", source=required_input(), ge=1)
    max_steps: int = setting(help="optimisation steps of the trial", source=required_input(), ge=1)
    eval_steps: int = setting(help="steps between two dev evaluations", source=required_input(), ge=1)
    max_seq_length: int = setting(help="tokens per text; longer texts are truncated", source=required_input(), ge=1)
    sample_size: int | None = setting(
        None, "training examples drawn with the trial's seed (none: all)", project_choice(), ge=1)
    weight_decay: float = setting(
        0.0, "AdamW weight decay",
        cited(THESIS_REIML_2023, "§5.4.1", 'TSDAE training: "a weight decay of 0.0"'), ge=0)
    precision: Literal["fp32", "bf16"] = setting(
        "fp32", "bf16: forward pass under bfloat16 autocast (weights and optimiser state stay fp32)",
        project_choice())
    group_by_length: bool = setting(
        True, "batches of similar-length texts (less padding), in random order", project_choice())


@dataclass(frozen=True)
class EvaluationSettings(Settings):
    """How every trial is scored: STS dev selects the checkpoint, test is reported for it (and tasks)."""

    dev_file: str = setting(help="scored pairs of the dev split (selects the checkpoint)", source=required_input())
    test_file: str = setting(help="scored pairs of the test split (reported only)", source=required_input())
    eval_format: Literal["stsb", "sick", "hf"] = setting(
        "stsb", "format of dev_file/test_file: STS benchmark CSV, SICK, or a `datasets` source", project_choice())
    eval_tasks: dict[str, str] | None = setting(
        None, "{task name: folder}: scored once at the end, with the selected checkpoint", project_choice())
    select_checkpoint: Literal["best_sts_dev", "last"] = setting(
        "best_sts_dev", "checkpoint whose scores are reported: best on STS dev, or the last (fixed steps)",
        cited(TSDAE, "App. A", '"evaluated every 1.5K training steps, reporting the best validation performance"'))


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
    it runs, the checks across its settings, and the work it implements."""

    name: str
    settings: type[Settings]
    run: Callable[[Trial, object], None]
    reference: Reference
    trains: bool = True
    check: Callable[[Trial], None] = lambda trial: None
    objectives: Mapping[str, type[Settings]] = field(default_factory=dict)

    def settings_groups(self) -> list[type[Settings]]:
        """Every settings class a trial of this method reads."""
        groups = [EvaluationSettings, self.settings, *self.objectives.values()]
        return ([TrainingSettings] if self.trains else []) + groups

    def setting_names(self) -> set[str]:
        return {name for group in self.settings_groups() for name in group.field_names()}
