"""Pre-training, then in-domain supervised training with growing labelled sets (TSDAE paper, §6, Figures 2 and 5).

Stage 1 pre-trains with each unsupervised method on the unlabelled target sentences; stage 2 continues each
seed's model of each method with SBERT on `sample_size` labelled pairs; stage 3 trains SBERT from the model
as released on the same sizes (the figures' "SBERT" curve). Stage 1's rows are the figures' 0 labels.

    python sweeps/labelled_after_pretraining.py --dry-run         # the protocol card
    python sweeps/labelled_after_pretraining.py --quick
    python sweeps/labelled_after_pretraining.py --model bert-base-uncased --corpus askubuntu_titles.txt \\
        --eval-task askubuntu=data-eval/askubuntu --set train_file=data-train/askubuntu/supervised loss=mnrl

The SBERT stages select and report their checkpoints on the target task's dev split (§6: "Scores are reported by
evaluation on the development sets"): --target-task, by default the only --eval-task task.
"""

from sentsweep.experiments._target_task import add_target_task_argument, check_target_task, selection_axes
from sentsweep.references import TSDAE
from sentsweep.search_spaces.chains import LABELLED_AFTER_PRETRAINING_PROTOCOL as PROTOCOL
from sentsweep.sweep import Stage, SweepDefinition


def add_arguments(parser):
    parser.add_argument("--methods", nargs="+",
                        help=f"pre-training methods (default: {' '.join(PROTOCOL.grid('method'))})")
    parser.add_argument("--labelled-sizes", type=int, nargs="+",
                        help=f"labelled pairs (default: {' '.join(map(str, PROTOCOL.grid('sample_size')))})")
    add_target_task_argument(parser, "the SBERT stages")


def pretraining(args):
    return {"method": args.methods or (["tsdae", "mlm"] if args.quick else PROTOCOL.grid("method"))}


def supervised(args):
    sizes = args.labelled_sizes or ([50, 150] if args.quick else PROTOCOL.grid("sample_size"))
    return {"method": PROTOCOL.grid("supervised"), "sample_size": sizes} | selection_axes(args)


DEFINITION = SweepDefinition(
    name="labelled_after_pretraining",
    description=__doc__.splitlines()[0],
    reference=TSDAE,
    protocol=PROTOCOL,
    stages=[
        Stage("pretraining", pretraining),
        Stage("supervised_after_pretraining", supervised, grids={"method": "supervised"}, init_from="pretraining",
              init_rows="each"),
        Stage("supervised_from_scratch", supervised, grids={"method": "supervised"}),
    ],
    add_arguments=add_arguments,
    trains_on_gold_pairs=True,
    check=check_target_task,
    # the unsupervised stages report their last checkpoint (002 App. B: no early stopping; SimCSE its best on STS-B
    # dev, footnote 8), the supervised ones
    # their best on dev: the target task's (the figures' score) or STS-B's
    table_metrics=["sts_test_last", "sts_test_at_best_dev", "best_sts_dev", "best_task_dev"],
)
