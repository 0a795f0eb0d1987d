"""The published values of the TSDAE paper's main results (TSDAE §6, Tables 2 and 3) that the sweeps re-running
them target (tsdae_main, domain_adaptation, and labelled_intersection's TSDAE reference).

Table 2 ("Evaluation using average precision. Results are averaged over 5 random seeds."): each method on USEB's
four tasks, in three blocks: unsupervised learning on the target domain, "Domain adaptation: NLI+STS \\to target
task" and "target task \\to NLI+STS". Every cell is a model of its own, trained on its task's sentences (§4.1:
"For unsupervised training, we just use the sentences from the training split"): a target per row and task, keyed
on the method and the `target_task` whose corpus trained the runs (`sentsweep.sweep.search.target_tasks`: --eval-task
askubuntu=... --task-corpus askubuntu=..., and so on), in the project's metric for the task's column (test scores
x 100): AskU. (`askubuntu_map`), CQADup. (`cqadupstack_map_at_100`), TwitterP. Avg. (`twitterpara_ap`, the mean of
TURL and PIT) and SciDocs Avg. (`scidocs_map`, the mean of Cite, CC, CR and CV). A model trained on another task's
corpus is no cell of the table. The sub-columns and the overall Avg. are not targeted: the sweeps' tables show
each task's main metric.

Table 3 ("Performance (Spearman's rank correlation) on the STS benchmark test set"): the unsupervised methods
trained on Wikipedia sentences (§6.1: "We sample sentences from Wikipedia as done by Carlsson et al. (2021) and
train a BERT-base-uncased model on this dataset"); the caption names no number of seeds (`runs=None`). A run on an
in-domain corpus is compared with Table 2, one on Wikipedia sentences with Table 3; each misses the other. Table
3's cells name no target task (`target_task` None: a run that trains one model on --corpus), and each reads the
test score of the checkpoint its method reports: the last for TSDAE, MLM and CT, SimCSE's best on STS-B dev
(App. B, fn. 8: its official code's early stopping), `sts_test_at_best_dev`.
"""

from sentsweep.analysis.reproduction import PublishedValue
from sentsweep.references import TSDAE
from sentsweep.settings import cited
from sentsweep.trainables.settings import TASK_AXIS

SEEDS = 5  # Table 2: "Results are averaged over 5 random seeds"
PAPER_SETTING = {"model": "bert-base-uncased"}  # §5: "Without other specification, BERT-base-uncased is used"
# Table 2's columns AskU., CQADup., TwitterP. Avg., SciDocs Avg.: USEB's tasks and the project's metrics of them.
USEB_TASKS = ("askubuntu", "cqadupstack", "twitterpara", "scidocs")
TASK_METRICS = ("askubuntu_map", "cqadupstack_map_at_100", "twitterpara_ap", "scidocs_map")

