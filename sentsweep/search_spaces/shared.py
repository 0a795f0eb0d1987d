"""The project's own choices that several documents' protocols share: the quick run's settings (`--quick`)
and the note of every chained stage."""

from __future__ import annotations

QUICK = dict(lr=1e-3, batch_size=16, max_steps=40, eval_steps=20, max_seq_length=32, seeds=2)
QUICK_CHAIN = QUICK | dict(max_steps=30, eval_steps=10)
CHAIN_NOTE = ("A chained stage starts each seed from the same seed's model of the stage it names, as that stage "
              "selected and logged it, pooling included (TSDAE does not say which pooling a model keeps from one "
              "step to the next: the project keeps the model's own).")
