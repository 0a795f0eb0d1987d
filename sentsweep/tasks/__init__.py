"""The evaluation tasks of the seed documents, each reading its public release's own file format.

A task is built from a name and a local path (`build_task("askubuntu", "data-eval/askubuntu")`), reads and
checks its files when built (so a malformed file fails before any training), and scores any scorer of
`sentsweep.scorers` on one of its splits: `task.evaluate(scorer, "test")` returns a `TaskResult` whose
metrics are x 100 and prefixed with the task's name ("askubuntu_map"); `task.main_metric` names the one the
seeds' tables show. Which names exist: `TASK_NAMES`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sentsweep.errors import InputError


@dataclass
class TaskResult:
    """Metrics (x 100) of one task on one split, and per-query outcomes for paired tests over items."""

    metrics: dict[str, float]
    per_query: dict[str, list[float]] = field(default_factory=dict)


def _registry() -> dict:
    from sentsweep.tasks.distractors import DistractorPoolsTask, SquadDistractorsTask
    from sentsweep.tasks.retrieval import BeirRetrievalTask
    from sentsweep.tasks.sts import SENTEVAL_STS_SUBSETS, SentEvalStsTask, SickRelatednessTask, StsBenchmarkTask
    from sentsweep.tasks.transfer import TRANSFER_TASKS, TopicClassificationTask, TransferTask
    from sentsweep.tasks.useb import AskUbuntuTask, CqaDupStackTask, SciDocsTask, TwitterParaTask

    registry = {
        "stsb": StsBenchmarkTask,
        "sickr": SickRelatednessTask,
        "askubuntu": AskUbuntuTask,
        "cqadupstack": CqaDupStackTask,
        "twitterpara": TwitterParaTask,
        "scidocs": SciDocsTask,
        "quora": BeirRetrievalTask,
        "squad": SquadDistractorsTask,
        "distractors": DistractorPoolsTask,
    }
    registry.update({name: SentEvalStsTask for name in SENTEVAL_STS_SUBSETS})
    registry.update({name: TransferTask for name in TRANSFER_TASKS})
    registry["topics"] = TopicClassificationTask
    return registry


def task_names() -> list[str]:
    """Every task name `build_task` accepts ('beir-<dataset>' reads any BEIR retrieval folder)."""
    return sorted(_registry()) + ["beir-<dataset>"]


def _task_class(name: str):
    registry = _registry()
    kind = "quora" if name.startswith("beir-") else name
    if kind not in registry:
        raise InputError(f"unknown evaluation task {name!r}; expected one of {', '.join(task_names())}")
    return registry[kind]


def build_task(name: str, path: str):
    """The task `name` on the data at `path`; an unknown name or a malformed file is an `InputError`."""
    return _task_class(name)(name, path)


def main_metric(name: str) -> str:
    """The metric of task `name` that the seeds' tables show, for example 'askubuntu_map'."""
    return f"{name}_{_task_class(name).MAIN_METRIC}"


def parse_task_specs(specs: list[str]) -> dict[str, str]:
    """NAME=PATH strings as {name: path}; a missing '=' or a repeated name is an `InputError`."""
    tasks = {}
    for spec in specs:
        name, separator, path = spec.partition("=")
        if not separator or not name or not path:
            raise InputError(f"evaluation task {spec!r}: expected NAME=PATH, for example askubuntu=data-eval/askubuntu")
        if name in tasks:
            raise InputError(f"evaluation task {name!r} given twice")
        tasks[name] = path
    return tasks


STS_TASK_NAMES = ("stsb", "sickr", "sts12", "sts13", "sts14", "sts15", "sts16")


def build_tasks(specs: dict[str, str]) -> dict:
    """{name: task} for {name: path}, every file read and checked now."""
    return {name: build_task(name, path) for name, path in specs.items()}


def evaluate_tasks(tasks: dict, scorer, split: str = "test") -> TaskResult:
    """Every task's metrics on `split`, merged; with two or more STS tasks also `sts_avg`, the plain mean of
    their main metrics (the "Avg." column of the seeds' STS tables)."""
    merged = TaskResult({})
    for task in tasks.values():
        result = task.evaluate(scorer, split)
        merged.metrics.update(result.metrics)
        merged.per_query.update(result.per_query)
    sts_scores = [merged.metrics[task.main_metric] for name, task in tasks.items() if name in STS_TASK_NAMES]
    if len(sts_scores) >= 2:
        merged.metrics["sts_avg"] = sum(sts_scores) / len(sts_scores)
    return merged
