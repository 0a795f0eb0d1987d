"""TSDAE greedy configuration search (TSDAE paper, App. A, Tables 5-7): noise type, ratio, pooling, then tying.

Stage 1 compares the noise types at ratio 0.3 with CLS pooling (Table 5); stage 2 tunes the ratio of the best
type (Table 6); stage 3 the pooling (Table 7); all three with an untied decoder. Stage 4 compares untied and
tied (App. A: tying lifts 78.77 to 79.15). Each stage keeps the previous stages' best on dev.

    python sweeps/tsdae_noise.py --dry-run                        # the protocol card
    python sweeps/tsdae_noise.py --quick
"""

from sentsweep.references import TSDAE
from sentsweep.search_spaces.tsdae import QUICK_GRIDS, SEARCH_PROTOCOL
from sentsweep.sweep import Stage, SweepDefinition


def axis(name: str):
    """Stage axes: the protocol's grid of `name` (--quick: a smaller one; tying always both)."""
    return lambda args: {name: QUICK_GRIDS.get(name, SEARCH_PROTOCOL.grid(name)) if args.quick
                         else SEARCH_PROTOCOL.grid(name)}


DEFINITION = SweepDefinition(
    name="tsdae_noise",
    description=__doc__.splitlines()[0],
    reference=TSDAE,
    protocol=SEARCH_PROTOCOL,
    stages=[Stage(name, axis(name)) for name in ("noise_type", "noise_ratio", "pooling", "tie_decoder")],
    greedy=True,
)
