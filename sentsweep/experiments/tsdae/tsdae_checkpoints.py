"""TSDAE paper's other checkpoints (App. C, Table 9): TSDAE, CT and SimCSE from five pre-trained encoders.

A run starts every method from one checkpoint of Table 9, trained at the main protocol's settings (§5, App. B), one
model per target task on that task's own sentences, as Table 2 does (give each USEB task with --eval-task and its
corpus with --task-corpus). --checkpoint names Table 9's row block (ELECTRA-base, DistilRoBERTa-base, RoBERTa-base,
DistilBERT-base, BERT-base); it is logged as the param `checkpoint`, its cells are the run's reproduction targets,
and --model must be that checkpoint's hub model (App. B, Table 8), or a local copy of it. Table 9's BERT-flow rows
are not run: the project does not implement BERT-flow. The paper's standard deviations over its 5 seeds stand in
each target's note.

    python sweeps/tsdae_checkpoints.py --dry-run                  # the protocol card
    python sweeps/tsdae_checkpoints.py --quick
    python sweeps/tsdae_checkpoints.py --checkpoint RoBERTa-base --model roberta-base --sts-dir data/stsbenchmark \\
        --eval-task askubuntu=data-eval/askubuntu --task-corpus askubuntu=data-train/askubuntu/unsupervised/train.txt
"""

from dataclasses import dataclass, replace
from pathlib import Path

from sentsweep.analysis.reproduction import PublishedValue
from sentsweep.errors import InputError
from sentsweep.experiments.tsdae.useb_published import SEEDS, TASK_METRICS, USEB_TASKS
from sentsweep.references import TSDAE
from sentsweep.search_spaces.protocol import Sourced
from sentsweep.search_spaces.tsdae import MAIN_PROTOCOL
from sentsweep.settings import cited
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.options import option
from sentsweep.sweep.search.target_tasks import TASK_AXIS, PerTaskOptions, task_axis

# App. B, Table 8 ("Model checkpoints used in this work"): Table 9's checkpoints and their hub models.
CHECKPOINTS = {"ELECTRA-base": "google/electra-base-discriminator", "DistilRoBERTa-base": "distilroberta-base",
               "RoBERTa-base": "roberta-base", "DistilBERT-base": "distilbert-base-uncased",
               "BERT-base": "bert-base-uncased"}
METHODS = Sourced(["tsdae", "ct", "simcse"], cited(TSDAE, "App. C, Table 9", "TSDAE, CT, SimCSE; BERT-flow is not "
                                                   "implemented"))

# App. C, Table 9, each checkpoint's rows as printed (AskU. CQADup. TwitterP. SciDocs Avg., each "mean +/- std"),
# the four task columns kept as (mean, std); the Avg. column is not targeted.
# "ELECTRA-base" "TSDAE 56.6 +/- 1.1 8.0 +/- 0.3 69.0 +/- 1.6 66.2 +/- 5.6 49.9 +/- 1.1"
# "CT 50.3 +/- 0.4 5.0 +/- 0.2 66.5 +/- 0.7 46.1 +/- 0.6 41.6 +/- 0.8"
# "SimCSE 50.9 +/- 0.3 6.2 +/- 0.1 61.8 +/- 0.6 49.3 +/- 0.3 42.0 +/- 0.1"
# "DistilRoBERTa-base" "TSDAE 58.9 +/- 0.5 12.5 +/- 0.1 68.5 +/- 0.5 59.3 +/- 0.6 49.9 +/- 0.4"
# "CT 57.9 +/- 0.8 13.8 +/- 0.3 63.6 +/- 1.4 62.7 +/- 0.5 49.8 +/- 0.4"
# "SimCSE 57.1 +/- 0.2 12.2 +/- 0.1 65.6 +/- 0.8 63.4 +/- 0.4 49.6 +/- 0.2"
# "RoBERTa-base" "TSDAE 58.3 +/- 0.7 12.2 +/- 0.3 70.0 +/- 0.8 61.4 +/- 0.5 50.3 +/- 0.3"
# "CT 56.7 +/- 0.5 14.2 +/- 0.3 69.4 +/- 1.3 63.1 +/- 0.3 50.5 +/- 0.4"
# "SimCSE 56.6 +/- 0.5 12.4 +/- 0.2 66.8 +/- 0.7 64.4 +/- 0.3 50.1 +/- 0.2"
# "DistilBERT-base" "TSDAE 59.2 +/- 0.3 14.6 +/- 0.1 73.9 +/- 0.3 72.3 +/- 0.9 54.9 +/- 0.2"
# "CT 57.7 +/- 0.8 14.0 +/- 0.3 66.4 +/- 0.4 72.2 +/- 0.7 52.3 +/- 0.3"
# "SimCSE 54.8 +/- 0.7 12.3 +/- 0.1 66.8 +/- 0.6 65.9 +/- 0.1 49.9 +/- 0.3"
# "BERT-base" "TSDAE 59.4 +/- 0.3 14.5 +/- 0.1 73.0 +/- 0.4 74.0 +/- 0.4 55.2 +/- 0.2"
# "CT 56.3 +/- 0.7 13.3 +/- 0.3 72.5 +/- 0.5 67.6 +/- 0.4 52.4 +/- 0.3"
# "SimCSE 55.9 +/- 0.8 12.4 +/- 0.0 68.5 +/- 0.0 65.7 +/- 0.0 50.6 +/- 0.2"
TABLE_9 = {
    "ELECTRA-base": {"tsdae": ((56.6, 1.1), (8.0, 0.3), (69.0, 1.6), (66.2, 5.6)),
                     "ct": ((50.3, 0.4), (5.0, 0.2), (66.5, 0.7), (46.1, 0.6)),
                     "simcse": ((50.9, 0.3), (6.2, 0.1), (61.8, 0.6), (49.3, 0.3))},
    "DistilRoBERTa-base": {"tsdae": ((58.9, 0.5), (12.5, 0.1), (68.5, 0.5), (59.3, 0.6)),
                           "ct": ((57.9, 0.8), (13.8, 0.3), (63.6, 1.4), (62.7, 0.5)),
                           "simcse": ((57.1, 0.2), (12.2, 0.1), (65.6, 0.8), (63.4, 0.4))},
    "RoBERTa-base": {"tsdae": ((58.3, 0.7), (12.2, 0.3), (70.0, 0.8), (61.4, 0.5)),
                     "ct": ((56.7, 0.5), (14.2, 0.3), (69.4, 1.3), (63.1, 0.3)),
                     "simcse": ((56.6, 0.5), (12.4, 0.2), (66.8, 0.7), (64.4, 0.3))},
    "DistilBERT-base": {"tsdae": ((59.2, 0.3), (14.6, 0.1), (73.9, 0.3), (72.3, 0.9)),
                        "ct": ((57.7, 0.8), (14.0, 0.3), (66.4, 0.4), (72.2, 0.7)),
                        "simcse": ((54.8, 0.7), (12.3, 0.1), (66.8, 0.6), (65.9, 0.1))},
    "BERT-base": {"tsdae": ((59.4, 0.3), (14.5, 0.1), (73.0, 0.4), (74.0, 0.4)),
                  "ct": ((56.3, 0.7), (13.3, 0.3), (72.5, 0.5), (67.6, 0.4)),
                  "simcse": ((55.9, 0.8), (12.4, 0.0), (68.5, 0.0), (65.7, 0.0))},
}

