"""Batch size of the contrastive methods (SimCSE, NM, CT, ConSERT): in-batch negatives grow with it.

Reiml (2023) (section 5.4.2) found batch size 8 too easy for contrastive objectives and used 64.

    python sweeps/batch_size.py --quick
"""

from sentsweep.references import THESIS_REIML_2023
from sentsweep.search_spaces.contrastive import BATCH_SIZES, CONTRASTIVE_METHODS, NM_SETTINGS, QUICK_SETTINGS
from sentsweep.sweep import Stage, SweepDefinition


def add_arguments(parser):
    parser.add_argument("--methods", nargs="+", help=f"default: {' '.join(CONTRASTIVE_METHODS)}")


def grid_axes(args):
    sizes = [] if args.batch_sizes else ([8, 32] if args.quick else BATCH_SIZES)
    return {"method": args.methods or (["simcse", "nm"] if args.quick else CONTRASTIVE_METHODS)} | (
        {"batch_size": sizes} if sizes else {}
    )


DEFINITION = SweepDefinition(
    name="batch_size",
    description=__doc__.splitlines()[0],
    reference=THESIS_REIML_2023,
    constants=NM_SETTINGS | {"method": "simcse"},
    quick_constants=QUICK_SETTINGS,
    stages=[Stage("method x batch_size", grid_axes)],
    add_arguments=add_arguments,
)
