"""Domain MLM, then Augmented SBERT, teacher and student from the MLM model (Reiml (2023), §4.3.1, Table 6.10).

Stage 1 continues MLM pre-training on the target sentences; stage 2 starts each seed's Cross-Bi-Encoder
teacher and bi-encoder student from the same seed's MLM model (FullDomainSBERT), the teacher labelling silver
pairs of the target domain. Stages 3 and 4 are the ablation's other two bi-encoders (§5.4.3): DomainSBERT (the
teacher after MLM on the sampled pairs, the bi-encoder from the model as released) and AugSBERT (no MLM).
Table 6.10's columns are each a target task's own model: give every USEB task with
--eval-task and its sentences with --task-corpus (one task alone may take --corpus); both stages then run per
task, each task's student started from that task's MLM model.

    python sweeps/domain_chain_augsbert.py --dry-run              # the protocol card
    python sweeps/domain_chain_augsbert.py --quick
    python sweeps/domain_chain_augsbert.py --model roberta-base --corpus target_sentences.txt \\
        --sts-dir data/stsbenchmark --gpus-per-trial 0.5
"""

from sentsweep.experiments.reiml_2023.published import ablation_targets, full_domain_sbert_targets
from sentsweep.experiments.tsdae.useb_published import USEB_TASKS
from sentsweep.references import THESIS_REIML_2023
from sentsweep.search_spaces.reiml_2023 import DOMAIN_CHAIN_PROTOCOL as PROTOCOL
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.search.target_tasks import TASK_AXIS, PerTaskOptions, task_axis


def domain_mlm(options):
    return {"method": PROTOCOL.grid("method")} | task_axis(options, USEB_TASKS)


def full_domain_sbert(options):
    """FullDomainSBERT: teacher and bi-encoder from the same seed's domain MLM model (the chain)."""
    return {"method": PROTOCOL.grid("supervised")} | task_axis(options, USEB_TASKS)


def domain_sbert(options):
    """DomainSBERT: the teacher after Reiml 2023's pair MLM inside the trial, the bi-encoder from the model as
    released."""
    return {"method": PROTOCOL.grid("supervised"), "setting": PROTOCOL.grid("domain_sbert"),
            "student_init": PROTOCOL.grid("domain_sbert_student")} | task_axis(options, USEB_TASKS)


def aug_sbert(options):
    """AugSBERT: no MLM, the teacher's embeddings trained as usual."""
    return {"method": PROTOCOL.grid("supervised"), "setting": PROTOCOL.grid("aug_sbert"),
            "freeze_teacher_embeddings": PROTOCOL.grid("aug_sbert_frozen")} | task_axis(options, USEB_TASKS)


DEFINITION = SweepDefinition(
    name="domain_chain_augsbert",
    description=__doc__.splitlines()[0],
    reference=THESIS_REIML_2023,
    protocol=PROTOCOL,
    stages=[
        Stage("domain_mlm", domain_mlm),
        Stage("augsbert", full_domain_sbert, grids={"method": "supervised"}, init_from="domain_mlm"),
        Stage("domain_sbert", domain_sbert, grids={"method": "supervised", "setting": "domain_sbert",
                                                   "student_init": "domain_sbert_student"}),
        Stage("aug_sbert", aug_sbert, grids={"method": "supervised", "setting": "aug_sbert",
                                             "freeze_teacher_embeddings": "aug_sbert_frozen"}),
    ],
    options=PerTaskOptions,
    per_task=True,
    data_labels={TASK_AXIS: USEB_TASKS},
    trains_on_gold_pairs=True,
    # the MLM stage reports its last checkpoint, Augmented SBERT its best on dev
    table_metrics=["sts_test_last", "sts_test_at_best_dev", "best_sts_dev"],
    # Reiml 2023 Table 6.10's FullDomainSBERT row on USEB's four tasks (given with --eval-task), mean of 3 seeds.
    published=tuple(full_domain_sbert_targets() + ablation_targets()),
)
