"""The TSDAE paper's target task (§6, §7): the task whose dev split selects and reports a stage's checkpoints,
given once with --target-task (default: the only --eval-task task), for the stages that select on it only.

A chained sweep's stages follow different rules (App. B: the unsupervised pre-training trains a fixed number of
steps and reports its last checkpoint; the supervised stages stop early), so the selection settings are never
taken from --set, which would replace every stage's rule at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from sentsweep.errors import InputError
from sentsweep.sweep.config.options import SweepOptions, option, parse_assignments
from sentsweep.sweep.search.target_tasks import TASK_AXIS

SELECTION_KEYS = ("select_checkpoint", "selection_task", "selection_metric")


@dataclass(frozen=True, kw_only=True)
class TargetTaskOptions(SweepOptions):
    """The options of a sweep whose supervised stages select on a target task."""

    target_task: str | None = option("one of the --eval-task tasks, whose dev split selects and reports the "
                                     "checkpoints of the stages that stop early (default: the only --eval-task task; "
                                     "without any: STS benchmark dev)", metavar="NAME")


def target_task(options: TargetTaskOptions) -> str | None:
    """--target-task, else the only --eval-task task, else None."""
    # lazy: torch
    from sentsweep.tasks import parse_task_specs

    if options.target_task is not None:
        return options.target_task
    names = list(parse_task_specs(options.eval_task)) if options.eval_task else []
    return names[0] if len(names) == 1 else None


def selection_axes(options: TargetTaskOptions) -> dict[str, list]:
    """The one-value axes that make a stage select its checkpoints on the target task's dev split ({} without
    one: the protocol's rule), its trials naming the task as their `target_task`."""
    task = target_task(options)
    return {} if task is None else {"select_checkpoint": ["best_task_dev"], "selection_task": [task],
                                    TASK_AXIS: [task]}


def scoring_axes(options: TargetTaskOptions) -> dict[str, list]:
    """The one-value axes of a stage that keeps its own rule (an unsupervised stage's last checkpoint, TSDAE App. B)
    but reports the target task's dev score of the checkpoint it keeps (`selected_task_dev`), as the stages that
    select on it do ({} without a target task)."""
    task = target_task(options)
    return {} if task is None else {"selection_task": [task], TASK_AXIS: [task]}


def in_domain_loss(task: str) -> str:
    """The in-domain SBERT loss of a USEB task (TSDAE §5.1): MNRL on the relevant pairs of AskUbuntu, CQADupStack and
    SciDocs, the MSE of the cosine on TwitterPara's scored pairs."""
    return "cosine" if task == "twitterpara" else "mnrl"


def missing_task_pairs_problem(task: str, option_line: str) -> str:
    """The line that refuses a target task whose labelled training pairs no option names: in-domain SBERT would
    otherwise train on --set train_file's default (the STS benchmark's pairs) with the task's loss. `option_line`
    is how the sweep's command line names them."""
    return (f"target task {task!r}: give its labelled training pairs with {option_line} (USEB's release): TSDAE §6 "
            "trains SBERT in-domain, on the task's own pairs")


def check_target_task(options: TargetTaskOptions, constants: dict) -> None:
    """The target task is an --eval-task task with a dev split; --set does not name a selection setting."""
    # lazy: torch
    from sentsweep.tasks import build_task

    given = [key for key in parse_assignments(options.assignments) if key in SELECTION_KEYS]
    if given:
        raise InputError(f"--set {given[0]}: this sweep's stages select checkpoints by different rules (TSDAE App. B: "
                         "the unsupervised stage's fixed steps, its last checkpoint), which one --set would replace "
                         "for all; give the task whose dev split the other stages select on with --target-task")
    task = target_task(options)
    if task is None:
        return
    tasks = constants.get("eval_tasks") or {}
    if task not in tasks:
        raise InputError(f"--target-task {task!r} is not one of the --eval-task tasks "
                         f"({', '.join(tasks) or 'none given'})")
    if "dev" not in build_task(task, tasks[task]).splits:
        raise InputError(f"--target-task {task!r} has no dev split ({tasks[task]}) to select checkpoints on (TSDAE §7 "
                         "uses TwitterPara's test set; this project does not select on test)")
