"""Noise Matching: Table 6.10's methods, then the weight w of MLM + w NM and TSDAE + w NM (Reiml (2023), §5.4.2).

Stage 1 runs Table 6.10's rows SimCSE, MLM + SimCSE, NM and TSDAE with CLS and mean pooling; stage 2 sweeps
w of MLM + NM and TSDAE + NM, the project's grid (the thesis gives no weight), whose w = 1 rows are the
table's.

    python sweeps/nm_weight.py --dry-run                          # the protocol card
    python sweeps/nm_weight.py --quick
    ray submit cluster.yaml sweeps/nm_weight.py --model bert-base-uncased --corpus corpus.txt \\
        --sts-dir data/stsbenchmark --gpus-per-trial 0.25
"""

from ray import tune

from sentsweep.references import THESIS_REIML_2023
from sentsweep.search_spaces.contrastive import NM_PROTOCOL, weight_ranges
from sentsweep.sweep import Stage, SweepDefinition


def add_arguments(parser):
    parser.add_argument("--weights", type=float, nargs="+", help="values of w (grid mode)")
    parser.add_argument("--methods", nargs="+", help=f"default: {' '.join(NM_PROTOCOL.grid('weighted_method'))}")
    parser.add_argument("--poolings", nargs="+", help="default: cls mean")
    parser.add_argument("--weight-range", type=float, nargs=2, default=[1e-4, 1.0], help="Optuna range of w")
    parser.add_argument("--no-table-rows", action="store_true", help="only the weight grid (stage 2)")


def table_rows(args):
    if args.no_table_rows:
        return None  # no stage
    return {"method": ["simcse", "nm"] if args.quick else NM_PROTOCOL.grid("method"),
            "pooling": args.poolings or NM_PROTOCOL.grid("pooling")}


def weight_axes(args):
    return {
        "method": args.methods or NM_PROTOCOL.grid("weighted_method"),
        "w": args.weights or ([0.01, 1.0] if args.quick else NM_PROTOCOL.grid("w")),
        "pooling": args.poolings or NM_PROTOCOL.grid("pooling"),
    }


def sampled_axes(args):
    return {
        "method": tune.choice(args.methods or NM_PROTOCOL.grid("weighted_method")),
        "pooling": tune.choice(args.poolings or NM_PROTOCOL.grid("pooling")),
    } | weight_ranges(*args.weight_range)


DEFINITION = SweepDefinition(
    name="nm_weight",
    description=__doc__.splitlines()[0],
    reference=THESIS_REIML_2023,
    protocol=NM_PROTOCOL,
    stages=[Stage("Table 6.10 rows", table_rows),
            Stage("method x w x pooling", weight_axes, grids={"method": "weighted_method"})],
    sampled_axes=sampled_axes,
    add_arguments=add_arguments,
)
