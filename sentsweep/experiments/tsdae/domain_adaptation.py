"""Domain adaptation both ways: NLI+STS then the target domain, and the reverse (TSDAE paper, §4, Table 2).

The NLI+STS training is two steps (TSDAE §5.1: "trained on SNLI + MultiNLI data using the Multiple-Negative
Ranking Loss (MNRL) ... and the Mean Square Error (MSE) loss on the STS benchmark train set"): SBERT with MNRL on
the NLI pairs of --nli-file (contradictions as hard negatives), then SBERT with the cosine (MSE) loss on STS-B train
from each seed's NLI model. Stages 1-2 run them from the model as released; stage 3 continues each seed's NLI+STS
model with each unsupervised method on the target sentences (Table 2's "NLI+STS -> target" block). Stage 4 trains
the unsupervised methods on the target sentences alone (its first block); stages 5-6 continue each of their models
with the NLI step, then the STS step ("target -> NLI+STS").

Each of Table 2's columns is a model trained on its own task's sentences (§4.1): give every USEB task with
--eval-task and its training sentences with --task-corpus (one task alone may take --corpus). Stages 3-6 then run
per target task, each task's chain continuing that task's models and scored on that task; stages 1-2 train one
NLI+STS model for all tasks and score it on each.

    python sweeps/domain_adaptation.py --dry-run                  # the protocol card
    python sweeps/domain_adaptation.py --quick                    # the shipped demo NLI file
    python sweeps/domain_adaptation.py --model bert-base-uncased --corpus askubuntu_titles.txt \\
        --nli-file data/AllNLI.tsv.gz --sts-dir data/stsbenchmark --eval-task askubuntu=data-eval/askubuntu \\
        --gpus-per-trial 0.5
"""

from dataclasses import dataclass
from pathlib import Path

from sentsweep.data import read_nli_file
from sentsweep.demo_data import NLI_FILE
from sentsweep.errors import InputError
from sentsweep.experiments.tsdae.useb_published import (
    USEB_TASKS,
    nli_sts_then_target_targets,
    target_then_nli_sts_targets,
    unsupervised_targets,
)
from sentsweep.references import TSDAE
from sentsweep.search_spaces.tsdae import DOMAIN_ADAPTATION_PROTOCOL as PROTOCOL
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.options import option
from sentsweep.sweep.search.target_tasks import TASK_AXIS, PerTaskOptions, task_axis


@dataclass(frozen=True, kw_only=True)
class DomainAdaptationOptions(PerTaskOptions):
    methods: tuple[str, ...] | None = option(f"unsupervised methods (default: {' '.join(PROTOCOL.grid('method'))})")
    nli_file: str | None = option("NLI pairs of the NLI step: SNLI + MultiNLI in the format of sentence-transformers' "
                                  "AllNLI.tsv.gz (tab-separated split, sentence1, sentence2, label; gzipped or not), "
                                  "its train split (required, but with --quick; default there: the shipped demo file)")


def nli_settings(options: DomainAdaptationOptions) -> dict:
    """{nli_file: the absolute path} of --nli-file (with --quick, the demo file), read now so that a missing or
    malformed file fails before anything runs; none without --nli-file in a dry run (the card says so)."""
    if options.nli_file is None and not options.quick:
        if options.dry_run:
            return {}
        raise InputError("--nli-file is required without --quick: the NLI pairs (SNLI + MultiNLI, AllNLI.tsv.gz) "
                         "of the NLI+STS steps")
    path = Path(options.nli_file or NLI_FILE).resolve()
    read_nli_file(path)
    return {"nli_file": str(path)}


def unsupervised(options):
    """The unsupervised methods on the target sentences: per target task."""
    methods = options.methods or (["tsdae"] if options.quick else PROTOCOL.grid("method"))
    return {"method": methods} | task_axis(options, USEB_TASKS)


def nli_step(options):
    return {"method": PROTOCOL.grid("nli_step")}


def sts_step(options):
    return {"method": PROTOCOL.grid("sts_step")}


def nli_step_per_task(options):
    """The NLI step after the target domain: each task's models continued, scored on that task."""
    return nli_step(options) | task_axis(options, USEB_TASKS)


def sts_step_per_task(options):
    return sts_step(options) | task_axis(options, USEB_TASKS)


DEFINITION = SweepDefinition(
    name="domain_adaptation",
    description=__doc__.splitlines()[0],
    reference=TSDAE,
    protocol=PROTOCOL,
    stages=[
        Stage("nli", nli_step, grids={"method": "nli_step"}),
        Stage("nli_sts", sts_step, grids={"method": "sts_step"}, init_from="nli"),
        Stage("nli_sts_then_target", unsupervised, init_from="nli_sts"),
        Stage("target", unsupervised),
        Stage("target_then_nli", nli_step_per_task, grids={"method": "nli_step"}, init_from="target",
              init_rows="each"),
        Stage("target_then_nli_sts", sts_step_per_task, grids={"method": "sts_step"}, init_from="target_then_nli",
              init_rows="each"),
    ],
    options=DomainAdaptationOptions,
    per_task=True,
    data_labels={TASK_AXIS: USEB_TASKS},
    trains_on_gold_pairs=True,
    settings_from_options=nli_settings,
    # the unsupervised stages report their last checkpoint (TSDAE App. B: no early stopping; SimCSE its best on STS-B
    # dev, footnote 8), the supervised ones
    # their best on dev
    table_metrics=["sts_test_last", "sts_test_at_best_dev", "best_sts_dev"],
    # TSDAE Table 2 on USEB's tasks (given with --eval-task and --task-corpus), mean of 5 seeds, each cell a model of
    # its task's corpus: the unsupervised block (stage target), "NLI+STS -> target task" (stage
    # nli_sts_then_target) and "target task -> NLI+STS" (stage target_then_nli_sts, its rows told apart by the
    # `pretrained` axis the chain gives it), 4 methods x 4 tasks each.
    published=tuple(unsupervised_targets({"stage": "target"})
                    + nli_sts_then_target_targets({"stage": "nli_sts_then_target"})
                    + target_then_nli_sts_targets({"stage": "target_then_nli_sts"})),
)
