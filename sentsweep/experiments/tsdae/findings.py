"""The TSDAE paper's findings stated in words about its figures, as orderings of the sweeps' cells
(`sentsweep.analysis.orderings`): §6 on Figure 2 (its larger plots: App. E, Figure 5), re-run by
`labelled_after_pretraining`, §7.1 on Figure 3 (App. G, Figure 6), re-run by `sample_size`, and §7.2 on Figure 4
(App. H, Figure 7), re-run by `tsdae_pos_tags`.

The figures plot each target task's dev score, so every cell names its target task (the sweep's `--eval-task` /
`--target-task`; a run without one has none of these cells). TwitterPara's panels are not compared: the paper
selects on its test set, which the sweeps refuse. Not declared: §7.1's "TSDAE is outperforming previous
unsupervised learning methods often with as little as 1000 unlabeled sentences" ("often": no ordering holds at
every cell), and §6's comparison with "the pre-trained SBERT-nli-stsb model" (no stage of the sweep starts from it).
§7.2's "we do not perceive significant differences between all the approaches" is no ordering (a tie): its findings
on SBERT-sup. are checked for every method the sweep runs instead, each on each data set (Figure 7's panels).
"""

from __future__ import annotations

from sentsweep.analysis.orderings import Cell, PublishedOrdering, above
from sentsweep.experiments.tsdae.useb_published import USEB_TASKS
from sentsweep.references import TSDAE
from sentsweep.search_spaces.tsdae import (
    CORPUS_SIZE_PROTOCOL,
    LABELLED_AFTER_PRETRAINING_PROTOCOL,
    POS_TAGS_PROTOCOL,
)
from sentsweep.settings import cited
from sentsweep.sweep.search.target_tasks import TASK_AXIS
from sentsweep.trainables.settings import SELECTED_TASK_DEV
from sentsweep.word_relevance import GROUPS

TASKS_WITH_DEV = ("askubuntu", "cqadupstack", "scidocs")  # Figure 2's panels but TwitterPara (no dev split)
LABELLED_SIZES = tuple(LABELLED_AFTER_PRETRAINING_PROTOCOL.grid("sample_size"))
AFTER_PRETRAINING, FROM_SCRATCH = "supervised_after_pretraining", "supervised_from_scratch"

FIGURE_2 = "§6, Figs. 2 and 5"  # App. E: "The pre-training performance ... is shown in Figure 5" (Figure 2 larger)
TSDAE_OVER_MLM = cited(TSDAE, FIGURE_2, '"TSDAE outperforms MLM by a significant margin for all datasets except for '
                                        'AskUbuntu"; "The difference is quite consistent also for larger labeled '
                                        'training sets"')
MLM_ON_ASKUBUNTU = cited(TSDAE, FIGURE_2, '"except for AskUbuntu. There, MLM works slightly better"')
TSDAE_OVER_ALL = cited(TSDAE, FIGURE_2, '"For the other datasets, TSDAE shows a clear out-performance to other '
                                        'pre-training strategies"')
CT_SIMCSE_BELOW = cited(TSDAE, FIGURE_2, '"CT and SimCSE don\'t perform well for pre-training, the results are far '
                                         'worse than using TSDAE/MLM"')
TSDAE_OVER_SBERT = cited(TSDAE, FIGURE_2, '"TSDAE works well as pre-training method and can significantly improve the '
                                          'performance for later supervised training even for larger training '
                                          'datasets"')
MORE_DATA_ON_CQADUPSTACK = cited(TSDAE, "§7.1, Figs. 3 and 6", '"With 10K unlabeled sentences, the downstream '
                                 'performance usually stagnates for all tested unsupervised sentence embedding '
                                 'methods. The only exception where more training data is helpful is for the '
                                 'CQADupStack task"')


def pretrained_row(method: str, task: str) -> str:
    """The `pretrained` param of a supervised trial started from `method`'s pre-training on `task`: the pre-training
    stage's row without its target task (`sentsweep.sweep.execution.models_kept.KeptModels.chained`)."""
    return f"method={method}, selection_task={task}"


def _labelled_pairs(higher: str, lower: str, tasks: tuple[str, ...]) -> tuple:
    """SBERT after `higher`'s pre-training above SBERT after `lower`'s, at each labelled size of each task."""
    return tuple(pair for task in tasks for pair in above(
        {"stage": AFTER_PRETRAINING, "pretrained": pretrained_row(higher, task)},
        {"stage": AFTER_PRETRAINING, "pretrained": pretrained_row(lower, task)}, [SELECTED_TASK_DEV],
        [{"sample_size": size, TASK_AXIS: task} for size in LABELLED_SIZES]))


