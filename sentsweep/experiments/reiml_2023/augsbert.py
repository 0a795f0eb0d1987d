"""Augmented SBERT: the teacher (cross-encoder vs Cross-Bi-Encoder) x silver-pair sampling, over seeds.

Reiml (2023), sections 5.3 and 5.5 (tables of chapter 6): gold pairs are the training split beside the dev /
test data (sts-train.csv of --sts-dir, SICK's TRAIN rows); --set setting=unsupervised|domain takes the silver
sentences from --corpus instead, and --set topic_corpus=FILE topic_prompt=shown|hidden adds topic prompts.
Semantic search (sampling semantic, and the KDE's semantic + random candidates) embeds with --model as released,
or with a fine-tuned bi-encoder given by --set retriever=FOLDER (Figure 6.3's "Semantic Search (Finetuned)").
--set reannotate_file=FILE trains the bi-encoder on another data set's pairs labelled by the teacher (Tables
6.7-6.8); --set teacher_activation=none|tanh scores with the cross-encoder's other activations (Table 6.2).
--dataset names which of Tables 6.12-6.13's data sets the files are (spanish-sts, bws-cross-topic, bws-in-topic);
it is logged as the param `dataset`, and the tables' values for that column are the run's reproduction targets
(teacher ce: Table 6.12, cbe: Table 6.13; the rows "Upper-bound", the teacher's own test Spearman, and AugSBERT-None
to -S.S.). The "SRoBERTa (Lower-bound)" row, a bi-encoder on the gold labels, is sweep cross_bi_encoder's
`sts_test_at_best_dev` (run it on the data set's files) and is not targeted here.
Each trial reports the teacher's test Spearman and Pearson and its Spearman with the bi-encoder (Tables
6.1-6.3), and with its first report the silver scores (`artifacts`, silver_scores.json; Figures 6.3-6.5).

    python sweeps/augsbert.py --quick
    python sweeps/augsbert.py --model roberta-base --sts-dir data/spanish-sts --dataset spanish-sts
"""

from dataclasses import dataclass

from sentsweep.analysis.reproduction import PublishedValue
from sentsweep.references import THESIS_REIML_2023
from sentsweep.search_spaces.reiml_2023 import AUGSBERT_PROTOCOL
from sentsweep.settings import cited
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.options import SweepOptions, option

# Reiml 2023 Tables 6.12-6.13's columns: "Model	Spanish-STS	BWS (cross-topic)	BWS (in-topic)"
DATASETS = ("spanish-sts", "bws-cross-topic", "bws-in-topic")
UPPER_BOUND = "upper-bound"  # the teacher's own test Spearman
# Each row's means as the tables print them, one per data set in DATASETS' order (the stds left out)
TABLES = {
    "ce": ("Table 6.12", {UPPER_BOUND: (80.51, 65.75, 66.72), "none": (67.76, 63.80, 66.38),
                          "random": (75.93, 62.82, 67.74), "kde": (74.70, 59.65, 64.50),
                          "bm25": (77.17, 62.54, 66.84), "semantic": (77.09, 62.07, 66.64)}),
    "cbe": ("Table 6.13", {UPPER_BOUND: (75.56, 66.58, 69.97), "none": (68.10, 63.39, 67.64),
                           "random": (74.68, 64.88, 69.91), "kde": (77.40, 64.22, 69.63),
                           "bm25": (77.76, 64.46, 69.85), "semantic": (79.59, 64.11, 68.40)}),
}
ROBERTA = {"model": "roberta-base"}  # Reiml 2023 §5.5: "using the RoBERTa model"


def semi_supervised_targets() -> tuple[PublishedValue, ...]:
    """Each row of Tables 6.12-6.13 per data set; the upper bound (the teacher) in the teacher's cell of sampling
    none, whose runs train it as every cell's do."""
    targets = []
    for teacher, (table, rows) in TABLES.items():
        for row, values in rows.items():
            sampling, metric = ("none", "teacher_sts_test") if row == UPPER_BOUND else (row, "sts_test_at_best_dev")
            for dataset, value in zip(DATASETS, values, strict=True):
                targets.append(PublishedValue(
                    params={"dataset": dataset, "teacher": teacher, "sampling": sampling}, metric=metric,
                    value=value, source=cited(THESIS_REIML_2023, f"{table} ({row}, {dataset})"), runs=3,
                    setting=ROBERTA, note="the teacher's own score" if row == UPPER_BOUND else ""))
    return tuple(targets)


@dataclass(frozen=True, kw_only=True)
class AugsbertOptions(SweepOptions):
    teachers: tuple[str, ...] | None = option(f"teacher cross-encoders (default: "
                                                  f"{' '.join(AUGSBERT_PROTOCOL.grid('teacher'))})")
    samplings: tuple[str, ...] | None = option(f"strategies sampling the silver pairs (default: "
                                                   f"{' '.join(AUGSBERT_PROTOCOL.grid('sampling'))})")
    dataset: str | None = option("which data set of Reiml 2023 Tables 6.12-6.13 the files are (logged as the param "
                                 "`dataset`; the targets of its column are checked; default: none, no targets)",
                                 choices=DATASETS)


def dataset_label(options: AugsbertOptions) -> dict:
    return {"dataset": options.dataset} if options.dataset else {}


def grid_axes(options):
    return {
        "teacher": options.teachers or AUGSBERT_PROTOCOL.grid("teacher"),
        "sampling": options.samplings or (["none", "bm25"] if options.quick else AUGSBERT_PROTOCOL.grid("sampling")),
    }


DEFINITION = SweepDefinition(
    name="augsbert",
    description=__doc__.splitlines()[0],
    reference=THESIS_REIML_2023,
    protocol=AUGSBERT_PROTOCOL,
    stages=[Stage("teacher x sampling", grid_axes)],
    options=AugsbertOptions,
    trains_on_gold_pairs=True,
    settings_from_options=dataset_label,
    data_labels={"dataset": DATASETS},
    # Reiml 2023 Tables 6.12-6.13 ("Results are averaged over 3 random seeds"), the column of the run's --dataset
    published=semi_supervised_targets(),
    table_metrics=["sts_test_at_best_dev", "best_sts_dev", "teacher_sts_dev", "teacher_sts_test",
                   "teacher_sts_test_pearson", "teacher_student_spearman_at_best_dev"],
)
