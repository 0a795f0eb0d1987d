"""Labelled-data intersection: labelled pairs at which in-domain SBERT matches TSDAE (TSDAE paper, App. D, Table 10).

The number of labelled pairs at which in-domain supervised SBERT matches an unsupervised method (--reference,
default tsdae), found by bisection over sample size with the seed std as precision (App. D); each probe is a stage
of the sweep's MLflow run. With --target-task naming a USEB task, Table 10's point for it is checked against the
labelled pairs the search brackets (`intersection_published_within`). The search and the check:
docs/sweeps.md, "labelled_intersection".

    python sweeps/labelled_intersection.py --dry-run               # the protocol card
    python sweeps/labelled_intersection.py --quick
    python sweeps/labelled_intersection.py --model bert-base-uncased \\
        --corpus data-train/askubuntu/unsupervised/train.txt --eval-task askubuntu=data-eval/askubuntu \\
        --target-task askubuntu --set train_file=data-train/askubuntu/supervised --seeds 5
"""

import math
from dataclasses import dataclass, replace

from sentsweep.analysis.reproduction import WITHIN, PublishedSweepValue, sweep_value_check
from sentsweep.data import read_scored_pairs
from sentsweep.errors import InputError
from sentsweep.experiments.tsdae.intersection_search import IntersectionSearch
from sentsweep.experiments.tsdae.target_task import in_domain_loss, missing_task_pairs_problem
from sentsweep.experiments.tsdae.useb_published import USEB_TASKS, tsdae_targets
from sentsweep.references import TSDAE
from sentsweep.search_spaces.tsdae import BEST_CONFIGURATION, INTERSECTION_PROTOCOL, PAPER_METHOD_SETTINGS
from sentsweep.settings import cited
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.definition import SweepDriver
from sentsweep.sweep.config.options import SweepOptions, option, parse_assignments
from sentsweep.trainables.settings import TASK_AXIS

REFERENCE_STAGE, SUPERVISED_STAGE = "reference", "supervised"
ANSWER_METRIC = "intersection_labelled_pairs"
# TSDAE App. D, Table 10 ("AskU. CQADup. TwitterP. SciDocs Avg." / "140 2661 6067 464 2333"), each task's point; the
# average is of four sweeps, no one sweep's result.
TABLE_10 = {"askubuntu": 140, "cqadupstack": 2661, "twitterpara": 6067, "scidocs": 464}
TABLE_10_SOURCE = cited(TSDAE, "App. D, Table 10", '"To match the performance of TSDAE, 140 - 6k annotated examples '
                        'are required"')
TABLE_10_NOTE = ('TSDAE searches with its 5 seeds ("We set the search precision to the standard deviation of the '
                 'target score over 5 random seeds")')


@dataclass(frozen=True, kw_only=True)
class IntersectionOptions(SweepOptions):
    reference: str = option("the unsupervised method to match, trained with its paper's settings (default tsdae)",
                            "tsdae", choices=tuple(sorted(PAPER_METHOD_SETTINGS)))
    target_task: str | None = option("one of the --eval-task tasks (a USEB task: askubuntu, cqadupstack, "
                                     "twitterpara, scidocs): the intersection is found on its test score and SBERT "
                                     "stops early on its dev split (TSDAE paper App. B, D); default: STS benchmark "
                                     "dev", metavar="NAME")
    min_pairs: int = option("fewest labelled pairs probed", 16, ge=1)


def check_target(options: IntersectionOptions, constants: dict) -> None:
    """--target-task must name an --eval-task task."""
    tasks = constants.get("eval_tasks") or {}
    if options.target_task is not None and options.target_task not in tasks:
        raise InputError(f"--target-task {options.target_task!r} is not one of the --eval-task tasks "
                         f"({', '.join(tasks) or 'none given'})")


def missing_pairs(options: IntersectionOptions) -> list[str]:
    """The --target-task's labelled pairs, where --set train_file does not name them (its default is the STS
    benchmark's training pairs, which the task's MNRL would take as positives whatever their score)."""
    task = options.target_task
    if task is None or "train_file" in parse_assignments(options.assignments):
        return []
    return [missing_task_pairs_problem(task, f"--set train_file=data-train/{task}/supervised")]


