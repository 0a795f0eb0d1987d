"""TSDAE deletion ratio x pooling ablation (TSDAE paper, App. A, Tables 6 and 7), untied as in the paper's search.

    python sweeps/tsdae_deletion.py --dry-run                     # the protocol card
    python sweeps/tsdae_deletion.py --quick                       # minutes, tiny model, demo data
    python sweeps/tsdae_deletion.py --model bert-base-uncased --corpus nli_sentences.txt \\
        --sts-dir data/stsbenchmark --gpus-per-trial 0.5           # the paper's setting
"""

from dataclasses import dataclass, replace

from sentsweep.experiments.tsdae.published import pooling_targets, ratio_targets
from sentsweep.references import TSDAE
from sentsweep.search_spaces.ranges import deletion_pooling_ranges
from sentsweep.search_spaces.tsdae import QUICK_GRIDS, SEARCH_PROTOCOL
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.options import SweepOptions, option

# --quick (the project's demo, `make demo`): within its 60 steps TSDAE training visibly moves the tiny random
# model's mean and max pooling on the demo data (max: STS dev 18 untrained, 29-43 trained), while its CLS output
# only loses dev score, so CLS cells would all keep the untrained model. Dev is scored every 10 steps.
QUICK_POOLINGS = ["mean", "max"]
QUICK_OVERRIDES = {"max_steps": 60, "eval_steps": 10}


@dataclass(frozen=True, kw_only=True)
class TsdaeDeletionOptions(SweepOptions):
    ratios: tuple[float, ...] | None = option("deletion ratios, an axis (default: the protocol's grid; "
                                                   "--dry-run shows it)", setting="noise_ratio")
    poolings: tuple[str, ...] | None = option("pooling modes, an axis (default: the protocol's grid; "
                                                   "--dry-run shows it)", setting="pooling")
    ratio_range: tuple[float, float] = option("the range of deletion ratios Optuna samples (--search optuna)",
                                                  (0.1, 0.9), setting="noise_ratio")


def grid_axes(options):
    grid = (QUICK_GRIDS | {"pooling": QUICK_POOLINGS} if options.quick
            else {name: SEARCH_PROTOCOL.grid(name) for name in ("noise_ratio", "pooling")})
    return {"noise_ratio": options.ratios or grid["noise_ratio"], "pooling": options.poolings or grid["pooling"]}


def sampled_axes(options):
    return deletion_pooling_ranges(*options.ratio_range, options.poolings or SEARCH_PROTOCOL.grid("pooling"))


DEFINITION = SweepDefinition(
    name="tsdae_deletion",
    description=__doc__.splitlines()[0],
    reference=TSDAE,
    protocol=replace(SEARCH_PROTOCOL, quick=SEARCH_PROTOCOL.quick | QUICK_OVERRIDES),
    stages=[Stage("deletion_ratio x pooling", grid_axes)],
    sampled_axes=sampled_axes,
    options=TsdaeDeletionOptions,
    # TSDAE App. A: Table 6 (each ratio with CLS) and Table 7 (ratio 0.6, mean and max), 11 of the grid's 27 cells,
    # all deletion and untied as the sweep runs them; best STS-B dev over the evaluations, mean of 5 seeds. The
    # protocol is the paper's (30K steps, dev every 1.5K, batch 8, lr 3e-5) except the constant rate's source
    # (Reiml 2023's replication) and max_seq_length 128 (TSDAE gives none); give bert-base-uncased and SNLI + MultiNLI
    # to compare. --quick (tiny model, 60 steps, lr 1e-3) misses them all, as the report's settings list says.
    published=tuple(ratio_targets({}) + pooling_targets({}, with_cls=False)),
)
