"""Learning rate of the contrastive methods (SimCSE, NM, CT, ConSERT); grid or Optuna log-uniform.

The project's own sweep, on Reiml (2023) §5.4.2's settings; CT keeps its optimiser and schedule (TSDAE paper
App. B), the axis being its initial rate.

    python sweeps/learning_rate.py --dry-run                      # the protocol card
    python sweeps/learning_rate.py --quick
    python sweeps/learning_rate.py --search optuna --methods simcse --num-configs 12 --model ... --sts-dir ...
"""

from dataclasses import dataclass

from sentsweep.search_spaces.combined import LEARNING_RATE_PROTOCOL
from sentsweep.search_spaces.ranges import learning_rate_ranges
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.options import SweepOptions, option


@dataclass(frozen=True, kw_only=True)
class LearningRateOptions(SweepOptions):
    methods: tuple[str, ...] | None = option(f"methods to compare (default: "
                                                 f"{' '.join(LEARNING_RATE_PROTOCOL.grid('method'))})",
                                             setting="method")
    lrs: tuple[float, ...] | None = option("learning rates, an axis (default: the protocol's grid; --dry-run shows it)",
                                           setting="lr")
    lr_range: tuple[float, float] = option("the range of learning rates Optuna samples (--search optuna)", (1e-6, 1e-3),
                                             setting="lr")


def grid_axes(options):
    lrs = options.lrs or ([1e-4, 1e-3] if options.quick else LEARNING_RATE_PROTOCOL.grid("lr"))
    return {"method": options.methods or (["simcse", "nm"] if options.quick else LEARNING_RATE_PROTOCOL.grid("method")),
            "lr": lrs}


def sampled_axes(options):
    # lazy: ray
    from ray import tune

    return {"method": tune.choice(options.methods or LEARNING_RATE_PROTOCOL.grid("method"))} | learning_rate_ranges(
        *options.lr_range)


DEFINITION = SweepDefinition(
    name="learning_rate",
    description=__doc__.splitlines()[0],
    protocol=LEARNING_RATE_PROTOCOL,
    stages=[Stage("method x lr", grid_axes)],
    sampled_axes=sampled_axes,
    options=LearningRateOptions,
)
