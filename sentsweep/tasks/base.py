"""What every evaluation task is: the `Task` base class, its `TaskResult`, and the `TASKS` registry.

A task class states, as class attributes, what it scores and where its data and protocol come from:
`name` (its registry name, or its family where one class serves several names), `main_metric` (the metric the
seeds' tables show, without the task prefix: "map"), `splits` (the splits it can score; a task whose files
may lack one narrows them when built) and `reference` (the work that released the data, as a
`sentsweep.references.Reference`). Built as `Task(name, path)`, it reads and checks its files at once, so a
malformed file fails before any training; `evaluate(scorer, split)` then scores a `sentsweep.scorers.Scorer`.

Task classes register themselves where they are defined, with `@register("askubuntu")` (or several names
for one class): the registered name is the task's only name, which a built task holds as `name`. This module
imports no task module, so task modules import from here and never from the package `sentsweep.tasks`, which
imports them all.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

from sentsweep.references import Reference
from sentsweep.registry import Registry
from sentsweep.scorers import Scorer


@dataclass
class TaskResult:
    """Metrics (x 100) of one task on one split, per-query outcomes for paired tests over items, and files the
    trial's run keeps as artifacts ({path: JSON content}, e.g. MTEB's own result JSON).

    Examples:
        >>> result = sentsweep.TaskResult({"faq_rerank_map": 61.2}, per_query={"faq_rerank_ap": [1.0, 0.5]})
        >>> result.metrics["faq_rerank_map"], result.artifacts
        (61.2, {})
    """

    metrics: dict[str, float]
    per_query: dict[str, list[float]] = field(default_factory=dict)
    artifacts: dict[str, dict] = field(default_factory=dict)


class Task(ABC):
    """An evaluation task on the data at `path`; its metrics are prefixed with the name it was built under. A
    subclass names its `main_metric`, its `splits` and its `reference`, reads and checks its files in `__init__`
    and scores a split in `evaluate(scorer, split)` (examples/own_task.py is a whole one).

    Examples:
        >>> class ConstantTask(sentsweep.Task):
        ...     main_metric, splits = "map", ("dev", "test")
        ...     def evaluate(self, scorer, split):
        ...         return sentsweep.TaskResult({self.main_metric_key: 50.0})
        >>> ConstantTask("faq_rerank", "data/faq").evaluate(None, "dev").metrics
        {'faq_rerank_map': 50.0}
    """

    name: str
    main_metric: ClassVar[str]
    splits: tuple[str, ...]
    reference: ClassVar[Reference]

    def __init__(self, name: str, path: str) -> None:
        """Subclasses read and check the files at `path` here, after this sets `name` and `path`."""
        self.name, self.path = name, str(path)

    def metric_key(self, metric: str) -> str:
        """The key of `metric` in this task's results: the task's name, '_', the metric ('askubuntu_map')."""
        return f"{self.name}_{metric}"

    @property
    def main_metric_key(self) -> str:
        """The key of the main metric in this task's results, for example 'askubuntu_map'."""
        return self.metric_key(self.main_metric)

    @abstractmethod
    def evaluate(self, scorer: Scorer, split: str) -> TaskResult:
        """The task's metrics (x 100, keys prefixed with its name) for `scorer` on `split`."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.path!r})"


TASKS: Registry[type[Task]] = Registry("evaluation task")


def register(*names: str):
    """Class decorator: registers a task class under each of `names` in `TASKS` (a name given twice is refused);
    a sweep then scores it with `--eval-task NAME=FOLDER`.

    Examples:
        >>> @sentsweep.task("faq_rerank")  # doctest: +SKIP
        ... class FaqRerankTask(sentsweep.Task):
        ...     main_metric, splits, reference = "map", ("dev", "test"), OWN_DATA
        ...     def evaluate(self, scorer, split):
        ...         ...
        >>> sentsweep.run("nm_weight", quick=True, plugin=["own_task.py"],
        ...               eval_task=["faq_rerank=examples/data/faq_rerank"])  # doctest: +SKIP
    """

    def add(task_class: type[Task]) -> type[Task]:
        for name in names:
            TASKS.add(name, task_class)
        return task_class

    return add
