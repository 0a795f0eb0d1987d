"""TSDAE paper's main protocol (§5, App. B): TSDAE, MLM, CT and SimCSE for 100K steps, each at its own settings.

No early stopping: the last checkpoint is reported, except SimCSE's, which keeps its official code's early
stopping on STS-B dev (App. B, fn. 8: give --sts-dir). MLM follows §5.2's steps, batch size and rate and
otherwise Devlin et al. (10K warm-up steps, linear decay, weight decay 0.01; outside the seeds).

Table 2 trains one model per target task on that task's own sentences (§4.1: "For unsupervised training, we just
use the sentences from the training split"): give each USEB task with --eval-task and its training sentences with
--task-corpus (one task alone may take --corpus); every method then trains once per task and is scored on that
task (its column). Without a USEB task, one model per method trains on --corpus and is scored on STS (Table 3's
quantity, on Wikipedia sentences in the paper; Table 11's STS12-16 and SICK-R with --eval-task sts12=... sickr=...).

    python sweeps/tsdae_main.py --dry-run                         # the protocol card
    python sweeps/tsdae_main.py --quick
    python sweeps/tsdae_main.py --model bert-base-uncased --sts-dir data/stsbenchmark \\
        --eval-task askubuntu=data-eval/askubuntu --task-corpus askubuntu=data-train/askubuntu/unsupervised/train.txt \\
        --eval-task scidocs=data-eval/scidocs --task-corpus scidocs=data-train/scidocs/unsupervised/train.txt
"""

from dataclasses import dataclass

from sentsweep.experiments.tsdae.useb_published import (
    USEB_TASKS,
    baseline_targets,
    sts_task_targets,
    stsb_targets,
    unsupervised_targets,
)
from sentsweep.references import TSDAE
from sentsweep.search_spaces.tsdae import MAIN_PROTOCOL
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.options import option
from sentsweep.sweep.search.target_tasks import TASK_AXIS, PerTaskOptions, task_axis


@dataclass(frozen=True, kw_only=True)
class TsdaeMainOptions(PerTaskOptions):
    methods: tuple[str, ...] | None = option(f"methods to compare (default: {' '.join(MAIN_PROTOCOL.grid('method'))})")


def method_axes(options):
    return {"method": options.methods or MAIN_PROTOCOL.grid("method")} | task_axis(options, USEB_TASKS)


def baseline_axes(options):
    """Table 2's BM25 and BERT-base-uncased rows on each target task (no stage without --eval-task)."""
    tasks = task_axis(options, USEB_TASKS)
    return {"method": MAIN_PROTOCOL.grid("baseline")} | tasks if tasks else None


DEFINITION = SweepDefinition(
    name="tsdae_main",
    description=__doc__.splitlines()[0],
    reference=TSDAE,
    protocol=MAIN_PROTOCOL,
    stages=[Stage("method", method_axes), Stage("baselines", baseline_axes, grids={"method": "baseline"})],
    options=TsdaeMainOptions,
    per_task=True,
    data_labels={TASK_AXIS: USEB_TASKS},
    # the last checkpoint's test score (App. B's fixed steps); SimCSE's at its best STS-B dev (fn. 8)
    table_metrics=["sts_test_last", "sts_test_at_best_dev", "sts_dev"],
    # TSDAE Table 2's unsupervised block on USEB's tasks (4 methods x 4 tasks, mean of 5 seeds), each cell a model
    # trained on its task's corpus (given with --eval-task and --task-corpus), its BM25 and BERT-base-uncased rows;
    # Table 3's STSb test column and App. F Table 11's STS12-16 / SICK-R columns (4 methods trained on Wikipedia
    # sentences: a run without a USEB task; --eval-task sts12=... for Table 11).
    published=tuple(unsupervised_targets({"stage": "method"}) + baseline_targets({"stage": "baselines"})
                    + stsb_targets({"stage": "method"}) + sts_task_targets({"stage": "method"})),
)
