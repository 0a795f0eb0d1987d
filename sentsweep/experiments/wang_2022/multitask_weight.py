"""Multi-task weight: L = L_SimCSE + w L_AE for the CLM and MLM auto-encoders (Wang (2022), §5.3.7, eq. 3.6).

Tables 5.16 / 5.17: w in {0.1, 0.01, 0.001, 0.0001}, 3 epochs, seeds 1, 7, 42, with the tables' baselines:
SimCSE for 1 and 3 epochs and each auto-encoder alone (stages 1 and 2), then the multi-task grid (stage 3).

    python sweeps/multitask_weight.py --dry-run                   # the protocol card
    python sweeps/multitask_weight.py --quick
"""

from dataclasses import dataclass

from sentsweep.experiments.wang_2022.published import quora_targets
from sentsweep.references import THESIS_WANG_2022
from sentsweep.search_spaces.ranges import weight_ranges
from sentsweep.search_spaces.wang_2022 import MULTITASK_PROTOCOL
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.options import SweepOptions, option


@dataclass(frozen=True, kw_only=True)
class MultitaskWeightOptions(SweepOptions):
    weights: tuple[float, ...] | None = option("values of w, the multi-task stage's axis (default: the protocol's "
                                                    "grid; --dry-run shows it)", setting="w")
    methods: tuple[str, ...] | None = option(f"the multi-task methods (default: "
                                                 f"{' '.join(MULTITASK_PROTOCOL.grid('method'))})",
                                             setting="method")
    weight_range: tuple[float, float] = option("the range of w Optuna samples (--search optuna)", (1e-4, 0.1),
                                               setting="w")
    no_baselines: bool = option("only the multi-task grid (stage 3)", False)


def baseline(axes):
    """A baseline stage's axes (None, so no stage, with --no-baselines)."""
    return lambda options: None if options.no_baselines else axes


def multitask_axes(options):
    return {"method": options.methods or MULTITASK_PROTOCOL.grid("method"),
            "w": options.weights or ([0.1, 0.001] if options.quick else MULTITASK_PROTOCOL.grid("w"))}


def sampled_axes(options):
    # lazy: ray
    from ray import tune

    return {"method": tune.choice(options.methods or MULTITASK_PROTOCOL.grid("method"))} | weight_ranges(
        *options.weight_range)


DEFINITION = SweepDefinition(
    name="multitask_weight",
    description=__doc__.splitlines()[0],
    reference=THESIS_WANG_2022,
    protocol=MULTITASK_PROTOCOL,
    stages=[
        Stage("SimCSE alone", baseline({"method": MULTITASK_PROTOCOL.grid("simcse_baseline"),
                                        "epochs": MULTITASK_PROTOCOL.grid("simcse_epochs")}),
              grids={"method": "simcse_baseline", "epochs": "simcse_epochs"}),
        Stage("auto-encoders alone", baseline({"method": MULTITASK_PROTOCOL.grid("autoencoder")}),
              grids={"method": "autoencoder"}),
        Stage("multi-task", multitask_axes),
    ],
    sampled_axes=sampled_axes,
    options=MultitaskWeightOptions,
    table_metrics=["sts_test_at_best_validation_loss", "best_sts_dev"],  # losses of different methods do not compare
    # Wang 2022 Table 5.17 on Quora (given with --eval-task quora=...), mean of 3 seeds: 12 losses x R@100, R@10. Table
    # 5.16 is on eProduct (internal): no target.
    published=tuple(quora_targets()),
)
