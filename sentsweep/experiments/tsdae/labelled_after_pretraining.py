"""Pre-training, then in-domain supervised training with growing labelled sets (TSDAE paper, §6, Figures 2 and 5).

Stage 1 pre-trains with each unsupervised method on the unlabelled target sentences; stage 2 continues each
seed's model of each method with SBERT on `sample_size` labelled pairs; stage 3 trains SBERT from the model
as released on the same sizes (the figures' "SBERT" curve). Stage 1's rows are the figures' 0 labels.

With a target task (--eval-task, --target-task where several are given) the sweep is the figure's (§6: "We first
pre-train on all available unlabeled sentences and then perform in-domain supervised training with different
labeled training set sizes. Scores are reported by evaluation on the development sets"): --corpus holds the
task's unlabelled sentences, SBERT trains on its labelled pairs (--task-pairs NAME=PATH, USEB's
data-train/<task>/supervised) with the task's loss (§5.1: MNRL; the MSE on TwitterPara's scored pairs) and selects
its checkpoints on the task's dev split, and every point, the pre-training's 0 labels included, reports the dev
score of the checkpoint it keeps (`selected_task_dev`). Without one, SBERT trains on STS-B train with the cosine
loss and selects on STS-B dev.

    python sweeps/labelled_after_pretraining.py --dry-run         # the protocol card
    python sweeps/labelled_after_pretraining.py --quick
    python sweeps/labelled_after_pretraining.py --model bert-base-uncased --corpus askubuntu_titles.txt \\
        --eval-task askubuntu=data-eval/askubuntu --task-pairs askubuntu=data-train/askubuntu/supervised
"""

from dataclasses import dataclass
from pathlib import Path

from sentsweep.data import read_scored_pairs
from sentsweep.experiments.tsdae.findings import LABELLED_AFTER_PRETRAINING_ORDERINGS
from sentsweep.experiments.tsdae.target_task import (
    TargetTaskOptions,
    check_target_task,
    in_domain_loss,
    missing_task_pairs_problem,
    scoring_axes,
    selection_axes,
    target_task,
)
from sentsweep.references import TSDAE
from sentsweep.search_spaces.tsdae import LABELLED_AFTER_PRETRAINING_PROTOCOL as PROTOCOL
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.options import option, parse_assignments
from sentsweep.trainables.settings import SELECTED_TASK_DEV

MISSING_PAIRS = "<not given: --task-pairs>"  # the card's value of the target task's pairs, where none are named


@dataclass(frozen=True, kw_only=True)
class LabelledAfterPretrainingOptions(TargetTaskOptions):
    methods: tuple[str, ...] | None = option(f"pre-training methods (default: {' '.join(PROTOCOL.grid('method'))})")
    labelled_sizes: tuple[int, ...] | None = option(
        f"labelled pairs (default: {' '.join(map(str, PROTOCOL.grid('sample_size')))})", setting="sample_size")
    task_pairs: tuple[str, ...] = option(
        "the target task's labelled training pairs, in-domain SBERT's (USEB: data-train/<task>/supervised; "
        "default: none, required with a target task unless --set train_file names them)", (), repeat=True,
        metavar="NAME=PATH")


def task_pairs(options: LabelledAfterPretrainingOptions) -> str | None:
    """The target task's labelled pairs (absolute path) of --task-pairs, `MISSING_PAIRS` where not given; None
    without a target task or where --set train_file names the pairs."""
    # lazy: torch
    from sentsweep.tasks import parse_task_specs

    task = target_task(options)
    if task is None or "train_file" in parse_assignments(options.assignments):
        return None
    given = parse_task_specs(list(options.task_pairs))
    return str(Path(given[task]).resolve()) if task in given else MISSING_PAIRS


def missing_pairs(options: LabelledAfterPretrainingOptions) -> list[str]:
    """The target task's labelled pairs, where no option names them."""
    task = target_task(options)
    if task_pairs(options) != MISSING_PAIRS:
        return []
    return [missing_task_pairs_problem(task, f"--task-pairs {task}=data-train/{task}/supervised")
            + " (or name them with --set train_file=PATH)"]


def in_domain_axes(options: LabelledAfterPretrainingOptions) -> dict[str, list]:
    """The target task's SBERT: its labelled pairs and its loss (TSDAE §5.1), where the command line does not set
    them ({} without a target task)."""
    task = target_task(options)
    if task is None:
        return {}
    given = parse_assignments(options.assignments)
    pairs = task_pairs(options)
    return ({"train_file": [pairs]} if pairs else {}) | ({} if "loss" in given else {"loss": [in_domain_loss(task)]})


def pretraining(options):
    return {"method": options.methods or (["tsdae", "mlm"] if options.quick else PROTOCOL.grid("method"))} | \
        scoring_axes(options)


def supervised(options):
    sizes = options.labelled_sizes or ([50, 150] if options.quick else PROTOCOL.grid("sample_size"))
    return {"method": PROTOCOL.grid("supervised"), "sample_size": sizes} | selection_axes(options) | \
        in_domain_axes(options)


def check(options: LabelledAfterPretrainingOptions, constants: dict) -> None:
    """The target task's selection (`check_target_task`), and its labelled pairs read now: a missing or malformed
    file fails before anything runs."""
    check_target_task(options, constants)
    pairs = task_pairs(options)
    if pairs not in (None, MISSING_PAIRS):
        read_scored_pairs(pairs, constants.get("eval_format", "stsb"), "train")


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
    check=check,
    missing_inputs=missing_pairs,
    # the unsupervised stages report their last checkpoint (TSDAE App. B: no early stopping; SimCSE its best on STS-B
    # dev, footnote 8), the supervised ones their best on dev: the target task's (the figures' score) or STS-B's;
    # every stage the target task's dev score of the checkpoint it keeps (the figures' y-axis)
    table_metrics=[SELECTED_TASK_DEV, "sts_test_last", "sts_test_at_best_dev", "best_sts_dev", "best_task_dev"],
    # §6's findings on Figure 2 (App. E's Figure 5), each task's cells (`sentsweep.experiments.tsdae.findings`)
    orderings=LABELLED_AFTER_PRETRAINING_ORDERINGS,
)
