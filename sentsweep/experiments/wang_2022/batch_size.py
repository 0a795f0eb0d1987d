"""Batch size of the contrastive methods, one epoch each (Wang (2022), §5.3.4, Table 5.11).

SimCSE (and ConSERT) on Table 5.3's basic setup, average pooling; the steps follow the batch size.

    python sweeps/batch_size.py --dry-run                         # the protocol card
    python sweeps/batch_size.py --quick
"""

from dataclasses import dataclass

from sentsweep.references import THESIS_WANG_2022
from sentsweep.search_spaces.wang_2022 import BATCH_SIZE_PROTOCOL
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.options import SweepOptions, option


@dataclass(frozen=True, kw_only=True)
class BatchSizeOptions(SweepOptions):
    methods: tuple[str, ...] | None = option(f"methods to compare (default: "
                                                 f"{' '.join(BATCH_SIZE_PROTOCOL.grid('method'))})")


def grid_axes(options):
    sizes = [] if options.batch_sizes else ([8, 32] if options.quick else BATCH_SIZE_PROTOCOL.grid("batch_size"))
    methods = options.methods or (["simcse"] if options.quick else BATCH_SIZE_PROTOCOL.grid("method"))
    return {"method": methods} | ({"batch_size": sizes} if sizes else {})


DEFINITION = SweepDefinition(
    name="batch_size",
    description=__doc__.splitlines()[0],
    reference=THESIS_WANG_2022,
    protocol=BATCH_SIZE_PROTOCOL,
    stages=[Stage("method x batch_size", grid_axes)],
    options=BatchSizeOptions,
    table_metrics=["sts_test_at_best_validation_loss", "best_sts_dev"],  # losses of different methods do not compare
)
