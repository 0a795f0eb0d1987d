"""Training corpus size 128 ... 65,536 sentences (powers of two), per method (TSDAE paper, figure 3).

    python sweeps/sample_size.py --quick
    python sweeps/sample_size.py --model bert-base-uncased --corpus corpus.txt --sts-dir data/stsbenchmark
"""

from sentsweep.references import TSDAE
from sentsweep.search_spaces.contrastive import QUICK_SETTINGS, SAMPLE_SIZE_METHODS, SAMPLE_SIZES
from sentsweep.search_spaces.tsdae import PAPER_SETTINGS
from sentsweep.sweep import Stage, SweepDefinition


def add_arguments(parser):
    parser.add_argument("--methods", nargs="+", help=f"default: {' '.join(SAMPLE_SIZE_METHODS)}")


def grid_axes(args):
    # --sample-sizes (a shared option) replaces the default sizes; the launcher adds it as an axis.
    sizes = [] if args.sample_sizes else ([128, 256] if args.quick else SAMPLE_SIZES)
    return {"method": args.methods or (["tsdae", "simcse"] if args.quick else SAMPLE_SIZE_METHODS)} | (
        {"sample_size": sizes} if sizes else {}
    )


DEFINITION = SweepDefinition(
    name="sample_size",
    description=__doc__.splitlines()[0],
    reference=TSDAE,
    constants=PAPER_SETTINGS,
    quick_constants=QUICK_SETTINGS,
    stages=[Stage("method x sample_size", grid_axes)],
    add_arguments=add_arguments,
)
