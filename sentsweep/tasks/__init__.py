"""The evaluation tasks of the seed documents, each reading its public release's own file format.

A task is built from a name and a local path (`build_task("askubuntu", "data-eval/askubuntu")`), reads and
checks its files when built (so a malformed file fails before any training), and scores any scorer of
`sentsweep.scorers` on one of its splits: `task.evaluate(scorer, "test")` returns a `TaskResult` whose
metrics are x 100 and prefixed with the task's name ("askubuntu_map"); `task.main_metric_key` names the one
the seeds' tables show. Which names exist: `task_names()`.

Every task class derives from `sentsweep.tasks.base.Task`, which states its main metric, splits and the
`Reference` of its data, and registers itself in `TASKS` where it is defined; importing this package imports
every task module, so the registry is complete. The modules' docstrings give each metric's formula and source.
MTEB's tasks are named 'mteb:<TaskName>' (or 'mteb:<Benchmark>' for all of a benchmark's tasks) and scored by MTEB
itself (`sentsweep.tasks.mteb_tasks`, which imports `mteb` only when such a task is built).
"""

from __future__ import annotations

from sentsweep.errors import InputError
from sentsweep.registry import unknown_name
from sentsweep.scorers import Scorer
from sentsweep.tasks import distractors, pos_tags, retrieval, sts, transfer, useb  # noqa: F401 (they register their tasks)
from sentsweep.tasks.base import TASKS, Task, TaskResult
from sentsweep.tasks.mteb_tasks import MtebTask, expand_spec, is_mteb_name, main_metric_of

__all__ = [
    "DISTRACTORS_PREFIX", "STS_TASK_NAMES", "TASKS", "Task", "TaskResult", "build_task", "build_tasks",
    "evaluate_tasks", "main_metric", "parse_task_specs", "task_names",
]

BEIR_PREFIX = "beir-"  # 'beir-<dataset>' reads any BEIR retrieval folder with the task registered as 'quora',
# unless the name is registered itself ('beir-cqadupstack': the 12 forum folders, averaged)
DISTRACTORS_PREFIX = "distractors_"  # 'distractors_<label>': one more file of pools, the task 'distractors' under
# its own name (Malmberg 2021's 15 pool files of a split, each scored in one run)


def task_names() -> list[str]:
    """Every task name `build_task` accepts ('distractors_<label>' reads one more file of pools, 'beir-<dataset>' any
    BEIR retrieval folder)."""
    return sorted(TASKS.names()) + ["mteb:<MTEB task or benchmark>", f"{DISTRACTORS_PREFIX}<label>",
                                    f"{BEIR_PREFIX}<dataset>"]


def _task_class(name: str) -> type[Task]:
    if is_mteb_name(name):
        return MtebTask
    kind = "quora" if name.startswith(BEIR_PREFIX) and name not in TASKS else name
    kind = "distractors" if name.startswith(DISTRACTORS_PREFIX) and name not in TASKS else kind
    if kind not in TASKS:
        raise unknown_name(TASKS.kind, name, task_names())
    return TASKS.get(kind)


def build_task(name: str, path: str) -> Task:
    """The task `name` on the data at `path`; an unknown name or a malformed file is an `InputError`."""
    return _task_class(name)(name, path)


def main_metric(name: str) -> str:
    """The metric of task `name` that the seeds' tables show, for example 'askubuntu_map'."""
    if is_mteb_name(name):
        return main_metric_of(name)
    return f"{name}_{_task_class(name).main_metric}"


def parse_task_specs(specs: list[str]) -> dict[str, str]:
    """NAME=PATH strings as {name: path}, an MTEB benchmark as its tasks (`mteb_tasks.expand_spec`); a missing '='
    or a repeated name is an `InputError`."""
    tasks = {}
    for spec in specs:
        name, separator, path = spec.partition("=")
        if not separator or not name or not path:
            raise InputError(f"evaluation task {spec!r}: expected NAME=PATH, for example askubuntu=data-eval/askubuntu")
        for task, task_path in (expand_spec(name, path) if is_mteb_name(name) else {name: path}).items():
            if task in tasks:
                raise InputError(f"evaluation task {task!r} given twice")
            tasks[task] = task_path
    return tasks


STS_TASK_NAMES = ("stsb", "sickr", "sts12", "sts13", "sts14", "sts15", "sts16")


def build_tasks(specs: dict[str, str]) -> dict[str, Task]:
    """{name: task} for {name: path}, every file read and checked now."""
    return {name: build_task(name, path) for name, path in specs.items()}


def evaluate_tasks(tasks: dict[str, Task], scorer: Scorer, split: str = "test") -> TaskResult:
    """Every task's metrics on `split`, merged; with two or more STS tasks also `sts_avg`, the plain mean of
    their main metrics (the "Avg." column of the seeds' STS tables)."""
    merged = TaskResult({})
    for task in tasks.values():
        result = task.evaluate(scorer, split)
        merged.metrics.update(result.metrics)
        merged.per_query.update(result.per_query)
        merged.artifacts.update(result.artifacts)
    sts_scores = [merged.metrics[task.main_metric_key] for name, task in tasks.items() if name in STS_TASK_NAMES]
    if len(sts_scores) >= 2:
        merged.metrics["sts_avg"] = sum(sts_scores) / len(sts_scores)
    return merged
