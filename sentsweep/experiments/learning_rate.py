"""Learning rate of the contrastive methods (SimCSE, NM, CT, ConSERT); grid or Optuna log-uniform.

    python sweeps/learning_rate.py --quick
    python sweeps/learning_rate.py --search optuna --num-configs 12 --model ... --sts-dir ...
"""

from ray import tune

from sentsweep.search_spaces.contrastive import (
    CONTRASTIVE_METHODS,
    LEARNING_RATES,
    NM_SETTINGS,
    QUICK_SETTINGS,
    learning_rate_ranges,
)
from sentsweep.sweep import Stage, SweepDefinition


def add_arguments(parser):
    parser.add_argument("--methods", nargs="+", help=f"default: {' '.join(CONTRASTIVE_METHODS)}")
    parser.add_argument("--lrs", type=float, nargs="+", help="learning rates (grid mode)")
    parser.add_argument("--lr-range", type=float, nargs=2, default=[1e-6, 1e-3], help="Optuna range")


def grid_axes(args):
    lrs = args.lrs or ([1e-4, 1e-3] if args.quick else LEARNING_RATES)
    return {"method": args.methods or (["simcse", "nm"] if args.quick else CONTRASTIVE_METHODS), "lr": lrs}


def sampled_axes(args):
    return {"method": tune.choice(args.methods or CONTRASTIVE_METHODS)} | learning_rate_ranges(*args.lr_range)


DEFINITION = SweepDefinition(
    name="learning_rate",
    description=__doc__.splitlines()[0],
    constants=NM_SETTINGS | {"method": "simcse"},
    quick_constants=QUICK_SETTINGS,
    stages=[Stage("method x lr", grid_axes)],
    sampled_axes=sampled_axes,
    add_arguments=add_arguments,
)
