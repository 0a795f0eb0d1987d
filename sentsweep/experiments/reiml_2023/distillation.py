"""Distillation into bi-encoders: a CE or Cross-Bi-Encoder re-annotates the training pairs (Reiml 2023 Tables 6.4-6.8).

Reiml (2023), §5.2.2. Stage "base" trains a bi-encoder on the gold pairs; stage "distill" trains a teacher (CE
or CBE) on the gold pairs, lets it re-annotate the training pairs and trains the bi-encoder on its scores (Augmented
SBERT without silver pairs: "a form of label regularization"). --dataset names the setup, the files of --sts-dir:
`sts-b` (the STS benchmark, three epochs: Table 6.4), `bws` (the BWS argument similarity files, five epochs: Tables
6.5-6.6), `sts-b-to-bws` (the teacher trained on STS-B train, given with --teacher-train-file, re-annotating the
BWS train pairs of --sts-dir, five epochs: Tables 6.7-6.8). Every trial reports its bi-encoder's test Spearman
(`sts_test_at_best_dev`: the tables' STS-B and BWS Similarity columns); Tables 6.6 and 6.8's SentEval columns need
the STS tasks with --eval-task (sts12 ... sts16, stsb, sickr).

Not run: the BWS Topic (F1) columns (Reiml 2023 scores them with a classification head trained on the frozen encoder for
ten epochs at 1e-3, which the project does not implement); the targets are the BERT rows (the RoBERTa rows need a
run with --model roberta-base, compared with the BERT values and marked with the model's difference).

    python sweeps/distillation.py --dry-run                       # the protocol card
    python sweeps/distillation.py --quick
    python sweeps/distillation.py --model bert-base-uncased --sts-dir data/stsbenchmark --dataset sts-b
    python sweeps/distillation.py --model bert-base-uncased --sts-dir data/bws-cross-topic --dataset sts-b-to-bws \\
        --teacher-train-file data/stsbenchmark/sts-train.csv \\
        --eval-task sts12=SentEval/data/downstream/STS/STS12-en-test
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sentsweep.analysis.reproduction import PublishedValue
from sentsweep.data import read_scored_pairs, sts_benchmark_files
from sentsweep.demo_data import DEMO_DIR
from sentsweep.errors import InputError
from sentsweep.references import THESIS_REIML_2023
from sentsweep.search_spaces.reiml_2023 import (
    DISTILLATION_DATASETS as DATASETS,
    DISTILLATION_EPOCHS as EPOCHS,
    DISTILLATION_PROTOCOL as PROTOCOL,
)
from sentsweep.settings import cited
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.options import SweepOptions, option


@dataclass(frozen=True, kw_only=True)
class DistillationOptions(SweepOptions):
    dataset: str = option("which of §5.2.2's setups the files of --sts-dir are (sts-b: Table 6.4; bws: Tables "
                          "6.5-6.6; sts-b-to-bws: Tables 6.7-6.8), logged as the param `dataset`", "sts-b",
                          choices=DATASETS)
    teacher_train_file: str | None = option("sts-b-to-bws: the teacher's gold pairs, STS-B's sts-train.csv (the "
                                            "bi-encoder learns the BWS train pairs of --sts-dir, re-annotated; "
                                            "default: none, required with sts-b-to-bws but with --quick)")


def dataset_settings(options: DistillationOptions) -> dict:
    """The data set's label and its epochs (§5.2.2)."""
    if options.teacher_train_file and options.dataset != "sts-b-to-bws":
        raise InputError("--teacher-train-file is the teacher's STS-B pairs of --dataset sts-b-to-bws")
    epochs = {} if options.quick else {"epochs": EPOCHS[options.dataset], "teacher_epochs": EPOCHS[options.dataset]}
    return {"dataset": options.dataset} | epochs


def missing_teacher_pairs(options: DistillationOptions) -> list[str]:
    if options.dataset != "sts-b-to-bws" or options.teacher_train_file or options.quick:
        return []
    return ["--dataset sts-b-to-bws needs --teacher-train-file (STS-B's sts-train.csv): the teacher trains on STS-B "
            "and re-annotates the BWS train pairs of --sts-dir"]


def base(options):
    return {"method": PROTOCOL.grid("base_method")}


def distill(options):
    """The teachers; for sts-b-to-bws the teacher's STS-B pairs and the BWS train pairs it re-annotates, each read
    now (a missing or malformed file fails before anything runs)."""
    axes = {"method": PROTOCOL.grid("distill_method"), "teacher": PROTOCOL.grid("teacher")}
    if options.dataset != "sts-b-to-bws" or not options.teacher_train_file:
        return axes
    teacher_pairs = Path(options.teacher_train_file).resolve()
    relabelled = sts_benchmark_files(options.sts_dir or DEMO_DIR)["train"].resolve()
    for path in (teacher_pairs, relabelled):
        read_scored_pairs(path, "stsb", "train")
    return axes | {"train_file": [str(teacher_pairs)], "reannotate_file": [str(relabelled)]}


