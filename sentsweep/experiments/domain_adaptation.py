"""Domain adaptation both ways: NLI+STS then the target domain, and the reverse (TSDAE paper, §4, Table 2).

Stage 1 trains SBERT on the NLI+STS pairs; stage 2 continues each seed's model with each unsupervised method on
the target sentences. Stage 3 trains the unsupervised methods on the target sentences alone (Table 2's first
block); stage 4 continues each of their models with SBERT on the NLI+STS pairs.

    python sweeps/domain_adaptation.py --dry-run                  # the protocol card
    python sweeps/domain_adaptation.py --quick
    python sweeps/domain_adaptation.py --model bert-base-uncased --corpus askubuntu_titles.txt \\
        --sts-dir data/stsbenchmark --eval-task askubuntu=data-eval/askubuntu --gpus-per-trial 0.5
"""

from dataclasses import dataclass

from sentsweep.experiments._useb_published import nli_sts_then_target_targets, unsupervised_targets
from sentsweep.references import TSDAE
from sentsweep.search_spaces.chains import DOMAIN_ADAPTATION_PROTOCOL as PROTOCOL
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.options import SweepOptions, option


@dataclass(frozen=True, kw_only=True)
class DomainAdaptationOptions(SweepOptions):
    methods: tuple[str, ...] | None = option(f"unsupervised methods (default: {' '.join(PROTOCOL.grid('method'))})")


def unsupervised(options):
    return {"method": options.methods or (["tsdae"] if options.quick else PROTOCOL.grid("method"))}


def supervised(options):
    return {"method": PROTOCOL.grid("supervised")}


DEFINITION = SweepDefinition(
    name="domain_adaptation",
    description=__doc__.splitlines()[0],
    reference=TSDAE,
    protocol=PROTOCOL,
    stages=[
        Stage("nli_sts", supervised, grids={"method": "supervised"}),
        Stage("nli_sts_then_target", unsupervised, init_from="nli_sts"),
        Stage("target", unsupervised),
        Stage("target_then_nli_sts", supervised, grids={"method": "supervised"}, init_from="target", init_rows="each"),
    ],
    options=DomainAdaptationOptions,
    trains_on_gold_pairs=True,
    # the unsupervised stages report their last checkpoint (002 App. B: no early stopping; SimCSE its best on STS-B
    # dev, footnote 8), the supervised ones
    # their best on dev
    table_metrics=["sts_test_last", "sts_test_at_best_dev", "best_sts_dev"],
    # 002 Table 2 on USEB's tasks (given with --eval-task), mean of 5 seeds: the unsupervised block (stage
    # target) and "NLI+STS -> target task" (stage nli_sts_then_target), 4 methods x 4 tasks each. The block
    # "target task -> NLI+STS" is not targeted: its rows are told apart by the `pretrained` axis, which the
    # stage only gets at run time from the target stage's rows.
    published=tuple(unsupervised_targets({"stage": "target"})
                    + nli_sts_then_target_targets({"stage": "nli_sts_then_target"})),
)
