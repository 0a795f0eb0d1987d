"""TSDAE greedy configuration search (TSDAE paper, appendix A, tables 5-7): noise, ratio, pooling, tying.

Stage 1 compares the noise types at ratio 0.3 with CLS pooling; stage 2 tunes the ratio of the best type;
stage 3 the pooling; stage 4 tied vs untied decoder. Each stage keeps the previous stages' best on dev.

    python sweeps/tsdae_noise.py --quick
"""

from sentsweep.references import TSDAE
from sentsweep.search_spaces.tsdae import (
    PAPER_DELETION_RATIOS,
    PAPER_NOISE_TYPES,
    PAPER_POOLINGS,
    PAPER_SETTINGS,
    QUICK_SETTINGS,
)
from sentsweep.sweep import Stage, SweepDefinition


def pick(args, full, quick):
    return quick if args.quick else full


DEFINITION = SweepDefinition(
    name="tsdae_noise",
    description=__doc__.splitlines()[0],
    reference=TSDAE,
    constants=PAPER_SETTINGS | {"noise_ratio": 0.3},
    quick_constants=QUICK_SETTINGS,
    stages=[
        Stage("noise_type", lambda a: {"noise_type": pick(a, PAPER_NOISE_TYPES, ["delete", "swap", "mask"])}),
        Stage("noise_ratio", lambda a: {"noise_ratio": pick(a, PAPER_DELETION_RATIOS, [0.3, 0.6])}),
        Stage("pooling", lambda a: {"pooling": pick(a, PAPER_POOLINGS, ["cls", "mean"])}),
        Stage("tie_decoder", lambda a: {"tie_decoder": [True, False]}),
    ],
)
