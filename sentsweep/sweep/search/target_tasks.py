"""Per-task training: one model per target task, each trained on that task's own sentences and scored on it.

Where a seed trains in-domain, every column of its table is a model of its own: TSDAE §4.1 "For unsupervised
training, we just use the sentences from the training split" of each task (Table 2; Reiml 2023 Table 6.10 follows it).
A sweep that re-runs such a table (`SweepDefinition.per_task`) names its target tasks (the data label
`target_task`: USEB's four); those among the `--eval-task NAME=PATH` tasks take their unlabelled training
sentences from `--task-corpus NAME=PATH` (USEB's release: data-train/<task>/unsupervised/train.txt); with one
target task and no --task-corpus, --corpus is its corpus. Several without a corpus each are refused: a model trained
on one task's sentences would be compared with the paper's in-domain cells of the others. The other --eval-task
tasks (STS12 ... for TSDAE Table 11) are no target: every trial is scored on them.

Its stages that train on the target domain take the axis `target_task` (`task_axis`), and a trial's `corpus` and
`eval_tasks` follow it, as a method's own settings follow the method axis: the task's corpus, and the task with
the tasks that are no target (`settings_by_task`). Every trial logs `target_task`; a reproduction target of an
in-domain cell names it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sentsweep.data import read_corpus
from sentsweep.errors import InputError
from sentsweep.sweep.config.options import SweepOptions, option
from sentsweep.trainables.settings import TASK_AXIS

__all__ = ["TASK_AXIS", "PerTaskOptions", "TaskData", "resolve_task_data", "settings_by_task", "task_axis"]


@dataclass(frozen=True, kw_only=True)
class PerTaskOptions(SweepOptions):
    """The options of a sweep that trains one model per target task."""

    task_corpus: tuple[str, ...] = option(
        "a target task's unlabelled training sentences, one per line (USEB: data-train/<task>/unsupervised/"
        "train.txt): its models train on them and are scored on that task alone (repeatable; every --eval-task "
        "needs one where several are given; with one, --corpus is its corpus; default: none)", (), repeat=True,
        metavar="NAME=PATH")


@dataclass(frozen=True)
class TaskData:
    """A target task's data: its corpus (absolute path), the corpus's size, and the evaluation tasks its trials are
    scored on ({name: folder}: the task's own, and the --eval-task tasks that are no target)."""

    corpus: str
    corpus_size: int
    eval_tasks: dict


def task_names(options: SweepOptions) -> list[str]:
    """The --eval-task tasks, in the order given."""
    # lazy: torch
    from sentsweep.tasks import parse_task_specs

    return list(parse_task_specs(options.eval_task)) if options.eval_task else []


def task_axis(options: SweepOptions, targets: tuple[str, ...]) -> dict[str, list[str]]:
    """{target_task: the --eval-task tasks among `targets`} for a stage that trains on the target domain ({}
    without one)."""
    names = [name for name in task_names(options) if name in targets]
    return {TASK_AXIS: names} if names else {}


def resolve_task_data(options: SweepOptions, corpus: Path, corpus_size: int, eval_tasks: dict[str, str],
                      targets: tuple[str, ...]) -> dict[str, TaskData]:
    """{task: its data} of every --eval-task task among `targets`, each corpus read now (a missing or empty file
    fails before anything runs); an `InputError` for a --task-corpus of no such task, or for several target tasks
    without a corpus each."""
    # lazy: torch
    from sentsweep.tasks import parse_task_specs

    if options.search == "optuna":
        raise InputError("--search optuna samples configurations of one stage on one corpus; with --eval-task this "
                         "sweep trains a model per target task on its own corpus: use --search grid, or sample "
                         "without --eval-task")
    corpora = parse_task_specs(list(getattr(options, "task_corpus", ())))
    target_tasks = {name: path for name, path in eval_tasks.items() if name in targets}
    others = {name: path for name, path in eval_tasks.items() if name not in targets}
    unknown = [name for name in corpora if name not in target_tasks]
    if unknown:
        given = ", ".join(target_tasks) or "none of " + ", ".join(targets)
        raise InputError(f"--task-corpus {unknown[0]}: not one of the target tasks given with --eval-task ({given})")
    missing = [name for name in target_tasks if name not in corpora]
    if len(target_tasks) > 1 and missing:
        raise InputError(
            f"--eval-task {missing[0]} has no --task-corpus: this sweep trains one model per target task on that "
            "task's own training sentences (TSDAE §4.1: \"For unsupervised training, we just use the sentences from "
            f"the training split\"); give --task-corpus {missing[0]}=data-train/{missing[0]}/unsupervised/train.txt "
            "(USEB's release) for every task, or one --eval-task with its --corpus")
    data = {}
    for name, path in target_tasks.items():
        if name in corpora:
            task_corpus = Path(corpora[name]).resolve()
            data[name] = TaskData(str(task_corpus), len(read_corpus(task_corpus)), {name: path} | others)
        else:
            data[name] = TaskData(str(corpus), corpus_size, {name: path} | others)
    return data


def settings_by_task(task_data: dict[str, TaskData], axes: dict) -> dict[str, dict]:
    """{setting: {task: value}} for the settings the `target_task` axis decides: each task's corpus, and its
    evaluation tasks (the task, and those that are no target) ({} for a stage without the axis)."""
    if TASK_AXIS not in axes or not task_data:
        return {}
    tasks = [task for task in axes[TASK_AXIS] if task in task_data]
    return {"corpus": {task: task_data[task].corpus for task in tasks},
            "eval_tasks": {task: task_data[task].eval_tasks for task in tasks}}


def corpus_size_of(config: dict, task_data: dict[str, TaskData], corpus_size: int) -> int:
    """The size of the corpus a trial of `config` trains on: its target task's, else the sweep's."""
    task = config.get(TASK_AXIS)
    return task_data[task].corpus_size if task in task_data else corpus_size
