"""Augmented SBERT: the teacher (cross-encoder vs Cross-Bi-Encoder) x silver-pair sampling, over seeds.

Reiml (2023), sections 5.3 and 5.5 (tables of chapter 6): gold pairs are the training split beside the dev /
test data (sts-train.csv of --sts-dir, SICK's TRAIN rows); --set setting=unsupervised|domain takes the silver
sentences from --corpus instead, and --set topic_corpus=FILE topic_prompt=shown|hidden adds topic prompts.
Semantic search (sampling semantic, and the KDE's semantic + random candidates) embeds with --model as released,
or with a fine-tuned bi-encoder given by --set retriever=FOLDER (Figure 6.3's "Semantic Search (Finetuned)").
--set reannotate_file=FILE trains the bi-encoder on another data set's pairs labelled by the teacher (Tables
6.7-6.8); --set teacher_activation=none|tanh scores with the cross-encoder's other activations (Table 6.2).
Each trial reports the teacher's test Spearman and Pearson and its Spearman with the bi-encoder (Tables
6.1-6.3), and with its first report the silver scores (`artifacts`, silver_scores.json; Figures 6.3-6.5).

    python sweeps/augsbert.py --quick
    python sweeps/augsbert.py --model roberta-base --sts-dir data/stsbenchmark --seeds 5
"""

from dataclasses import dataclass

from sentsweep.experiments.protocols.supervised import AUGSBERT_PROTOCOL
from sentsweep.references import THESIS_REIML_2023
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.options import SweepOptions, option


@dataclass(frozen=True, kw_only=True)
class AugsbertOptions(SweepOptions):
    teachers: tuple[str, ...] | None = option(f"default: {' '.join(AUGSBERT_PROTOCOL.grid('teacher'))}")
    samplings: tuple[str, ...] | None = option(f"default: {' '.join(AUGSBERT_PROTOCOL.grid('sampling'))}")


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
    table_metrics=["sts_test_at_best_dev", "best_sts_dev", "teacher_sts_dev", "teacher_sts_test",
                   "teacher_sts_test_pearson", "teacher_student_spearman_at_best_dev"],
)
