"""Multi-task weight: L = L_SimCSE + w L_AE for the CLM and MLM auto-encoders (Wang (2022), §5.3.7, eq. 3.6).

Tables 5.16 / 5.17: w in {0.1, 0.01, 0.001, 0.0001}, 3 epochs, seeds 1, 7, 42, with the tables' baselines:
SimCSE for 1 and 3 epochs and each auto-encoder alone (stages 1 and 2), then the multi-task grid (stage 3).

    python sweeps/multitask_weight.py --dry-run                   # the protocol card
    python sweeps/multitask_weight.py --quick
"""

from ray import tune

from sentsweep.references import THESIS_WANG_2022
from sentsweep.search_spaces.contrastive import MULTITASK_PROTOCOL, weight_ranges
from sentsweep.sweep import Stage, SweepDefinition


def add_arguments(parser):
    parser.add_argument("--weights", type=float, nargs="+", help="values of w (grid mode)")
    parser.add_argument("--methods", nargs="+", help=f"default: {' '.join(MULTITASK_PROTOCOL.grid('method'))}")
    parser.add_argument("--weight-range", type=float, nargs=2, default=[1e-4, 0.1], help="Optuna range of w")
    parser.add_argument("--no-baselines", action="store_true", help="only the multi-task grid (stage 3)")


def baseline(axes):
    """A baseline stage's axes (None, so no stage, with --no-baselines)."""
    return lambda args: None if args.no_baselines else axes


def multitask_axes(args):
    return {"method": args.methods or MULTITASK_PROTOCOL.grid("method"),
            "w": args.weights or ([0.1, 0.001] if args.quick else MULTITASK_PROTOCOL.grid("w"))}


def sampled_axes(args):
    return {"method": tune.choice(args.methods or MULTITASK_PROTOCOL.grid("method"))} | weight_ranges(
        *args.weight_range)


DEFINITION = SweepDefinition(
    name="multitask_weight",
    description=__doc__.splitlines()[0],
    reference=THESIS_WANG_2022,
    protocol=MULTITASK_PROTOCOL,
    stages=[
        Stage("SimCSE alone", baseline({"method": MULTITASK_PROTOCOL.grid("simcse_baseline"),
                                        "epochs": MULTITASK_PROTOCOL.grid("simcse_epochs")}),
              grids={"method": "simcse_baseline", "epochs": "simcse_epochs"}),
        Stage("auto-encoders alone", baseline({"method": MULTITASK_PROTOCOL.grid("autoencoder")}),
              grids={"method": "autoencoder"}),
        Stage("multi-task", multitask_axes),
    ],
    sampled_axes=sampled_axes,
    add_arguments=add_arguments,
    table_metrics=["sts_test_at_best_validation_loss", "best_sts_dev"],  # losses of different methods do not compare
)
