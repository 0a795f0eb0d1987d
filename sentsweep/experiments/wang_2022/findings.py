"""Wang (2022)'s finding stated in words (§5.3.3) about Figures 5.3 (Quora) and 5.4 (CQADupStack), which print no
numbers, as orderings of `simcse_loss`' cells (`sentsweep.analysis.orderings`): SimCSE with NT-Xent (`simcse`), its
Recall@k and Precision@k at each k of 1, 3, 5, 10, 100, 1000 (`<task>_recall_at_<k>`, `<task>_precision_at_<k>`,
which the runs log when given the task with --eval-task).

Figure 5.5 (eProduct, an eBay-internal task) is not re-run: its finding, "when increasing the batch size, the
performance of the eProduct task is also improved", has no cell any run produces.
"""

from __future__ import annotations

from sentsweep.analysis.orderings import Cell, PublishedOrdering, rising
from sentsweep.references import THESIS_WANG_2022
from sentsweep.settings import cited

CUTOFFS = (1, 3, 5, 10, 100, 1000)  # the figures' "k \in \{1, 3, 5, 10, 100, 1000\}"
NT_XENT = {"method": "simcse"}  # the figures' "SimCSE_{NT-Xent}"
RECALL_UP_PRECISION_DOWN = '"We observe when k increases, Recall@ k goes up but Precision@ k goes down"'
ON_QUORA = cited(THESIS_WANG_2022, "§5.3.3, Fig. 5.3", RECALL_UP_PRECISION_DOWN)
ON_CQADUPSTACK = cited(THESIS_WANG_2022, "§5.3.3, Fig. 5.4", RECALL_UP_PRECISION_DOWN)


def recall_up_precision_down(task: str) -> tuple:
    """SimCSE's Recall@k rising and Precision@k falling with each larger k on `task`."""
    recall = [Cell(NT_XENT, f"{task}_recall_at_{k}") for k in CUTOFFS]
    precision = [Cell(NT_XENT, f"{task}_precision_at_{k}") for k in reversed(CUTOFFS)]
    return rising(recall) + rising(precision)


ORDERINGS = (
    PublishedOrdering("SimCSE (NT-Xent): Recall@k rises and Precision@k falls with each larger k, Quora",
                      recall_up_precision_down("quora"), ON_QUORA),
    PublishedOrdering("SimCSE (NT-Xent): Recall@k rises and Precision@k falls with each larger k, CQADupStack",
                      recall_up_precision_down("beir-cqadupstack"), ON_CQADUPSTACK),
)
