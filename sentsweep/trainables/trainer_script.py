"""A `SentenceTransformerTrainer` script of one's own as a sweep's method: seed-averaged tables in a few lines.

A researcher's script, as sentence-transformers' docs write one (a model, a dataset, a loss, an evaluator,
`SentenceTransformerTrainingArguments`, `trainer.train()`), becomes a function registered as a method:

    @trainer_script("my_script", MySettings, MY_PAPER)
    def my_script(run: TrainerRun) -> None:
        model = SentenceTransformer(run.training.model)
        args = SentenceTransformerTrainingArguments(output_dir=run.output_dir, seed=run.seed, report_to="none",
                                                    max_steps=run.training.max_steps, ...)
        trainer = SentenceTransformerTrainer(model=model, args=args, ..., callbacks=[run.callback])
        trainer.train()

sentsweep handles what makes its results comparable with every other method's: the seed (`run.seed`, which
the script's arguments must carry; a different one is refused), the typed settings of the trial (`run.settings`,
the method's own; `run.training`, the shared loop's: model, rate, batch, steps), and the selection on dev. The
callback `run.callback` (a transformers `TrainerCallback`) scores the model on the sweep's STS dev split before the
first step and at each of the trainer's evaluations, and on its test split when dev improves, and reports those
(`sts_dev`, `best_sts_dev`, `sts_test_at_best_dev`, `best_step`) with the trainer's own evaluation metrics to Ray
Tune, hence to the trial's MLflow run. With `keep_model`, the dev-selected model is saved for MLflow at the end.

A trial is not resumed from the middle: a retried one runs the script again from its start.
"""

from __future__ import annotations

import copy
import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from transformers import TrainerCallback

from sentsweep.data import read_scored_pairs
from sentsweep.errors import InputError
from sentsweep.references import Reference
from sentsweep.settings import Settings
from sentsweep.tasks.sts import StsEvaluator
from sentsweep.trainables.catalog import METHODS
from sentsweep.trainables.loop import MODEL_FOLDER, seed_everything
from sentsweep.trainables.session import TuneSession
from sentsweep.trainables.settings import EvaluationSettings, Method, TrainingSettings, Trial


@dataclass
class TrainerRun:
    """What a trainer script gets: the trial's seed and typed settings, a scratch folder for the trainer's own
    output, and the callback to pass to `SentenceTransformerTrainer(callbacks=[...])`."""

    seed: int
    settings: Settings
    training: TrainingSettings
    evaluation: EvaluationSettings
    output_dir: str
    callback: SweepReportCallback


class SweepReportCallback(TrainerCallback):
    """Scores each evaluation of the trainer on the sweep's STS dev (and test, on a new best) and reports it to
    Ray Tune with the trainer's own metrics; keeps the dev-selected weights for the end."""

    def __init__(self, trial: Trial, session) -> None:
        evaluation = trial.evaluation
        self.seed = trial.seed
        self.keep_model = evaluation.keep_model
        self.session = session
        self.dev = StsEvaluator(read_scored_pairs(evaluation.dev_file, evaluation.eval_format, "dev"))
        self.test = StsEvaluator(read_scored_pairs(evaluation.test_file, evaluation.eval_format, "test"))
        self.best_sts_dev, self.sts_test_at_best_dev, self.best_step = -math.inf, math.nan, -1
        self.selected_weights: dict | None = None
        self.model = None
        self.scored_step = self.last_step = -1

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        if args.seed != self.seed:
            raise InputError(f"the trainer script's TrainingArguments has seed={args.seed}, not the trial's seed "
                             f"{self.seed}: pass seed=run.seed")
        self.model = model
        self._score(0, {})  # the untrained model, as every method's step 0

    def on_evaluate(self, args, state, control, metrics=None, model=None, **kwargs):
        self.model = model or self.model
        self._score(state.global_step, metrics or {})

    def on_train_end(self, args, state, control, **kwargs):
        self.last_step = state.global_step
        if self.scored_step != state.global_step:  # the last step is scored, as every method's is
            self._score(state.global_step, {})

    def _score(self, step: int, trainer_metrics: dict) -> None:
        self.scored_step = step
        was_training = self.model.training
        self.model.eval()
        sts_dev = self.dev(self.model)
        if sts_dev > self.best_sts_dev:
            self.best_sts_dev, self.sts_test_at_best_dev, self.best_step = sts_dev, self.test(self.model), step
            if self.keep_model:
                self.selected_weights = {key: value.detach().clone() for key, value in self.model.state_dict().items()}
        self.model.train(was_training)
        own = {key: float(value) for key, value in trainer_metrics.items()
               if isinstance(value, (int, float)) and not isinstance(value, bool)}
        self.report({"step": step, "sts_dev": sts_dev, "best_sts_dev": self.best_sts_dev,
                     "sts_test_at_best_dev": self.sts_test_at_best_dev, "best_step": self.best_step} | own)

    def report(self, metrics: dict, final: bool = False) -> None:
        with tempfile.TemporaryDirectory() as directory:
            if final and self.keep_model and self.selected_weights is not None:
                selected = copy.deepcopy(self.model)
                selected.load_state_dict(self.selected_weights)
                selected.save(str(Path(directory) / MODEL_FOLDER))
            self.session.report(metrics, Path(directory))

    def finish(self) -> None:
        """The last report: the selection's scores and the selected model (for MLflow, with keep_model)."""
        if self.model is None or self.last_step < 0:
            raise InputError("the trainer script did not train with run.callback among its trainer's callbacks")
        self.report({"step": self.last_step, "best_sts_dev": self.best_sts_dev, "total_steps": self.last_step,
                     "sts_test_at_best_dev": self.sts_test_at_best_dev, "best_step": self.best_step}, final=True)


def trainer_script(name: str, settings: type[Settings], reference: Reference):
    """Register the decorated `script(run: TrainerRun)` as method `name`, whose own settings are `settings`."""

    def register(script: Callable[[TrainerRun], None]):
        def run(trial: Trial, session=None) -> None:
            session = session or TuneSession()
            seed_everything(trial.seed)
            callback = SweepReportCallback(trial, session)
            with tempfile.TemporaryDirectory(prefix="sentsweep-trainer-") as output_dir:
                script(TrainerRun(trial.seed, trial.settings, trial.training, trial.evaluation, output_dir, callback))
            callback.finish()

        METHODS.add(name, Method(name, settings, run, reference), origin=script.__module__)
        return script

    return register
