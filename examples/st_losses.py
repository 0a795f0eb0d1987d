"""Recipe (b): sentence-transformers losses as methods, with no code: CoSENT, AnglE and MNRL on labelled pairs.

Any loss of `sentence_transformers.sentence_transformer.losses` that sentsweep knows how to feed (see
sentsweep.trainables.st_losses) is the method `st:<LossName>`; its constructor arguments are settings:

    python st_losses.py --dry-run                                  # the card: each loss's arguments and citation
    python st_losses.py --quick
    python st_losses.py --quick --set scale=30                     # a loss argument, checked as any setting
    python st_losses.py --methods st:CoSENTLoss st:CachedMultipleNegativesRankingLoss --sts-dir stsbenchmark/
"""

import sys
from dataclasses import dataclass

from sentsweep import Protocol, Sourced, Stage, SweepDefinition, SweepOptions, option, project_choice, run_sweep

LOSSES = ["st:CoSENTLoss", "st:AnglELoss", "st:MultipleNegativesRankingLoss"]
OWN = project_choice("this example's choice")
PROTOCOL = Protocol(
    settings={"lr": Sourced(2e-5, OWN), "batch_size": Sourced(16, OWN), "epochs": Sourced(4, OWN),
              "eval_steps": Sourced(500, OWN), "max_seq_length": Sourced(128, OWN)},
    seeds=Sourced(5, OWN),
    grids={"method": Sourced(LOSSES, OWN)},
    quick=dict(lr=1e-3, max_seq_length=32, epochs=None, max_steps=20, eval_steps=10, seeds=2),
)


@dataclass(frozen=True, kw_only=True)
class LossOptions(SweepOptions):
    """The sweep's own option, beside every sweep's (a frozen dataclass: the command line is generated from it)."""

    methods: tuple[str, ...] | None = option(f"st:<loss> methods (default: {' '.join(LOSSES)})")


DEFINITION = SweepDefinition(
    name="st_losses",
    description=__doc__.splitlines()[0],
    protocol=PROTOCOL,
    stages=[Stage("losses", lambda options: {"method": options.methods or PROTOCOL.grid("method")})],
    options=LossOptions,
    trains_on_gold_pairs=True,
)

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
