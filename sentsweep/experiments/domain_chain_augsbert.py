"""Domain MLM, then Augmented SBERT, teacher and student from the MLM model (Reiml (2023), §4.3.1, Table 6.10).

Stage 1 continues MLM pre-training on the target sentences; stage 2 starts each seed's Cross-Bi-Encoder
teacher and bi-encoder student from the same seed's MLM model (FullDomainSBERT), the teacher labelling silver
pairs of the target domain.

    python sweeps/domain_chain_augsbert.py --dry-run              # the protocol card
    python sweeps/domain_chain_augsbert.py --quick
    python sweeps/domain_chain_augsbert.py --model roberta-base --corpus target_sentences.txt \\
        --sts-dir data/stsbenchmark --gpus-per-trial 0.5
"""

from sentsweep.experiments._reiml_published import full_domain_sbert_targets
from sentsweep.experiments.protocols.chains import DOMAIN_CHAIN_PROTOCOL as PROTOCOL
from sentsweep.references import THESIS_REIML_2023
from sentsweep.sweep import Stage, SweepDefinition

DEFINITION = SweepDefinition(
    name="domain_chain_augsbert",
    description=__doc__.splitlines()[0],
    reference=THESIS_REIML_2023,
    protocol=PROTOCOL,
    stages=[
        Stage("domain_mlm", lambda options: {"method": PROTOCOL.grid("method")}),
        Stage("augsbert", lambda options: {"method": PROTOCOL.grid("supervised")}, grids={"method": "supervised"},
              init_from="domain_mlm"),
    ],
    trains_on_gold_pairs=True,
    # the MLM stage reports its last checkpoint, Augmented SBERT its best on dev
    table_metrics=["sts_test_last", "sts_test_at_best_dev", "best_sts_dev"],
    # 000 Table 6.10's FullDomainSBERT row on USEB's four tasks (given with --eval-task), mean of 3 seeds.
    published=tuple(full_domain_sbert_targets()),
)
