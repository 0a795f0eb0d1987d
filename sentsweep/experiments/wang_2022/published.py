"""The published values of Wang (2022) that its sweeps target: Table 5.17 (multitask_weight) and Tables
5.9/5.10 (simcse_loss).

Table 5.17 ("The evaluation results on Quora task. We only report Recall@100 and Recall@10 in this Table.
... Results are averaged over 3 random seeds."): each loss on the Quora duplicate retrieval task, in the
project's metrics `quora_recall_at_100` and `quora_recall_at_10` (x 100), which a run logs when given the task
(--eval-task quora=BEIR/quora). §5.3.7 gives the setting: "we use the pre-trained model Bert-base-uncased ... as
the base model and in-domain dataset Quora titles 100k as the training dataset ... We use Recall@10 of Quora
devset (validation task) as the best model checkpoint selection", which the runs' logged settings are compared
with (the sweep's default selects by validation loss; its card gives the --set for Table 5.17).

Table 5.16 (eProduct, an eBay-internal task) is not targeted: no run of the project can produce its metric.

Tables 5.9 ("Comparison between BCE (Binary Cross Entropy) loss and NT-Xent loss in STS tasks evaluation ... We
report the scores averaged over 3 random seeds") and 5.10 ("We report Recall@100 in Quora as well as CQADupStack
averaged over 3 random seeds"): SimCSE with each loss and the baselines Bert-base-uncased and BM25, §5.3.3's
setting ("We use Bert-base-uncased [Devlin & Chang⁺ 19] as base model ... we use validation loss as best model
checkpoint selection"). Table 5.9's STS-B is the STS benchmark's test split at the selected checkpoint
(`sts_test_at_best_validation_loss`; a baseline's one checkpoint: `sts_test_at_best_dev`); its STS-Avg is not
targeted (see sentsweep.experiments.wang_2022.simcse_loss). Table 5.10's columns are BEIR's Quora and
CQADupStack (the mean over its 12 forums), `quora_recall_at_100` and `beir-cqadupstack_recall_at_100`.
"""

from sentsweep.analysis.reproduction import PublishedValue
from sentsweep.references import THESIS_WANG_2022
from sentsweep.settings import cited

SEEDS = 3  # Table 5.17: "Results are averaged over 3 random seeds"
PAPER_SETTING = {"model": "bert-base-uncased", "select_checkpoint": "best_task_dev", "selection_task": "quora",
                 "selection_metric": "recall_at_10"}
METRICS = ("quora_recall_at_100", "quora_recall_at_10")  # Table 5.17's columns "R@100[%]" and "R@10[%]"

# Table 5.17, rows as printed ("Loss	$R@100[\%]$	$R@10[\%]$"), each with the cell of the sweep that runs it:
# "\mathcal{L}_{simcse}^1	96.5	86.8" (SimCSE, 1 epoch), "\mathcal{L}_{simcse}	97.2	88.3" (3 epochs),
# "$\mathcal{L}_{CLM_autoencoder}$	95.9	84.9", "$\mathcal{L}_{MLM_autoencoder}$	91.2	77.5",
# "$\mathcal{L}_{simcse} + 0.1 * \mathcal{L}_{CLM_autoencoder}$	97.1	87.3" and so on for each w.
TABLE_5_17 = [
    ({"method": "simcse", "epochs": 1}, (96.5, 86.8)),
    ({"method": "simcse", "epochs": 3}, (97.2, 88.3)),
    ({"method": "clm_ae"}, (95.9, 84.9)),
    ({"method": "mlm_ae"}, (91.2, 77.5)),
    ({"method": "simcse+clm_ae", "w": 0.1}, (97.1, 87.3)),
    ({"method": "simcse+clm_ae", "w": 0.01}, (97.4, 88.4)),
    ({"method": "simcse+clm_ae", "w": 0.001}, (97.4, 88.8)),
    ({"method": "simcse+clm_ae", "w": 0.0001}, (97.3, 88.6)),
    ({"method": "simcse+mlm_ae", "w": 0.1}, (93.5, 81.4)),
    ({"method": "simcse+mlm_ae", "w": 0.01}, (95.7, 85.0)),
    ({"method": "simcse+mlm_ae", "w": 0.001}, (97.0, 87.7)),
    ({"method": "simcse+mlm_ae", "w": 0.0001}, (97.3, 88.3)),
]


