"""A `SentenceTransformerTrainer` script of one's own as a sweep's method: seed-averaged tables in a few lines.

A researcher's script becomes a function registered as a method; sentsweep gives it the trial's seed and typed
settings (`run.seed`, `run.settings`, `run.training`) and a callback (`run.callback`) that scores the sweep's STS
dev split at the trainer's evaluations and reports the selected checkpoint's scores to Ray Tune and MLflow:

    @trainer_script("my_script", MySettings, MY_PAPER)
    def my_script(run: TrainerRun) -> None:
        model = SentenceTransformer(run.training.model)
        args = SentenceTransformerTrainingArguments(output_dir=run.output_dir, seed=run.seed, report_to="none",
                                                    max_steps=run.training.max_steps, ...)
        trainer = SentenceTransformerTrainer(model=model, args=args, ..., callbacks=[run.callback])
        trainer.train()

Details: docs/extending.md, "How a trainer script becomes a method"."""

from __future__ import annotations

import copy
import dataclasses
import math
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sentence_transformers.sentence_transformer.evaluation import SentenceEvaluator
from transformers import TrainerCallback

from sentsweep.data import read_scored_pairs
from sentsweep.errors import InputError
from sentsweep.references import Reference
from sentsweep.settings import Settings
from sentsweep.tasks.sts import StsEvaluator
from sentsweep.trainables.catalog import METHODS
from sentsweep.trainables.loop import MODEL_FOLDER, seed_everything
from sentsweep.trainables.resolved_settings import NOT_READ
from sentsweep.trainables.session import REPORTED_PARAMS_KEY, STEP_METRICS_KEY, TuneSession
from sentsweep.trainables.settings import EvaluationSettings, Method, TrainingSettings, Trial

SWEEP_DEV_METRIC = "sts_dev"  # what `run.evaluator` returns (the trainer logs it as eval_sts_dev)


def _value(choice) -> str:
    """An argument's choice as text (transformers keeps some as enums: IntervalStrategy.STEPS is 'steps')."""
    return str(getattr(choice, "value", choice))


def _epochs(args, model):
    return None if args.max_steps > 0 else args.num_train_epochs  # transformers: max_steps > 0 overrides epochs


# The settings of `TrainingSettings` a trainer takes from its `TrainingArguments` (or its model): the value the
# trainer really used, whatever the protocol gave.
TRAINER_FIELDS: dict[str, Callable] = {
    "lr": lambda args, model: args.learning_rate,
    "batch_size": lambda args, model: args.per_device_train_batch_size,
    "max_steps": lambda args, model: args.max_steps if args.max_steps > 0 else None,
    "epochs": _epochs,
    "eval_steps": lambda args, model: args.eval_steps if _value(args.eval_strategy) == "steps" else None,
    "warmup_steps": lambda args, model: args.warmup_steps,
    "warmup_ratio": lambda args, model: getattr(args, "warmup_ratio", None),
    "weight_decay": lambda args, model: args.weight_decay,
    "lr_schedule": lambda args, model: _value(args.lr_scheduler_type),
    "optimizer": lambda args, model: _value(args.optim),
    "precision": lambda args, model: "bf16" if args.bf16 else "fp16" if args.fp16 else "fp32",
    # transformers 5 names it a sampling strategy; 4 had a flag of this name
    "group_by_length": lambda args, model: (getattr(args, "train_sampling_strategy", None) == "group_by_length"
                                            or bool(getattr(args, "group_by_length", False))),
    "max_seq_length": lambda args, model: model.max_seq_length,
}


class RecordedSettings:
    """A settings object whose fields a script reads through it are recorded (`read`): what of `run.training` a
    trainer script asked for. Reading a data file the sweep does not give (`corpus`: none) is an `InputError`."""

    def __init__(self, settings: Settings) -> None:
        object.__setattr__(self, "_settings", settings)
        object.__setattr__(self, "read", set())

    def __getattr__(self, name: str):
        value = getattr(self._settings, name)
        if name in self._settings.field_names():
            self.read.add(name)
            if name == "corpus" and value is None:
                raise InputError("the trainer script reads run.training.corpus, and the sweep gives none: --corpus "
                                 "FILE")
        return value

    def __setattr__(self, name: str, value) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