# Table 2, "Unsupervised learning based on BERT-base", rows as printed (AskU. CQADup. | TURL PIT Avg. | Cite CC CR
# CV Avg. | Avg.), the four targeted columns kept: AskU., CQADup., TwitterP. Avg., SciDocs Avg.
# "TSDAE 59.4 14.5 76.8 69.2 73.0 71.4 73.9 75.0 75.6 74.0 55.2"
# "MLM 54.3 11.7 71.9 69.7 70.8 71.2 75.8 75.1 76.2 74.6 52.9"
# "CT 56.3 13.3 74.6 70.4 72.5 63.4 67.1 70.1 69.7 67.6 52.4"
# "SimCSE 55.9 12.4 74.5 62.5 68.5 62.5 65.1 67.7 67.6 65.7 50.6"
UNSUPERVISED = {
    "tsdae": (59.4, 14.5, 73.0, 74.0),
    "mlm": (54.3, 11.7, 70.8, 74.6),
    "ct": (56.3, 13.3, 72.5, 67.6),
    "simcse": (55.9, 12.4, 68.5, 65.7),
}
# Table 2, "Domain adaptation: NLI+STS \to target task":
# "TSDAE 58.7 13.6 75.8 66.2 71 69.9 73.8 75 75.7 73.6 54.2"
# "MLM 54.4 9.7 69.8 68.1 69 67.1 71.8 72.6 72.9 71.1 51.1"
# "CT 57.9 14.2 75.6 70.6 73.1 62.3 66.2 68.5 68.9 66.5 52.9"
# "SimCSE 56.6 13.8 73.4 65.9 69.7 61.8 63.7 67.01 66.7 64.8 51.2"
NLI_STS_THEN_TARGET = {
    "tsdae": (58.7, 13.6, 71.0, 73.6),
    "mlm": (54.4, 9.7, 69.0, 71.1),
    "ct": (57.9, 14.2, 73.1, 66.5),
    "simcse": (56.6, 13.8, 69.7, 64.8),
}
# Table 2, "Domain adaptation: target task \to NLI+STS":
# "TSDAE 59.4 14.4 75.8 73.1 74.5 75.6 78.6 78.1 78.2 77.6 56.5"
# "MLM 60.6 14.3 75.0 68.6 71.8 74.7 78.2 77.0 77.6 76.9 55.9"
# "CT 56.4 13.4 75.9 68.9 72.4 66.5 69.6 70.6 72.2 69.7 53.0"
# "SimCSE 56.2 13.1 75.5 67.3 71.4 65.5 68.5 70.0 71.4 68.9 52.4"
TARGET_THEN_NLI_STS = {
    "tsdae": (59.4, 14.4, 74.5, 77.6),
    "mlm": (60.6, 14.3, 71.8, 76.9),
    "ct": (56.4, 13.4, 72.4, 69.7),
    "simcse": (56.2, 13.1, 71.4, 68.9),
}
# Table 2, "Other previous unsupervised approaches" (those without training data of their own):
# "BM25 53.4 13.3 71.9 70.5 71.2 58.9 61.3 67.3 66.9 63.6 50.4"
# "BERT-base-uncased 48.5 6.5 69.1 61.7 65.4 59.4 65.1 65.4 68.6 64.6 46.3"
BASELINES = {"bm25": (53.4, 13.3, 71.2, 63.6), "frozen_encoder": (48.5, 6.5, 65.4, 64.6)}
# Table 3, "Unsupervised method" (STSb, Specific Tasks): "TSDAE 66.0 55.2", "MLM 47.3 52.9", "CT 73.9 52.4",
# "SimCSE 73.8 50.6"; the STSb column.
STSB_TEST = {"tsdae": 66.0, "mlm": 47.3, "ct": 73.9, "simcse": 73.8}
# The test score of the checkpoint each method reports: the last (App. B, fixed steps), SimCSE's best on STS-B dev.
STSB_METRIC = {"tsdae": "sts_test_last", "mlm": "sts_test_last", "ct": "sts_test_last",
               "simcse": "sts_test_at_best_dev"}
WIKIPEDIA_NOTE = "trained on Wikipedia sentences (§6.1), not an in-domain corpus"
# App. F, Table 11 ("Evaluation on the task of STS using Spearman's rank correlation"), "Unsupervised method based
# on BERT-base" rows as printed (STS12 STS13 STS14 STS15 STS16 STSb SICK-R Avg.): the STS12-16 and SICK-R columns
# (STSb is Table 3's; Avg. not targeted), with --eval-task sts12=... sickr=... on a run without a target task.
# "TSDAE 55.2 67.4 62.4 74.3 73.0 66.0 62.3 65.8", "CT 60.0 76.3 68.2 77.3 75.8 73.9 69.4 71.6",
# "SimCSE 63.6 79.3 69.6 78.2 77.7 73.8 70.1 73.2", "MLM 30.9 59.9 47.7 60.3 63.7 47.3 58.2 52.6"
STS_TASK_METRICS = ("sts12_wmean_spearman", "sts13_wmean_spearman", "sts14_wmean_spearman", "sts15_wmean_spearman",
                    "sts16_wmean_spearman", "sickr_spearman")
TABLE_11 = {"tsdae": (55.2, 67.4, 62.4, 74.3, 73.0, 62.3), "ct": (60.0, 76.3, 68.2, 77.3, 75.8, 69.4),
            "simcse": (63.6, 79.3, 69.6, 78.2, 77.7, 70.1), "mlm": (30.9, 59.9, 47.7, 60.3, 63.7, 58.2)}
