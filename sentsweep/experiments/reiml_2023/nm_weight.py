"""Noise Matching: Table 6.10's methods, then the weight w of MLM + w NM and TSDAE + w NM (Reiml (2023), §5.4.2).

Stage 1 runs Table 6.10's rows SimCSE, MLM + SimCSE, NM and TSDAE with CLS and mean pooling (TSDAE as the
table's "TSDAE (repr.)": §5.4.1's 100K steps at batch 8, constant rate); stage 2 sweeps w of MLM + NM and
TSDAE + NM, the project's grid (the thesis gives no weight), whose w = 1 rows are the table's. Every trial is
evaluated after each epoch and reports its best dev epoch (§5.1). Table 6.10's columns are models trained on each
USEB task's own sentences: give each task with --eval-task and its corpus with --task-corpus (one task alone may
take --corpus); every configuration then trains once per task.

    python sweeps/nm_weight.py --dry-run                          # the protocol card
    python sweeps/nm_weight.py --quick
    ray submit cluster.yaml sweeps/nm_weight.py --model bert-base-uncased --corpus corpus.txt \\
        --sts-dir data/stsbenchmark --gpus-per-trial 0.25
"""

from dataclasses import dataclass

from sentsweep.experiments.reiml_2023.published import noise_matching_targets
from sentsweep.experiments.tsdae.useb_published import USEB_TASKS
from sentsweep.references import THESIS_REIML_2023
from sentsweep.search_spaces.ranges import weight_ranges
from sentsweep.search_spaces.reiml_2023 import NM_PROTOCOL
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.config.options import option
from sentsweep.sweep.search.target_tasks import TASK_AXIS, PerTaskOptions, task_axis


@dataclass(frozen=True, kw_only=True)
class NmWeightOptions(PerTaskOptions):
    weights: tuple[float, ...] | None = option("values of w, stage 2's axis (default: the protocol's grid; "
                                                    "--dry-run shows it)", setting="w")
    methods: tuple[str, ...] | None = option(f"the methods L = L_first + w L_NM of stage 2 (default: "
                                                 f"{' '.join(NM_PROTOCOL.grid('weighted_method'))})",
                                             setting="method")
    poolings: tuple[str, ...] | None = option("pooling modes of both stages (default: cls mean)",
                                              setting="pooling")
    weight_range: tuple[float, float] = option("the range of w Optuna samples (--search optuna)", (1e-4, 1.0),
                                               setting="w")
    no_table_rows: bool = option("only the weight grid (stage 2)", False)


def table_rows(options):
    if options.no_table_rows:
        return None  # no stage
    return {"method": ["simcse", "nm"] if options.quick else NM_PROTOCOL.grid("method"),
            "pooling": options.poolings or NM_PROTOCOL.grid("pooling")} | task_axis(options, USEB_TASKS)


def weight_axes(options):
    return {
        "method": options.methods or NM_PROTOCOL.grid("weighted_method"),
        "w": options.weights or ([0.01, 1.0] if options.quick else NM_PROTOCOL.grid("w")),
        "pooling": options.poolings or NM_PROTOCOL.grid("pooling"),
    } | task_axis(options, USEB_TASKS)


def sampled_axes(options):
    # lazy: ray
    from ray import tune

    return {
        "method": tune.choice(options.methods or NM_PROTOCOL.grid("weighted_method")),
        "pooling": tune.choice(options.poolings or NM_PROTOCOL.grid("pooling")),
    } | weight_ranges(*options.weight_range)


DEFINITION = SweepDefinition(
    name="nm_weight",
    description=__doc__.splitlines()[0],
    reference=THESIS_REIML_2023,
    protocol=NM_PROTOCOL,
    stages=[Stage("Table 6.10 rows", table_rows),
            Stage("method x w x pooling", weight_axes, grids={"method": "weighted_method"})],
    sampled_axes=sampled_axes,
    options=NmWeightOptions,
    per_task=True,
    data_labels={TASK_AXIS: USEB_TASKS},
    # Reiml 2023 Table 6.10's two unsupervised blocks on USEB's tasks (given with --eval-task and --task-corpus), mean
    # of 3 seeds: 11 rows x 4 tasks, each a model trained on its task's corpus; MLM + NM and TSDAE + NM at stage 2's w =
    # 1 (Reiml 2023 gives no weight, see the targets' note).
    published=tuple(noise_matching_targets()),
)
