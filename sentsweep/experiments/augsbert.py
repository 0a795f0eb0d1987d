"""Augmented SBERT: the teacher (cross-encoder vs Cross-Bi-Encoder) x silver-pair sampling, over seeds.

Reiml (2023), sections 5.3 and 5.5 (tables of chapter 6): gold pairs are the training split beside the dev /
test data (sts-train.csv of --sts-dir, SICK's TRAIN rows); --set setting=unsupervised|domain takes the silver
sentences from --corpus instead, and --set topic_corpus=FILE topic_prompt=shown|hidden adds topic prompts.

    python sweeps/augsbert.py --quick
    python sweeps/augsbert.py --model roberta-base --sts-dir data/stsbenchmark --seeds 5
"""

from sentsweep.references import THESIS_REIML_2023
from sentsweep.search_spaces.supervised import AUGSBERT_PROTOCOL
from sentsweep.sweep import Stage, SweepDefinition


def add_arguments(parser):
    parser.add_argument("--teachers", nargs="+", help=f"default: {' '.join(AUGSBERT_PROTOCOL.grid('teacher'))}")
    parser.add_argument("--samplings", nargs="+", help=f"default: {' '.join(AUGSBERT_PROTOCOL.grid('sampling'))}")


def grid_axes(args):
    return {
        "teacher": args.teachers or AUGSBERT_PROTOCOL.grid("teacher"),
        "sampling": args.samplings or (["none", "bm25"] if args.quick else AUGSBERT_PROTOCOL.grid("sampling")),
    }


DEFINITION = SweepDefinition(
    name="augsbert",
    description=__doc__.splitlines()[0],
    reference=THESIS_REIML_2023,
    protocol=AUGSBERT_PROTOCOL,
    stages=[Stage("teacher x sampling", grid_axes)],
    add_arguments=add_arguments,
    trains_on_gold_pairs=True,
    table_metrics=["sts_test_at_best_dev", "best_sts_dev", "teacher_sts_dev"],
)