@dataclass
class TrainerRun:
    """What a trainer script gets: the trial's seed and typed settings, a scratch folder for the trainer's own
    output, the callback to pass to `SentenceTransformerTrainer(callbacks=[...])`, and an evaluator of the sweep's
    STS dev split to pass as its `evaluator` (then the dev split is scored once per evaluation).

    Examples:
        Inside a trainer script (examples/trainer_script.py is a whole one):

        >>> args = SentenceTransformerTrainingArguments(  # doctest: +SKIP
        ...     output_dir=run.output_dir, seed=run.seed, max_steps=run.training.max_steps,
        ...     per_device_train_batch_size=run.training.batch_size, learning_rate=run.training.lr,
        ...     eval_strategy="steps", eval_steps=run.training.eval_steps, report_to="none")
        >>> trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=train_dataset,  # doctest: +SKIP
        ...                                      loss=CoSENTLoss(model, scale=run.settings.scale),
        ...                                      evaluator=run.evaluator, callbacks=[run.callback])
    """

    seed: int
    settings: Settings
    training: TrainingSettings
    evaluation: EvaluationSettings
    output_dir: str
    callback: SweepReportCallback
    evaluator: SentenceEvaluator


class SweepDevEvaluator(SentenceEvaluator):
    """The sweep's STS dev score (Spearman x 100 of cosine) as a sentence-transformers evaluator; the callback reads
    the score of each step from it rather than scoring the dev split again."""

    def __init__(self, callback: SweepReportCallback) -> None:
        super().__init__()
        self.callback = callback
        self.primary_metric = SWEEP_DEV_METRIC

    def __call__(self, model, output_path: str | None = None, epoch: float = -1, steps: int = -1) -> dict:
        score = self.callback.dev(model)
        self.callback.dev_scores[steps] = score
        return {SWEEP_DEV_METRIC: score}


