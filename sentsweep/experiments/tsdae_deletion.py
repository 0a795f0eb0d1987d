"""TSDAE deletion ratio x pooling ablation (TSDAE paper, appendix A, tables 6 and 7).

    python sweeps/tsdae_deletion.py --quick                       # minutes, tiny model, demo data
    python sweeps/tsdae_deletion.py --model bert-base-uncased --corpus nli_sentences.txt \\
        --sts-dir data/stsbenchmark --gpus-per-trial 0.5           # the paper's setting
"""

from sentsweep.references import TSDAE
from sentsweep.search_spaces.tsdae import (
    PAPER_DELETION_RATIOS,
    PAPER_POOLINGS,
    PAPER_SETTINGS,
    QUICK_SETTINGS,
    deletion_pooling_grid,
    deletion_pooling_ranges,
)
from sentsweep.sweep import Stage, SweepDefinition


def add_arguments(parser):
    parser.add_argument("--ratios", type=float, nargs="+", help="deletion ratios (grid mode)")
    parser.add_argument("--poolings", nargs="+", help="pooling modes: cls mean max")
    parser.add_argument("--ratio-range", type=float, nargs=2, default=[0.1, 0.9], help="Optuna range")


def grid_axes(args):
    ratios = args.ratios or ([0.3, 0.6] if args.quick else PAPER_DELETION_RATIOS)
    poolings = args.poolings or (["cls", "mean"] if args.quick else PAPER_POOLINGS)
    return deletion_pooling_grid(ratios, poolings)


def sampled_axes(args):
    return deletion_pooling_ranges(*args.ratio_range, args.poolings or PAPER_POOLINGS)


DEFINITION = SweepDefinition(
    name="tsdae_deletion",
    description=__doc__.splitlines()[0],
    reference=TSDAE,
    constants=PAPER_SETTINGS,
    quick_constants=QUICK_SETTINGS | {"max_steps": 60},
    stages=[Stage("deletion_ratio x pooling", grid_axes)],
    sampled_axes=sampled_axes,
    add_arguments=add_arguments,
)