OTHER_TASKS = ("cqadupstack", "scidocs")  # "all datasets except for AskUbuntu", TwitterPara left out
LABELLED_AFTER_PRETRAINING_ORDERINGS = (
    PublishedOrdering("TSDAE above MLM at each labelled size, CQADupStack and SciDocs",
                      _labelled_pairs("tsdae", "mlm", OTHER_TASKS), TSDAE_OVER_MLM),
    PublishedOrdering("MLM above TSDAE at each labelled size, AskUbuntu",
                      _labelled_pairs("mlm", "tsdae", ("askubuntu",)), MLM_ON_ASKUBUNTU),
    PublishedOrdering("TSDAE above MLM, CT and SimCSE at each labelled size, CQADupStack and SciDocs",
                      tuple(pair for other in ("mlm", "ct", "simcse")
                            for pair in _labelled_pairs("tsdae", other, OTHER_TASKS)), TSDAE_OVER_ALL),
    PublishedOrdering("TSDAE and MLM each above CT and SimCSE at each labelled size, every task with a dev split",
                      tuple(pair for higher in ("tsdae", "mlm") for lower in ("ct", "simcse")
                            for pair in _labelled_pairs(higher, lower, TASKS_WITH_DEV)), CT_SIMCSE_BELOW),
    PublishedOrdering("SBERT after TSDAE above SBERT from BERT at each labelled size, every task with a dev split",
                      tuple(pair for task in TASKS_WITH_DEV for pair in above(
                          {"stage": AFTER_PRETRAINING, "pretrained": pretrained_row("tsdae", task)},
                          {"stage": FROM_SCRATCH}, [SELECTED_TASK_DEV],
                          [{"sample_size": size, TASK_AXIS: task} for size in LABELLED_SIZES])), TSDAE_OVER_SBERT),
)

LARGEST, BELOW_10K = 65_536, 8_192  # §7.1's largest corpus and the grid's last size below 10K
SAMPLE_SIZE_ORDERINGS = (
    PublishedOrdering(
        "each method at 65,536 sentences above itself at 8,192 (more data than 10K helps), CQADupStack",
        tuple((Cell({"method": method, "sample_size": LARGEST, TASK_AXIS: "cqadupstack"}, "best_task_dev"),
               Cell({"method": method, "sample_size": BELOW_10K, TASK_AXIS: "cqadupstack"}, "best_task_dev"))
              for method in CORPUS_SIZE_PROTOCOL.grid("method")),
        MORE_DATA_ON_CQADUPSTACK),
)

# §7.2 on Figure 4 (the four data sets averaged) and App. H's Figure 7 (each data set), re-run by tsdae_pos_tags:
# checked on each data set's cells, for every method the sweep runs, since the text finds no difference between them.
POS_FIGURES = "§7.2, Figs. 4 and 7"
NO_DIFFERENCE = '"we do not perceive significant differences between all the approaches"'
NOUNS_FIRST = cited(TSDAE, POS_FIGURES, f'"nouns (NN) are by far the most relevant content words in a sentence"; '
                                        f'{NO_DIFFERENCE}')
NOUNS_OVER_PRIOR = cited(TSDAE, POS_FIGURES, '"Comparing the in-domain supervised model (SBERT-sup.) and the prior '
                                             'distribution of the POS tags, we find that nouns (NN) are by far the '
                                             f'most relevant content words"; {NO_DIFFERENCE}')
FUNCTION_WORDS_BELOW_PRIOR = cited(TSDAE, POS_FIGURES, '"function words such as prepositions (IN) and determinators '
                                                       f'(DT) have little influence on the model prediction"; '
                                                       f'{NO_DIFFERENCE}')
POS_PREFIX = "pos_"  # sentsweep.tasks.pos_tags' tasks: pos_askubuntu ... (not imported: it imports torch)
POS_TASKS = tuple(f"{POS_PREFIX}{task}" for task in USEB_TASKS)
POS_METHODS = tuple({"method": method} for method in POS_TAGS_PROTOCOL.grid("method")) + tuple(
    {"method": "frozen_encoder", "model": model} for model in POS_TAGS_PROTOCOL.grid("model"))


def _share(method: dict, dataset: str, group: str, prior: bool = False) -> Cell:
    """A method's share of pairs whose most relevant word is of `group` (or the prior share) on `dataset`, a USEB
    task."""
    return Cell(method, f"{POS_PREFIX}{dataset}_{'prior_' if prior else ''}{group}")


POS_TAGS_ORDERINGS = (
    PublishedOrdering("NN above every other tag group, each method and data set",
                      tuple((_share(method, dataset, "NN"), _share(method, dataset, group))
                            for method in POS_METHODS for dataset in USEB_TASKS for group in GROUPS
                            if group != "NN"), NOUNS_FIRST),
    PublishedOrdering("NN above its prior share, each method and data set",
                      tuple((_share(method, dataset, "NN"), _share(method, dataset, "NN", prior=True))
                            for method in POS_METHODS for dataset in USEB_TASKS), NOUNS_OVER_PRIOR),
    PublishedOrdering("IN and DT each below their prior share, each method and data set",
                      tuple((_share(method, dataset, group, prior=True), _share(method, dataset, group))
                            for method in POS_METHODS for dataset in USEB_TASKS for group in ("IN", "DT")),
                      FUNCTION_WORDS_BELOW_PRIOR),
)