class SweepReportCallback(TrainerCallback):
    """Scores each evaluation of the trainer on the sweep's STS dev (and test, on a new best) and reports it to
    Ray Tune with the trainer's own metrics, its logs by step, the timing metrics and (first) the settings the
    trainer really used; keeps the dev-selected weights for the end."""

    def __init__(self, trial: Trial, session, training: RecordedSettings, started: float,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        evaluation = trial.evaluation
        self.seed = trial.seed
        self.keep_model = evaluation.keep_model
        self.session = session
        self.training = training
        self.clock, self.started = clock, started
        self.dev = StsEvaluator(read_scored_pairs(evaluation.dev_file, evaluation.eval_format, "dev"))
        self.test = StsEvaluator(read_scored_pairs(evaluation.test_file, evaluation.eval_format, "test"))
        self.dev_scores: dict[int, float] = {}  # by step, as `run.evaluator` scored them
        self.best_sts_dev, self.sts_test_at_best_dev, self.best_step = -math.inf, math.nan, -1
        self.selected_weights: dict | None = None
        self.model = None
        self.scored_step = self.last_step = -1
        self.logged: list[tuple[str, float, int]] = []  # the trainer's logs since the last report
        self.step_seconds: list[float] = []  # of the training steps since the last report
        self.evaluation_seconds = self.checkpoint_seconds = 0.0
        self._step_started = self._step_ended = started
        self._first_extras: dict = {}

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        if args.seed != self.seed:
            raise InputError(f"the trainer script's TrainingArguments has seed={args.seed}, not the trial's seed "
                             f"{self.seed}: pass seed=run.seed")
        self.model = model
        self._first_extras = {REPORTED_PARAMS_KEY: self.used_settings(args, model)}
        self._score(0, {})  # the untrained model, as every method's step 0

    def used_settings(self, args, model) -> dict:
        """The training settings as the trainer used them (`TRAINER_FIELDS`), the others as the script read them
        (or not), and every argument of its `TrainingArguments` as `trainer.<name>`."""
        settings = self.training._settings
        used = {}
        for field in dataclasses.fields(settings):
            if field.name in TRAINER_FIELDS:
                used[field.name] = TRAINER_FIELDS[field.name](args, model)
            elif field.name == "model" and hasattr(model[0], "auto_model"):
                used[field.name] = model[0].auto_model.config.name_or_path
            else:
                used[field.name] = getattr(settings, field.name) if field.name in self.training.read else NOT_READ
        return used | {f"trainer.{key}": value for key, value in args.to_dict().items()}

    def on_step_begin(self, args, state, control, **kwargs):
        self._step_started = self.clock()

    def on_step_end(self, args, state, control, **kwargs):
        self._step_ended = self.clock()
        self.step_seconds.append(self._step_ended - self._step_started)

    def on_log(self, args, state, control, logs=None, **kwargs):
        """The trainer's own logs (its loss, gradient norm, rate), at their step; its evaluations come with
        `on_evaluate`."""
        self.logged += [(key, float(value), state.global_step) for key, value in (logs or {}).items()
                        if isinstance(value, (int, float)) and not isinstance(value, bool)
                        and not key.startswith("eval_") and math.isfinite(value)]

    def on_evaluate(self, args, state, control, metrics=None, model=None, **kwargs):
        self.model = model or self.model
        # the evaluation's time: the trainer's own (from the end of its step) and the sweep's scoring
        self._score(state.global_step, metrics or {}, evaluation_started=self._step_ended)

    def on_train_end(self, args, state, control, **kwargs):
        self.last_step = state.global_step
        if self.scored_step != state.global_step:  # the last step is scored, as every method's is
            self._score(state.global_step, {}, evaluation_started=self.clock())

    def _score(self, step: int, trainer_metrics: dict, evaluation_started: float | None = None) -> None:
        """Score dev (test on a new best) and report; step 0's time is preparation's, a later one's evaluation's."""
        self.scored_step = step
        was_training = self.model.training
        self.model.eval()
        sts_dev = self.dev_scores.pop(step) if step in self.dev_scores else self.dev(self.model)
        if sts_dev > self.best_sts_dev:
            self.best_sts_dev, self.sts_test_at_best_dev, self.best_step = sts_dev, self.test(self.model), step
            if self.keep_model:
                self.selected_weights = {key: value.detach().clone() for key, value in self.model.state_dict().items()}
        self.model.train(was_training)
        own = {key: float(value) for key, value in trainer_metrics.items()
               if isinstance(value, (int, float)) and not isinstance(value, bool) and key != f"eval_{SWEEP_DEV_METRIC}"}
        timing = {"preparation_seconds": self.clock() - self.started} if step == 0 else {}
        if step != 0 and evaluation_started is not None:
            self.evaluation_seconds += self.clock() - evaluation_started
        self.report({"step": step, "sts_dev": sts_dev, "best_sts_dev": self.best_sts_dev,
                     "sts_test_at_best_dev": self.sts_test_at_best_dev, "best_step": self.best_step} | own | timing)

    def report(self, metrics: dict, final: bool = False) -> None:
        if self.step_seconds:
            metrics["seconds_per_step"] = float(np.median(self.step_seconds))
            self.step_seconds = []
        extras = {STEP_METRICS_KEY: self.logged} if self.logged else {}
        self.logged = []
        saving = self.clock()
        with tempfile.TemporaryDirectory() as directory:
            if final and self.keep_model and self.selected_weights is not None:
                selected = copy.deepcopy(self.model)
                selected.load_state_dict(self.selected_weights)
                selected.save(str(Path(directory) / MODEL_FOLDER))
            self.session.report(metrics | extras | self._first_extras | {
                "evaluation_seconds": self.evaluation_seconds, "checkpoint_seconds": self.checkpoint_seconds},
                Path(directory))
        self._first_extras = {}
        self.checkpoint_seconds += self.clock() - saving

    def finish(self) -> None:
        """The last report: the selection's scores and the selected model (for MLflow, with keep_model)."""
        if self.model is None or self.last_step < 0:
            raise InputError("the trainer script did not train with run.callback among its trainer's callbacks")
        self.report({"step": self.last_step, "best_sts_dev": self.best_sts_dev, "total_steps": self.last_step,
                     "sts_test_at_best_dev": self.sts_test_at_best_dev, "best_step": self.best_step}, final=True)


def trainer_script(name: str, settings: type[Settings], reference: Reference):
    """Register the decorated `script(run: TrainerRun)` as method `name`, whose own settings are `settings` (a
    `Settings` class) and which `reference` defines; each trial calls the script once with its `TrainerRun`.

    Examples:
        A `SentenceTransformerTrainer` script as a method (examples/trainer_script.py sweeps it over CoSENT's scale):

        >>> @sentsweep.trainer_script("cosent_script", ScriptSettings, COSENT)  # doctest: +SKIP
        ... def train_cosent(run: sentsweep.TrainerRun) -> None:
        ...     model = SentenceTransformer(run.training.model)
        ...     loss = CoSENTLoss(model, scale=run.settings.scale)
        ...     trainer = SentenceTransformerTrainer(model=model, args=arguments(run), train_dataset=pairs(run),
        ...                                          loss=loss, evaluator=run.evaluator, callbacks=[run.callback])
        ...     trainer.train()
    """

    def register(script: Callable[[TrainerRun], None]):
        def run(trial: Trial, session=None) -> None:
            started = time.perf_counter()
            session = session or TuneSession()
            seed_everything(trial.seed)
            training = RecordedSettings(trial.training)
            callback = SweepReportCallback(trial, session, training, started)
            with tempfile.TemporaryDirectory(prefix="sentsweep-trainer-") as output_dir:
                script(TrainerRun(trial.seed, trial.settings, training, trial.evaluation, output_dir, callback,
                                  SweepDevEvaluator(callback)))
            callback.finish()

        METHODS.add(name, Method(name, settings, run, reference, own_trainer=True), origin=script.__module__)
        return script

    return register