def quora_targets() -> list[PublishedValue]:
    """Table 5.17's cells: each loss's Recall@100 and Recall@10 on Quora."""
    source = cited(THESIS_WANG_2022, "§5.3.7, Table 5.17")
    return [PublishedValue(params=cell, metric=metric, value=value, source=source, runs=SEEDS, setting=PAPER_SETTING)
            for cell, values in TABLE_5_17 for metric, value in zip(METRICS, values, strict=True)]


RETRIEVAL_METRICS = ("quora_recall_at_100", "beir-cqadupstack_recall_at_100")  # Table 5.10's "Quora", "CQADupStack"
# §5.3.3's setting of each row's runs: the trained rows', the BERT baseline's model, BM25's Pyserini (§5.2.1)
LOSS_COMPARISON_SETTINGS = {
    "simcse": {"model": "bert-base-uncased", "select_checkpoint": "validation_loss"},
    "simcse_bce": {"model": "bert-base-uncased", "select_checkpoint": "validation_loss"},
    "frozen_encoder": {"model": "bert-base-uncased"},
    "bm25": {"bm25_variant": "pyserini"},
}
# Table 5.9 ("Model	STS-B[%]	STS-Avg[%]"), the STS-B column: "SimCSE _{NT-Xent}	71.4	71.9",
# "SimCSE _{BCE}	43.3	44.2", "Bert-base-uncased	47.3	51.6".
TABLE_5_9_STSB = [
    ({"method": "simcse"}, "sts_test_at_best_validation_loss", 71.4),
    ({"method": "simcse_bce"}, "sts_test_at_best_validation_loss", 43.3),
    ({"method": "frozen_encoder"}, "sts_test_at_best_dev", 47.3),
]
# Table 5.10 ("Model	$R@100$ [%]", "Quora	CQADupStack"): "SimCSE _{NT-Xent}	96.2	38.2",
# "SimCSE _{BCE}	59.8	8.7", "Bert-base-uncased	86.1	19.0", "BM25	97.3	60.6".
TABLE_5_10 = [
    ({"method": "simcse"}, (96.2, 38.2)),
    ({"method": "simcse_bce"}, (59.8, 8.7)),
    ({"method": "frozen_encoder"}, (86.1, 19.0)),
    ({"method": "bm25"}, (97.3, 60.6)),
]
DETERMINISTIC_NOTE = ("BM25 trains nothing: its seeds give one value, so only that value is its interval; Wang 2022's "
                      "is Pyserini's, whose Lucene analyser tokenises differently")


def loss_comparison_targets() -> list[PublishedValue]:
    """Tables 5.9 (STS-B) and 5.10 (Recall@100 on Quora and CQADupStack): each loss's and baseline's cells."""
    stsb = [PublishedValue(params=cell, metric=metric, value=value, source=cited(THESIS_WANG_2022, "§5.3.3, Table 5.9"),
                           runs=SEEDS, setting=LOSS_COMPARISON_SETTINGS[cell["method"]])
            for cell, metric, value in TABLE_5_9_STSB]
    retrieval = [
        PublishedValue(params=cell, metric=metric, value=value, source=cited(THESIS_WANG_2022, "§5.3.3, Table 5.10"),
                       runs=SEEDS, setting=LOSS_COMPARISON_SETTINGS[cell["method"]],
                       note=DETERMINISTIC_NOTE if cell["method"] == "bm25" else "")
        for cell, values in TABLE_5_10 for metric, value in zip(RETRIEVAL_METRICS, values, strict=True)]
    return stsb + retrieval