STS_TASKS_NOTE = ("TSDAE does not say how a year's subsets are combined: SentEval's weighted mean (\"all\"), the "
                  "project's main metric of STS12-16")


def block_targets(rows: dict, stage: dict, where: str) -> list[PublishedValue]:
    """A block's cells: each method trained on each task's corpus (`target_task`), scored on that task."""
    return [PublishedValue(params=stage | {"method": method, TASK_AXIS: task}, metric=metric, value=value,
                           source=cited(TSDAE, where), runs=SEEDS, setting=PAPER_SETTING)
            for method, values in rows.items()
            for task, metric, value in zip(USEB_TASKS, TASK_METRICS, values, strict=True)]


def unsupervised_targets(stage: dict) -> list[PublishedValue]:
    """Table 2's unsupervised block: TSDAE, MLM, CT and SimCSE trained on the target domain."""
    return block_targets(UNSUPERVISED, stage, "§6, Table 2 (unsupervised learning)")


def tsdae_targets(stage: dict) -> list[PublishedValue]:
    """Table 2's unsupervised TSDAE row alone (the reference a search compares with)."""
    return block_targets({"tsdae": UNSUPERVISED["tsdae"]}, stage, "§6, Table 2 (unsupervised learning)")


def nli_sts_then_target_targets(stage: dict) -> list[PublishedValue]:
    """Table 2's block "Domain adaptation: NLI+STS -> target task"."""
    return block_targets(NLI_STS_THEN_TARGET, stage, "§6, Table 2 (domain adaptation: NLI+STS to target task)")


def sts_task_targets(stage: dict) -> list[PublishedValue]:
    """App. F's Table 11: each unsupervised method (trained on Wikipedia, as Table 3's) on STS12-16 and SICK-R."""
    return [PublishedValue(params=stage | {"method": method, TASK_AXIS: None}, metric=metric, value=value,
                           source=cited(TSDAE, "App. F, Table 11"), runs=None, setting=PAPER_SETTING,
                           note=f"{WIKIPEDIA_NOTE}; {STS_TASKS_NOTE}" if metric.startswith("sts1") else WIKIPEDIA_NOTE)
            for method, values in TABLE_11.items() for metric, value in zip(STS_TASK_METRICS, values, strict=True)]


def target_then_nli_sts_targets(stage: dict) -> list[PublishedValue]:
    """Table 2's block "Domain adaptation: target task -> NLI+STS": the STS step of the chain that continues each
    method's target-task model with the NLI step, then the STS step. The method is the chain's first: the
    `pretrained` row the NLI step started from ("method=tsdae"), which the STS step names in its own `pretrained`
    (`sentsweep.sweep.execution.models_kept.KeptModels.chained`)."""
    return [PublishedValue(params=stage | {"pretrained": f"pretrained=method={method}, method=sbert_nli",
                                           "method": "sbert", TASK_AXIS: task},
                           metric=metric, value=value, runs=SEEDS, setting=PAPER_SETTING,
                           source=cited(TSDAE, "§6, Table 2 (domain adaptation: target task to NLI+STS)"))
            for method, values in TARGET_THEN_NLI_STS.items()
            for task, metric, value in zip(USEB_TASKS, TASK_METRICS, values, strict=True)]


def baseline_targets(stage: dict) -> list[PublishedValue]:
    """Table 2's BM25 (Elasticsearch) and BERT-base-uncased (mean pooling, untrained) rows, on each task."""
    return block_targets(BASELINES, stage, "§6, Table 2 (other previous unsupervised approaches)")


def stsb_targets(stage: dict) -> list[PublishedValue]:
    """Table 3's STSb column: STS benchmark test Spearman x 100 of each method trained on Wikipedia, at the
    checkpoint it reports (`STSB_METRIC`)."""
    return [PublishedValue(params=stage | {"method": method, TASK_AXIS: None}, metric=STSB_METRIC[method], value=value,
                           source=cited(TSDAE, "§6.1, Table 3 (STSb)"), runs=None, setting=PAPER_SETTING,
                           note=WIKIPEDIA_NOTE)
            for method, value in STSB_TEST.items()]
