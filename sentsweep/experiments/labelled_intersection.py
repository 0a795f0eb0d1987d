"""Labelled-data intersection: labelled pairs at which in-domain SBERT matches TSDAE (TSDAE paper, table 10).

The number of labelled pairs at which in-domain supervised SBERT matches an unsupervised method, found by
bisection over sample size with the seed std as precision.

First the unsupervised reference (--reference, default tsdae) runs over the seeds; then `sbert` runs over
the seeds at each probed number of gold pairs (the training split beside the dev/test data) until its mean
dev score is within one seed std of the reference's. Each probe is a stage of the sweep's MLflow run.

    python sweeps/labelled_intersection.py --quick
    python sweeps/labelled_intersection.py --model bert-base-uncased --corpus in_domain.txt --sts-dir data --seeds 5
"""

from dataclasses import replace

from sentsweep.data import read_scored_pairs
from sentsweep.references import TSDAE
from sentsweep.search_spaces.intersection import IntersectionSearch
from sentsweep.search_spaces.supervised import INTERSECTION_PROTOCOL
from sentsweep.search_spaces.tsdae import BEST_CONFIGURATION
from sentsweep.sweep import Stage, SweepDefinition

REFERENCE_STAGE, SUPERVISED_STAGE = "reference", "supervised"


def add_arguments(parser):
    parser.add_argument("--reference", default="tsdae", help="the unsupervised method to match (default tsdae)")
    parser.add_argument("--reference-pooling", default="cls", help="its pooling (the TSDAE paper: cls)")
    parser.add_argument("--min-pairs", type=int, default=16, help="fewest labelled pairs probed")


def run_search(runner, tracker, constants: dict, stages) -> None:
    """Reference stage, then bisection stages over sample_size (see the module docstring)."""
    args = runner.args
    metric = runner.definition.selection_metric
    reference = runner.run_stage(tracker, 0, f"reference {args.reference}",
                                 constants | {"method": args.reference, "pooling": args.reference_pooling,
                                              "stage": REFERENCE_STAGE}, {}, REFERENCE_STAGE)
    cell = reference.cells[(reference.rows[0], metric)]
    gold_size = len(read_scored_pairs(constants["train_file"], constants.get("eval_format", "stsb"), "train"))
    search = IntersectionSearch(target=cell.mean, precision=cell.std if cell.n > 1 else 0.0,
                                low=min(args.min_pairs, gold_size), high=gold_size)
    while (size := search.next_size()) is not None:
        stage = f"{SUPERVISED_STAGE} n={size}"
        table = runner.run_stage(tracker, len(search.scores) + 1, stage,
                                 constants | {"method": "sbert", "stage": stage}, {"sample_size": [size]}, stage)
        search.record(size, table.cells[(table.rows[0], metric)].mean)
    print(f"\nreference {args.reference}: {metric} {search.target:.2f} ± {search.precision:.2f}; "
          f"in-domain sbert ({metric} by labelled pairs: "
          + ", ".join(f"{n}: {score:.2f}" for n, score in sorted(search.scores.items()))
          + f")\nintersection: {search.answer} labelled pairs ({search.outcome})")
    if search.answer is not None:
        tracker.log_sweep_metrics({"intersection_labelled_pairs": float(search.answer)})


DEFINITION = SweepDefinition(
    name="labelled_intersection",
    description=__doc__.splitlines()[0],
    reference=TSDAE,
    protocol=replace(INTERSECTION_PROTOCOL, settings={**INTERSECTION_PROTOCOL.settings, **BEST_CONFIGURATION}),
    stages=[Stage(REFERENCE_STAGE, lambda args: {"method": [args.reference]}),
            Stage(SUPERVISED_STAGE, lambda args: {"method": ["sbert"]})],
    add_arguments=add_arguments,
    trains_on_gold_pairs=True,
    driver=run_search,
)
