"""Learning rate of the contrastive methods (SimCSE, NM, CT, ConSERT); grid or Optuna log-uniform.

The project's own sweep, on Reiml (2023) §5.4.2's settings; CT keeps its optimiser and schedule (TSDAE paper
App. B), the axis being its initial rate.

    python sweeps/learning_rate.py --dry-run                      # the protocol card
    python sweeps/learning_rate.py --quick
    python sweeps/learning_rate.py --search optuna --methods simcse --num-configs 12 --model ... --sts-dir ...
"""

from ray import tune

from sentsweep.search_spaces.contrastive import LEARNING_RATE_PROTOCOL, learning_rate_ranges
from sentsweep.sweep import Stage, SweepDefinition


def add_arguments(parser):
    parser.add_argument("--methods", nargs="+", help=f"default: {' '.join(LEARNING_RATE_PROTOCOL.grid('method'))}")
    parser.add_argument("--lrs", type=float, nargs="+", help="learning rates (grid mode)")
    parser.add_argument("--lr-range", type=float, nargs=2, default=[1e-6, 1e-3], help="Optuna range")


def grid_axes(args):
    lrs = args.lrs or ([1e-4, 1e-3] if args.quick else LEARNING_RATE_PROTOCOL.grid("lr"))
    return {"method": args.methods or (["simcse", "nm"] if args.quick else LEARNING_RATE_PROTOCOL.grid("method")),
            "lr": lrs}


def sampled_axes(args):
    return {"method": tune.choice(args.methods or LEARNING_RATE_PROTOCOL.grid("method"))} | learning_rate_ranges(
        *args.lr_range)


DEFINITION = SweepDefinition(
    name="learning_rate",
    description=__doc__.splitlines()[0],
    protocol=LEARNING_RATE_PROTOCOL,
    stages=[Stage("method x lr", grid_axes)],
    sampled_axes=sampled_axes,
    add_arguments=add_arguments,
)
