"""Batch size of the contrastive methods, one epoch each (Wang (2022), §5.3.4, Table 5.11).

SimCSE (and ConSERT) on Table 5.3's basic setup, average pooling; the steps follow the batch size.

    python sweeps/batch_size.py --dry-run                         # the protocol card
    python sweeps/batch_size.py --quick
"""

from sentsweep.references import THESIS_WANG_2022
from sentsweep.search_spaces.contrastive import BATCH_SIZE_PROTOCOL
from sentsweep.sweep import Stage, SweepDefinition


def add_arguments(parser):
    parser.add_argument("--methods", nargs="+", help=f"default: {' '.join(BATCH_SIZE_PROTOCOL.grid('method'))}")


def grid_axes(args):
    sizes = [] if args.batch_sizes else ([8, 32] if args.quick else BATCH_SIZE_PROTOCOL.grid("batch_size"))
    methods = args.methods or (["simcse"] if args.quick else BATCH_SIZE_PROTOCOL.grid("method"))
    return {"method": methods} | ({"batch_size": sizes} if sizes else {})


DEFINITION = SweepDefinition(
    name="batch_size",
    description=__doc__.splitlines()[0],
    reference=THESIS_WANG_2022,
    protocol=BATCH_SIZE_PROTOCOL,
    stages=[Stage("method x batch_size", grid_axes)],
    add_arguments=add_arguments,
    table_metrics=["sts_test_at_best_validation_loss", "best_sts_dev"],  # losses of different methods do not compare
)
