"""Protocols of the supervised and semi-supervised experiments: Augmented SBERT (Reiml (2023, "000") §5.1,
§5.5, Tables 6.12-6.13), GPL (the TSDAE + GPL report draft, "004") and the labelled-data intersection (TSDAE
paper, "002", Table 10).
"""

from __future__ import annotations

from sentsweep.references import REPORT_TSDAE_GPL, THESIS_REIML_2023, TSDAE
from sentsweep.search_spaces.protocol import Protocol, Sourced, sourced
from sentsweep.settings import cited, project_choice

REIML_5_1 = cited(THESIS_REIML_2023, "§5.1", '"we set our learning rate to 2e-5 and include a warm-up period of 10% of '
                  'the total training time, followed by a linear decay ... weight decay of 0.01, and our batch size '
                  'is set to 16"')
FINE_TUNING = sourced(REIML_5_1, lr=2e-5, batch_size=16, warmup_ratio=0.1, lr_schedule="linear", weight_decay=0.01)
PROJECT_LENGTH = {
    "max_steps": Sourced(2_000, project_choice("000 trains by epochs of its gold sets; a fixed budget compares "
                                               "samplings at equal cost")),
    "eval_steps": Sourced(200, project_choice()),
    "max_seq_length": Sourced(128, project_choice("000 gives no maximum sequence length")),
}
QUICK = dict(lr=1e-3, batch_size=16, max_steps=40, eval_steps=20, max_seq_length=32, seeds=2)

AUGSBERT_PROTOCOL = Protocol(
    settings={
        **FINE_TUNING, **PROJECT_LENGTH,
        "method": Sourced("augsbert", cited(THESIS_REIML_2023, "§5.5")),
        "setting": Sourced("semi", cited(THESIS_REIML_2023, "§5.5, Tables 6.12-6.13", "AugSBERT semi")),
        "pooling": Sourced("mean", project_choice("000 §5.1 leaves pooling at sentence-transformers' default, mean")),
        "teacher_epochs": Sourced(5, cited(THESIS_REIML_2023, "§5.4.3", '"fine-tune our Cross-Bi-Encoder on the STS-B '
                                                                         'dataset for 5 epochs"')),
        "teacher_lr": Sourced(2e-5, REIML_5_1),
        "top_k": Sourced(3, project_choice()),
    },
    seeds=Sourced(3, cited(THESIS_REIML_2023, "Tables 6.12-6.13", '"Results are averaged over 3 random seeds"')),
    grids={
        "teacher": Sourced(["ce", "cbe"], cited(THESIS_REIML_2023, "Tables 6.12-6.13", "CE and CBE")),
        "sampling": Sourced(["none", "random", "bm25", "kde"], cited(THESIS_REIML_2023, "§5.5")),
    },
    quick=QUICK | dict(teacher_epochs=3, teacher_lr=3e-3, top_k=2),
)

GPL_PROTOCOL = Protocol(
    settings={
        "method": Sourced("gpl", cited(REPORT_TSDAE_GPL, "GPL")),
        "queries_per_passage": Sourced(3, cited(REPORT_TSDAE_GPL, "GPL", '"Three queries are generated for each input '
                                                                        'sentence"')),
        "negatives_top_k": Sourced(50, cited(REPORT_TSDAE_GPL, "GPL", '"50 of the most similar sentences are '
                                                                     'retrieved"')),
        **sourced(project_choice("004 gives no training settings"), pooling="mean", lr=2e-5, batch_size=32,
                  max_steps=10_000, eval_steps=1_000, max_seq_length=128, teacher_epochs=3),
    },
    seeds=Sourced(3, project_choice("004 reports no seeds")),
    grids={"queries_per_passage": Sourced([3], cited(REPORT_TSDAE_GPL, "GPL"))},
    quick=QUICK | dict(queries_per_passage=2, negatives_top_k=5, teacher_epochs=1, teacher_lr=3e-3, sample_size=100),
)

INTERSECTION_PROTOCOL = Protocol(
    settings={
        "method": Sourced("sbert", cited(THESIS_REIML_2023, "§5.1", "in-domain SBERT fine-tuning")),
        **FINE_TUNING, **PROJECT_LENGTH,
        "pooling": Sourced("mean", project_choice("SBERT's default pooling")),
    },
    seeds=Sourced(5, cited(TSDAE, "§5", '"we report the scores averaged over 5 random seeds"')),
    quick=QUICK | dict(max_steps=30, eval_steps=10),
)
