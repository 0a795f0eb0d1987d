"""Multi-task weight: L = L_SimCSE + w L_AE for the CLM and MLM auto-encoders (Wang (2022), eq. 3.6).

Wang (2022), tables 5.16 / 5.17: w in {0.1, 0.01, 0.001, 0.0001}, 3 seeds.

    python sweeps/multitask_weight.py --quick
"""

from ray import tune

from sentsweep.references import THESIS_WANG_2022
from sentsweep.search_spaces.contrastive import (
    MULTITASK_METHODS,
    MULTITASK_SETTINGS,
    MULTITASK_WEIGHTS,
    QUICK_SETTINGS,
    weight_ranges,
)
from sentsweep.sweep import Stage, SweepDefinition


def add_arguments(parser):
    parser.add_argument("--weights", type=float, nargs="+", help="values of w (grid mode)")
    parser.add_argument("--methods", nargs="+", help=f"default: {' '.join(MULTITASK_METHODS)}")
    parser.add_argument("--weight-range", type=float, nargs=2, default=[1e-4, 0.1], help="Optuna range of w")


def grid_axes(args):
    return {
        "method": args.methods or MULTITASK_METHODS,
        "w": args.weights or ([0.1, 0.001] if args.quick else MULTITASK_WEIGHTS),
    }


def sampled_axes(args):
    return {"method": tune.choice(args.methods or MULTITASK_METHODS)} | weight_ranges(*args.weight_range)


DEFINITION = SweepDefinition(
    name="multitask_weight",
    description=__doc__.splitlines()[0],
    reference=THESIS_WANG_2022,
    constants=MULTITASK_SETTINGS | {"method": MULTITASK_METHODS[0]},
    quick_constants=QUICK_SETTINGS,
    stages=[Stage("method x w", grid_axes)],
    sampled_axes=sampled_axes,
    add_arguments=add_arguments,
)
