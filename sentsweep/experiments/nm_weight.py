"""Noise Matching weight: L = L_MLM + w L_NM and L = L_TSDAE + w L_NM, CLS and mean pooling, over seeds.

Reiml (2023), section 5.4.2 and table 6.10.

    python sweeps/nm_weight.py --quick
    ray submit cluster.yaml sweeps/nm_weight.py --model bert-base-uncased --corpus corpus.txt \\
        --sts-dir data/stsbenchmark --gpus-per-trial 0.25
"""

from ray import tune

from sentsweep.references import THESIS_REIML_2023
from sentsweep.search_spaces.contrastive import NM_METHODS, NM_SETTINGS, NM_WEIGHTS, QUICK_SETTINGS, weight_ranges
from sentsweep.sweep import Stage, SweepDefinition


def add_arguments(parser):
    parser.add_argument("--weights", type=float, nargs="+", help="values of w (grid mode)")
    parser.add_argument("--methods", nargs="+", help=f"default: {' '.join(NM_METHODS)}")
    parser.add_argument("--poolings", nargs="+", help="default: cls mean")
    parser.add_argument("--weight-range", type=float, nargs=2, default=[1e-4, 1.0], help="Optuna range of w")


def grid_axes(args):
    return {
        "method": args.methods or NM_METHODS,
        "w": args.weights or ([0.01, 1.0] if args.quick else NM_WEIGHTS),
        "pooling": args.poolings or ["cls", "mean"],
    }


def sampled_axes(args):
    return {
        "method": tune.choice(args.methods or NM_METHODS),
        "pooling": tune.choice(args.poolings or ["cls", "mean"]),
    } | weight_ranges(*args.weight_range)


DEFINITION = SweepDefinition(
    name="nm_weight",
    description=__doc__.splitlines()[0],
    reference=THESIS_REIML_2023,
    constants=NM_SETTINGS | {"method": NM_METHODS[0]},
    quick_constants=QUICK_SETTINGS,
    stages=[Stage("method x w x pooling", grid_axes)],
    sampled_axes=sampled_axes,
    add_arguments=add_arguments,
)
