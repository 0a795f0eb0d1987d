"""The part-of-speech analysis of Wang, Reimers and Gurevych (2021), "TSDAE: Using Transformer-based Sequential
Denoising Auto-Encoder for Unsupervised Sentence Embedding Learning", §7.2 (Figures 4 and 7), as an evaluation task
on a USEB task's relevant pairs: `pos_askubuntu`, `pos_cqadupstack`, `pos_twitterpara`, `pos_scidocs`, each reading
the folder its USEB task reads (`sentsweep.tasks.useb`).

The pairs are those "labeled as relevant" (§7.2) of the split §7 analyses: "For all the datasets except
TwitterPara, the analysis is carried out on the development set. For TwitterPara, the test set is used, as it has no
development split released by the original paper." AskUbuntu: each dev query's title with the title of each
question marked similar; CQADupStack: each dev query with each of its duplicates, in every forum; TwitterPara: the
test pairs of both corpora labelled paraphrases (more than 3 of the annotators' votes, the task's own rule);
SciDocs: each dev query's title with each candidate's of relevance above 0, in each of the four subtasks.

The task is scored once, at the end of a trial (the loop's "test" scoring), whatever split its pairs come from.
For each pair it finds the most relevant word and its tag group (`sentsweep.word_relevance`, with TextBlob's
tagger) and logs, x 100: `<name>_<group>`, the share of pairs whose word is of that group (main: `<name>_NN`), and
`<name>_prior_<group>`, the prior share (ŵ drawn uniformly among a pair's words), for every group of
`sentsweep.word_relevance.GROUPS`; `<name>_pairs`, the number of pairs analysed.
"""

from __future__ import annotations

from sentsweep.errors import InputError
from sentsweep.references import TSDAE
from sentsweep.scorers import Scorer
from sentsweep.tasks.base import Task, TaskResult, register
from sentsweep.tasks.common import check_split
from sentsweep.tasks.useb import FILE_SPLITS, AskUbuntuTask, CqaDupStackTask, SciDocsTask, TwitterParaTask
from sentsweep.word_relevance import pos_relevance, tagger_problem, textblob_tagger

POS_PREFIX = "pos_"
ANALYSED_SPLIT = {"askubuntu": "dev", "cqadupstack": "dev", "twitterpara": "test", "scidocs": "dev"}  # §7


def askubuntu_pairs(name: str, path: str) -> list[tuple[str, str]]:
    task = AskUbuntuTask(name, path)
    return [(task.titles[query], task.titles[similar]) for query, relevant, _ in task.queries["dev"]
            for similar in sorted(relevant) if similar in task.titles]


def cqadupstack_pairs(name: str, path: str) -> list[tuple[str, str]]:
    task = CqaDupStackTask(name, path)
    return [(task.corpus[forum][query], task.corpus[forum][duplicate])
            for forum, qrels in task.split_queries[FILE_SPLITS["dev"]].items()
            for query, duplicates in qrels.items() for duplicate in duplicates]


def twitterpara_pairs(name: str, path: str) -> list[tuple[str, str]]:
    task = TwitterParaTask(name, path)
    return [(first, second) for sentences1, sentences2, labels in task.corpora.values()
            for first, second, label in zip(sentences1, sentences2, labels) if task.is_paraphrase(label)]


def scidocs_pairs(name: str, path: str) -> list[tuple[str, str]]:
    task = SciDocsTask(name, path)
    return [(task.titles[query], task.titles[candidate]) for qrels in task.qrels["dev"].values()
            for query, relevance in qrels.items() if task.titles.get(query)
            for candidate, grade in relevance.items() if grade > 0 and task.titles.get(candidate)]


RELEVANT_PAIRS = {"askubuntu": askubuntu_pairs, "cqadupstack": cqadupstack_pairs, "twitterpara": twitterpara_pairs,
                  "scidocs": scidocs_pairs}
POS_TASKS = tuple(f"{POS_PREFIX}{dataset}" for dataset in RELEVANT_PAIRS)


@register(*POS_TASKS)
class PosRelevanceTask(Task):
    """The tag groups of each relevant pair's most relevant word (TSDAE §7.2) on a USEB task's folder."""

    main_metric = "NN"
    splits = ("test",)
    reference = TSDAE

    def __init__(self, name: str, path: str) -> None:
        super().__init__(name, path)
        if problem := tagger_problem():
            raise InputError(f"{name}: {problem}")
        dataset = name.removeprefix(POS_PREFIX)
        self.pairs = RELEVANT_PAIRS[dataset](name, path)  # its USEB task's checks, naming `name`
        if not self.pairs:
            raise InputError(f"{name}: {path} holds no pair labelled relevant in its {ANALYSED_SPLIT[dataset]} split")

    def evaluate(self, scorer: Scorer, split: str = "test") -> TaskResult:
        check_split(self.name, split, self.splits)
        analysis = pos_relevance(self.pairs, scorer.pair_similarities, textblob_tagger())
        metrics = {self.metric_key(group): share for group, share in analysis.shares.items()}
        metrics |= {self.metric_key(f"prior_{group}"): share for group, share in analysis.prior.items()}
        metrics[self.metric_key("pairs")] = float(sum(word is not None for word in analysis.words))
        return TaskResult(metrics)

