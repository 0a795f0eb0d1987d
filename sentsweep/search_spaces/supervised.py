"""Settings and grids of the supervised and semi-supervised experiments (Reiml (2023), chapters 5-6; the
TSDAE + GPL report draft, 004; TSDAE paper, table 10).

- Augmented SBERT (Reiml 2023, section 5.5): teacher CE vs CBE x sampling {none, random, bm25, kde, semantic};
  thesis hyperparameters (section 5.1): lr 2e-5, batch size 16, teacher trained 5 epochs.
- GPL (the TSDAE + GPL report draft, 004): 3 queries per passage, 50 mined negatives, MarginMSE.
- Labelled-data intersection (TSDAE paper, table 10): in-domain `sbert` over labelled sample sizes.
"""

from __future__ import annotations

AUGSBERT_TEACHERS = ["ce", "cbe"]
AUGSBERT_SAMPLINGS = ["none", "random", "bm25", "kde"]
AUGSBERT_SETTINGS = dict(method="augsbert", setting="semi", pooling="mean", lr=2e-5, batch_size=16, max_steps=2_000,
                         eval_steps=200, max_seq_length=128, teacher_epochs=5, teacher_lr=2e-5, top_k=3, seeds=5)
AUGSBERT_QUICK = dict(lr=1e-3, batch_size=16, max_steps=40, eval_steps=20, max_seq_length=32, teacher_epochs=3,
                      teacher_lr=3e-3, top_k=2, seeds=2)

GPL_SETTINGS = dict(method="gpl", pooling="mean", lr=2e-5, batch_size=32, max_steps=10_000, eval_steps=1_000,
                    max_seq_length=128, queries_per_passage=3, negatives_top_k=50, teacher_epochs=3, seeds=3)
GPL_QUICK = dict(lr=1e-3, batch_size=16, max_steps=40, eval_steps=20, max_seq_length=32, queries_per_passage=2,
                 negatives_top_k=5, teacher_epochs=1, teacher_lr=3e-3, sample_size=100, seeds=2)

INTERSECTION_SETTINGS = dict(method="sbert", pooling="mean", lr=2e-5, batch_size=16, max_steps=2_000,
                             eval_steps=200, max_seq_length=128, seeds=5)
INTERSECTION_QUICK = dict(lr=1e-3, batch_size=16, max_steps=30, eval_steps=10, max_seq_length=32, seeds=2)