# BERT rows as printed (mean, the std left out). Table 6.4 ("Method	STS-B"): "BERT Base	$83.77 \pm 0.23$",
# "BERT Distill CBE	$83.91 \pm 0.25$", "BERT Distill CE	$83.77 \pm 0.11$". Table 6.5 (BWS Similarity): "BERT Base
# $64.27 \pm 0.61$", "BERT Distill CBE	$65.49 \pm 1.14$", "BERT Distill CE	$64.93 \pm 0.61$". Table 6.7: "BERT
# Base	$64.27 \pm 0.61$", "BERT Distill CBE	$61.12 \pm 0.77$", "BERT Distill CE	$57.03 \pm 0.78$".
SIMILARITY = {
    ("sts-b", "Table 6.4"): {"base": 83.77, "cbe": 83.91, "ce": 83.77},
    ("bws", "Table 6.5"): {"base": 64.27, "cbe": 65.49, "ce": 64.93},
    ("sts-b-to-bws", "Table 6.7"): {"base": 64.27, "cbe": 61.12, "ce": 57.03},
}
# Tables 6.6 and 6.8 ("Method	STS12	STS13	STS14	STS15	STS16	STS-B	SICK-R	Avg."), the BERT rows; Avg. not
# targeted (the mean of the seven).
SENTEVAL_METRICS = ("sts12_pooled_spearman", "sts13_pooled_spearman", "sts14_pooled_spearman",
                    "sts15_pooled_spearman", "sts16_pooled_spearman", "stsb_spearman", "sickr_spearman")
SENTEVAL = {
    ("bws", "Table 6.6"): {"base": (43.37, 67.17, 55.37, 66.78, 70.30, 59.09, 64.21),
                           "cbe": (42.84, 67.95, 55.10, 67.47, 71.12, 59.52, 63.35),
                           "ce": (44.63, 66.45, 55.08, 67.56, 70.30, 58.94, 63.70)},
    ("sts-b-to-bws", "Table 6.8"): {"base": (43.37, 67.17, 55.37, 66.78, 70.30, 59.09, 64.21),
                                    "cbe": (46.93, 69.85, 58.80, 69.99, 70.52, 63.54, 64.80),
                                    "ce": (46.39, 68.15, 57.30, 68.46, 70.46, 63.52, 63.72)},
}
ROWS = {"base": "Base", "cbe": "Distill CBE", "ce": "Distill CE"}
BERT = {"model": "bert-base-uncased"}  # §5.2.2: "We train our models on both BERT and RoBERTa"


def cell(dataset: str, row: str) -> dict:
    return ({"dataset": dataset, "stage": "base", "method": "sbert"} if row == "base" else
            {"dataset": dataset, "stage": "distill", "method": "augsbert", "teacher": row})


def published() -> tuple[PublishedValue, ...]:
    targets = [PublishedValue(cell(dataset, row), "sts_test_at_best_dev", value,
                              cited(THESIS_REIML_2023, f"{table} (BERT {ROWS[row]})"), setting=BERT)
               for (dataset, table), rows in SIMILARITY.items() for row, value in rows.items()]
    targets += [PublishedValue(cell(dataset, row), metric, value,
                               cited(THESIS_REIML_2023, f"{table} (BERT {ROWS[row]})"), setting=BERT)
                for (dataset, table), rows in SENTEVAL.items() for row, values in rows.items()
                for metric, value in zip(SENTEVAL_METRICS, values, strict=True)]
    return tuple(targets)


DEFINITION = SweepDefinition(
    name="distillation",
    description=__doc__.splitlines()[0],
    reference=THESIS_REIML_2023,
    protocol=PROTOCOL,
    stages=[Stage("base", base, grids={"method": "base_method"}),
            Stage("distill", distill, grids={"method": "distill_method"})],
    options=DistillationOptions,
    trains_on_gold_pairs=True,
    settings_from_options=dataset_settings,
    missing_inputs=missing_teacher_pairs,
    data_labels={"dataset": DATASETS},
    table_metrics=["sts_test_at_best_dev", "best_sts_dev", "teacher_sts_test"],
    # the BERT rows of Reiml 2023 Tables 6.4-6.8 (similarity and SentEval columns) for the run's --dataset; the tables
    # give no number of seeds (runs None: taken as exact)
    published=published(),
)
