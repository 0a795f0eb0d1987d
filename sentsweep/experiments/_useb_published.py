"""The published values of the TSDAE paper's main results (002 §6, Tables 2 and 3) that the sweeps re-running
them target (tsdae_main, domain_adaptation, and labelled_intersection's TSDAE reference).

Table 2 ("Evaluation using average precision. Results are averaged over 5 random seeds."): each method on USEB's
four tasks, in three blocks: unsupervised learning on the target domain, "Domain adaptation: NLI+STS \\to target
task" and "target task \\to NLI+STS". A target per row and task, in the project's metric for the task's column,
which a run logs when given the task (--eval-task askubuntu=..., cqadupstack=..., twitterpara=..., scidocs=...;
test scores x 100): AskU. (`askubuntu_map`), CQADup. (`cqadupstack_map_at_100`), TwitterP. Avg.
(`twitterpara_ap`, the mean of TURL and PIT) and SciDocs Avg. (`scidocs_map`, the mean of Cite, CC, CR and CV).
The sub-columns and the overall Avg. are not targeted: the sweeps' tables show each task's main metric.

Table 3 ("Performance (Spearman's rank correlation) on the STS benchmark test set"): the unsupervised methods
trained on Wikipedia sentences (§6.1: "We sample sentences from Wikipedia as done by Carlsson et al. (2021) and
train a BERT-base-uncased model on this dataset"); the caption names no number of seeds (`runs=None`). A run on an
in-domain corpus is compared with Table 2, one on Wikipedia sentences with Table 3; each misses the other.
"""

from sentsweep.analysis.reproduction import PublishedValue
from sentsweep.references import TSDAE
from sentsweep.settings import cited

SEEDS = 5  # Table 2: "Results are averaged over 5 random seeds"
PAPER_SETTING = {"model": "bert-base-uncased"}  # §5: "Without other specification, BERT-base-uncased is used"
# Table 2's columns AskU., CQADup., TwitterP. Avg., SciDocs Avg., as the project's task metrics.
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
# Table 3, "Unsupervised method" (STSb, Specific Tasks): "TSDAE 66.0 55.2", "MLM 47.3 52.9", "CT 73.9 52.4",
# "SimCSE 73.8 50.6"; the STSb column.
STSB_TEST = {"tsdae": 66.0, "mlm": 47.3, "ct": 73.9, "simcse": 73.8}
WIKIPEDIA_NOTE = "trained on Wikipedia sentences (§6.1), not an in-domain corpus"


def block_targets(rows: dict, stage: dict, where: str) -> list[PublishedValue]:
    return [PublishedValue(params=stage | {"method": method}, metric=metric, value=value,
                           source=cited(TSDAE, where), runs=SEEDS, setting=PAPER_SETTING)
            for method, values in rows.items() for metric, value in zip(TASK_METRICS, values, strict=True)]


def unsupervised_targets(stage: dict) -> list[PublishedValue]:
    """Table 2's unsupervised block: TSDAE, MLM, CT and SimCSE trained on the target domain."""
    return block_targets(UNSUPERVISED, stage, "§6, Table 2 (unsupervised learning)")


def tsdae_targets(stage: dict) -> list[PublishedValue]:
    """Table 2's unsupervised TSDAE row alone (the reference a search compares with)."""
    return block_targets({"tsdae": UNSUPERVISED["tsdae"]}, stage, "§6, Table 2 (unsupervised learning)")


def nli_sts_then_target_targets(stage: dict) -> list[PublishedValue]:
    """Table 2's block "Domain adaptation: NLI+STS -> target task"."""
    return block_targets(NLI_STS_THEN_TARGET, stage, "§6, Table 2 (domain adaptation: NLI+STS to target task)")


def stsb_targets(metric: str) -> list[PublishedValue]:
    """Table 3's STSb column: STS benchmark test Spearman x 100 of each method trained on Wikipedia."""
    return [PublishedValue(params={"method": method}, metric=metric, value=value,
                           source=cited(TSDAE, "§6.1, Table 3 (STSb)"), runs=None, setting=PAPER_SETTING,
                           note=WIKIPEDIA_NOTE)
            for method, value in STSB_TEST.items()]
