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

from dataclasses import dataclass

from sentsweep.experiments._target_task import TargetTaskOptions, check_target_task, selection_axes
from sentsweep.experiments.protocols.chains import LABELLED_AFTER_PRETRAINING_PROTOCOL as PROTOCOL
from sentsweep.references import TSDAE
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.options import option


@dataclass(frozen=True, kw_only=True)
class LabelledAfterPretrainingOptions(TargetTaskOptions):
    methods: tuple[str, ...] | None = option(f"pre-training methods (default: {' '.join(PROTOCOL.grid('method'))})")
    labelled_sizes: tuple[int, ...] | None = option(
        f"labelled pairs (default: {' '.join(map(str, PROTOCOL.grid('sample_size')))})")


def pretraining(options):
    return {"method": options.methods or (["tsdae", "mlm"] if options.quick else PROTOCOL.grid("method"))}


def supervised(options):
    sizes = options.labelled_sizes or ([50, 150] if options.quick else PROTOCOL.grid("sample_size"))
    return {"method": PROTOCOL.grid("supervised"), "sample_size": sizes} | selection_axes(options)


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
    options=LabelledAfterPretrainingOptions,
    trains_on_gold_pairs=True,
    check=check_target_task,
    # the unsupervised stages report their last checkpoint (002 App. B: no early stopping; SimCSE its best on STS-B
    # dev, footnote 8), the supervised ones
    # their best on dev: the target task's (the figures' score) or STS-B's
    table_metrics=["sts_test_last", "sts_test_at_best_dev", "best_sts_dev", "best_task_dev"],
)