def supervised_settings(options: IntersectionOptions, constants: dict, overrides: dict) -> dict:
    """What the SBERT stages add for a target task: early stopping on its dev split (the last checkpoint if it
    has none, as TwitterPara), and MNRL on its relevant pairs (MSE on TwitterPara's scored pairs), TSDAE §5.1."""
    # lazy: torch
    from sentsweep.tasks import build_task

    if options.target_task is None:
        return {}
    task = build_task(options.target_task, constants["eval_tasks"][options.target_task])
    settings = {"select_checkpoint": "best_task_dev" if "dev" in task.splits else "last",
                "selection_task": options.target_task}
    if "loss" not in overrides:
        settings["loss"] = in_domain_loss(options.target_task)
    return settings


def reference_constants(options: IntersectionOptions, constants: dict) -> dict:
    """The reference stage's settings: the --reference method's trials (with its protocol settings), trained on
    --corpus, the --target-task's sentences (logged as `target_task`: Table 2's column it fills)."""
    task = {TASK_AXIS: options.target_task} if options.target_task else {}
    return constants | {"method": options.reference, "stage": REFERENCE_STAGE} | task


def run_search(sweep: SweepDriver, constants: dict) -> None:
    """Reference stage, then bisection stages over sample_size (see the module docstring)."""
    # lazy: torch
    from sentsweep.tasks import main_metric

    options = sweep.options
    metric = main_metric(options.target_task) if options.target_task else sweep.selection_metric
    reference = sweep.run_stage(REFERENCE_STAGE, reference_constants(options, constants), {},
                                title=f"reference {options.reference}")
    cell = reference.cells[(reference.rows[0], metric)]
    supervised = supervised_settings(options, constants, sweep.overrides)
    gold_size = len(read_scored_pairs(constants["train_file"], constants.get("eval_format", "stsb"), "train"))
    search = IntersectionSearch(target=cell.mean, precision=cell.std if cell.n > 1 else 0.0,
                                low=min(options.min_pairs, gold_size), high=gold_size)
    while (size := search.next_size()) is not None:
        table = sweep.run_stage(f"{SUPERVISED_STAGE} n={size}", constants | supervised | {"method": "sbert"},
                                {"sample_size": [size]})
        search.record(size, table.cells[(table.rows[0], metric)].mean)
    print(f"\nreference {options.reference}: {metric} {search.target:.2f} ± {search.precision:.2f}; "
          f"in-domain sbert ({metric} by labelled pairs: "
          + ", ".join(f"{n}: {score:.2f}" for n, score in sorted(search.scores.items()))
          + f")\nintersection: {search.answer} labelled pairs ({search.outcome})")
    if search.answer is not None:
        sweep.log_sweep_metrics({ANSWER_METRIC: float(search.answer)})
    check_published_intersection(sweep, search)


def check_published_intersection(sweep: SweepDriver, search: IntersectionSearch) -> None:
    """Table 10's point for the --target-task against the search's bracket: printed and logged on the sweep's run."""
    low, high = search.bracket()
    metrics = {"intersection_low_pairs": low} | ({"intersection_high_pairs": high} if math.isfinite(high) else {})
    for target in DEFINITION.published_results:
        if target.applies_to(sweep.options):
            verdict, line = sweep_value_check(target, low, high)
            print(f"Reproduction target: {line}")
            metrics["intersection_published_within"] = float(verdict == WITHIN)
    sweep.log_sweep_metrics(metrics)


DEFINITION = SweepDefinition(
    name="labelled_intersection",
    description=__doc__.splitlines()[0],
    reference=TSDAE,
    protocol=replace(INTERSECTION_PROTOCOL, settings={**INTERSECTION_PROTOCOL.settings, **BEST_CONFIGURATION}),
    stages=[Stage(REFERENCE_STAGE, lambda options: {"method": [options.reference]}),
            Stage(SUPERVISED_STAGE, lambda options: {"method": ["sbert"]})],
    options=IntersectionOptions,
    trains_on_gold_pairs=True,
    driver=run_search,
    check=check_target,
    missing_inputs=missing_pairs,
    data_labels={TASK_AXIS: USEB_TASKS},
    # The TSDAE reference is Table 2's unsupervised TSDAE row (4 USEB tasks, given with --eval-task), mean of 5
    # seeds; Table 10's intersection points are the sweep's own result (see the docstring).
    published=tuple(tsdae_targets({"stage": REFERENCE_STAGE})),
    published_results=tuple(PublishedSweepValue(ANSWER_METRIC, pairs, TABLE_10_SOURCE, {"target_task": task},
                                                TABLE_10_NOTE) for task, pairs in TABLE_10.items()),
)