PROTOCOL = replace(
    MAIN_PROTOCOL,
    grids={**MAIN_PROTOCOL.grids, "method": METHODS},
    notes=(*(note for note in MAIN_PROTOCOL.notes if "stage 'baselines'" not in note),
           "--checkpoint names Table 9's block the run re-runs and --model its hub model (App. B, Table 8): "
           + "; ".join(f"{label} {model}" for label, model in CHECKPOINTS.items())
           + ". Table 9's BERT-flow rows are not run (not implemented)."),
)


@dataclass(frozen=True, kw_only=True)
class TsdaeCheckpointsOptions(PerTaskOptions):
    methods: tuple[str, ...] | None = option(f"methods to compare (default: {' '.join(METHODS.value)})")
    checkpoint: str | None = option("which checkpoint of Table 9 --model is (logged as the param `checkpoint`; the "
                                    "targets of its rows are checked; default: none, no targets)",
                                    choices=tuple(CHECKPOINTS))


def checkpoint_label(options: TsdaeCheckpointsOptions) -> dict:
    return {"checkpoint": options.checkpoint} if options.checkpoint else {}


def check_model(options: TsdaeCheckpointsOptions, constants: dict) -> None:
    """--checkpoint with a hub name as --model: the name must be the checkpoint's (a local folder is taken as a copy
    of it)."""
    model = options.model
    if options.checkpoint and model and not Path(model).expanduser().exists() and model != CHECKPOINTS[
            options.checkpoint]:
        raise InputError(f"--model {model!r} is not --checkpoint {options.checkpoint}'s model "
                         f"{CHECKPOINTS[options.checkpoint]!r} (TSDAE App. B, Table 8)")


def method_axes(options: TsdaeCheckpointsOptions) -> dict:
    """Every method, on each target task."""
    return {"method": list(options.methods or METHODS.value)} | task_axis(options, USEB_TASKS)


def table_9_targets() -> list[PublishedValue]:
    """Table 9's cells of TSDAE, CT and SimCSE: each checkpoint, method and task, the mean of 5 seeds (its
    standard deviation in the note)."""
    return [PublishedValue(params={"checkpoint": checkpoint, "method": method, TASK_AXIS: task}, metric=metric,
                           value=mean, runs=SEEDS, setting={"model": CHECKPOINTS[checkpoint]},
                           note=f"Table 9 prints ± {std} over its 5 seeds",
                           source=cited(TSDAE, f"App. C, Table 9 ({checkpoint}, {method})"))
            for checkpoint, rows in TABLE_9.items() for method, cells in rows.items()
            for task, metric, (mean, std) in zip(USEB_TASKS, TASK_METRICS, cells, strict=True)]


DEFINITION = SweepDefinition(
    name="tsdae_checkpoints",
    description=__doc__.splitlines()[0],
    reference=TSDAE,
    protocol=PROTOCOL,
    stages=[Stage("method", method_axes)],
    options=TsdaeCheckpointsOptions,
    per_task=True,
    settings_from_options=checkpoint_label,
    check=check_model,
    data_labels={TASK_AXIS: USEB_TASKS, "checkpoint": tuple(CHECKPOINTS)},
    table_metrics=["sts_test_last", "sts_test_at_best_dev", "sts_dev"],
    published=tuple(table_9_targets()),
)
