"""The TSDAE+GPL draft's protocol: GPL's generated queries and mined negatives as the draft gives them, the training
settings the project's (the draft gives none)."""

from __future__ import annotations

from sentsweep.references import REPORT_TSDAE_GPL
from sentsweep.search_spaces.protocol import Protocol, Sourced, sourced
from sentsweep.search_spaces.shared import QUICK
from sentsweep.settings import cited, project_choice

GPL_PROTOCOL = Protocol(
    settings={
        "method": Sourced("gpl", cited(REPORT_TSDAE_GPL, "GPL")),
        "queries_per_passage": Sourced(3, cited(REPORT_TSDAE_GPL, "GPL", '"Three queries are generated for each input '
                                                                        'sentence"')),
        "negatives_top_k": Sourced(50, cited(REPORT_TSDAE_GPL, "GPL", '"50 of the most similar sentences are '
                                                                     'retrieved"')),
        **sourced(project_choice("TSDAE+GPL draft gives no training settings"), pooling="mean", lr=2e-5, batch_size=32,
                  max_steps=10_000, eval_steps=1_000, max_seq_length=128, teacher_epochs=3, optimizer="adamw",
                  lr_schedule="constant", warmup_steps=0, weight_decay=0.0, select_checkpoint="best_sts_dev"),
    },
    seeds=Sourced(3, project_choice("TSDAE+GPL draft reports no seeds")),
    grids={"queries_per_passage": Sourced([3], cited(REPORT_TSDAE_GPL, "GPL"))},
    quick=QUICK | dict(queries_per_passage=2, negatives_top_k=5, teacher_epochs=1, teacher_lr=3e-3, sample_size=100),
)
