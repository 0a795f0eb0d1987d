"""Training corpus size 128 ... 65,536 sentences, per method at its own settings (TSDAE paper, §7.1, Figure 3).

Every trial trains 10 epochs up to 100K steps, is evaluated at the end of each epoch, and reports its best
dev epoch (§7.1) on the target task's dev split (§7: "For all the datasets except TwitterPara, the analysis is
carried out on the development set"): --target-task, by default the only --eval-task task; STS-B dev without one.

    python sweeps/sample_size.py --dry-run                        # the protocol card
    python sweeps/sample_size.py --quick
    python sweeps/sample_size.py --model bert-base-uncased --corpus corpus.txt --sts-dir data/stsbenchmark
"""

from dataclasses import dataclass

from sentsweep.experiments.tsdae.findings import SAMPLE_SIZE_ORDERINGS
from sentsweep.experiments.tsdae.target_task import TargetTaskOptions, check_target_task, selection_axes
from sentsweep.references import TSDAE
from sentsweep.search_spaces.tsdae import CORPUS_SIZE_PROTOCOL
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.options import option


@dataclass(frozen=True, kw_only=True)
class SampleSizeOptions(TargetTaskOptions):
    methods: tuple[str, ...] | None = option(f"default: {' '.join(CORPUS_SIZE_PROTOCOL.grid('method'))}")


def grid_axes(options):
    # --sample-sizes (a shared option) replaces the default sizes; the launcher adds it as an axis.
    sizes = [] if options.sample_sizes else ([128, 256] if options.quick else CORPUS_SIZE_PROTOCOL.grid("sample_size"))
    methods = options.methods or (["tsdae", "simcse"] if options.quick else CORPUS_SIZE_PROTOCOL.grid("method"))
    return {"method": methods} | ({"sample_size": sizes} if sizes else {}) | selection_axes(options)


DEFINITION = SweepDefinition(
    name="sample_size",
    description=__doc__.splitlines()[0],
    reference=TSDAE,
    protocol=CORPUS_SIZE_PROTOCOL,
    stages=[Stage("method x sample_size", grid_axes)],
    options=SampleSizeOptions,
    check=check_target_task,
    table_metrics=["sts_test_at_best_dev", "best_sts_dev", "best_task_dev"],
    orderings=SAMPLE_SIZE_ORDERINGS,  # §7.1's finding on Figure 3 (App. G's Figure 6)
)
