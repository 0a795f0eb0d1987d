"""The reproduction targets of a running sweep (`SweepDefinition.published`, checked by
`sentsweep.analysis.reproduction`, and `SweepDefinition.orderings`, checked by `sentsweep.analysis.orderings`): under
each stage's table one line, the whole list in a file and an artifact.

A stage's targets are those its grid holds: of its stage (or of none), and whose cell no axis or fixed setting of the
stage rules out (a value of a swept param outside its values, a fixed setting at another value). The line says how
many were measured, reproduced and outside, how many need metrics the run did not evaluate (naming those metrics and
the `--eval-task` that adds them), and where the list is. The list, every target with its metric, cell, value,
source and verdict, stage by stage and then the targets no stage of the run holds, is written after each stage to
`<output dir>/<experiment>-<sweep run id, 8>-reproduction_targets.md` and to the artifact `TARGET_LIST_ARTIFACT`
of the sweep's MLflow run.

An ordering (a finding stated in words) is a stage's where one of its cells is, and is checked against the runs of
every stage run so far: one whose cells span stages is "not run" under the first and gets its verdict under the
stage that runs its last cell. The line says how many are met, not met and not run; the list ends with each
ordering's latest verdict and the comparisons that fail.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from sentsweep.analysis.orderings import (
    Cell,
    OrderingCheck,
    PublishedOrdering,
    check_ordering,
    orderings_line,
    orderings_markdown,
)
from sentsweep.analysis.reproduction import (
    STAGE_PARAM,
    PublishedValue,
    check_targets,
    contains_value,
    reproduction_markdown,
    targets_line,
)
from sentsweep.tasks import TASKS, main_metric

TARGET_LIST_ARTIFACT = "reproduction_targets.md"  # on the sweep's MLflow run: every target and its verdict


def eval_task_of(metric: str) -> str | None:
    """The evaluation task whose `--eval-task NAME=PATH` makes a sweep report `metric` ('askubuntu' for
    askubuntu_map: its main metric, or another it reports under its name); None for a metric of no task."""
    names = sorted(TASKS.names(), key=len, reverse=True)  # the longest name first: 'sts12' before 'sts'
    for name in names:
        if metric == main_metric(name):
            return name
    return next((name for name in names if metric.startswith(f"{name}_")), None)


def in_stage(target: PublishedValue | Cell, stage: str | None, axes: dict, constants: dict) -> bool:
    """Whether the stage's grid holds `target`'s cell: no axis of the stage leaves the target's value out, no fixed
    setting of the stage is at another value, and the target is of this stage or of none."""
    if stage is not None and target.params.get(STAGE_PARAM, stage) != stage:
        return False
    for name, value in target.params.items():
        if name == STAGE_PARAM:
            continue
        if isinstance(axes.get(name), list):
            if not contains_value(axes[name], value):
                return False
        elif name not in axes and constants.get(name) is not None and not contains_value([constants[name]], value):
            return False
    return True


class TargetList:
    """The targets of one sweep's stages, as they run (see the module docstring); `write_artifact(name, text)`
    logs a text artifact on the sweep's run."""

    def __init__(self, published: Sequence[PublishedValue], level: float, path: Path,
                 write_artifact: Callable[[str, str], None], orderings: Sequence[PublishedOrdering] = ()) -> None:
        self.published = list(published)
        self.orderings = list(orderings)
        self.level = level
        self.path = path
        self.write_artifact = write_artifact
        self.sections: dict[str, str] = {}
        self.held: set[int] = set()  # indices of the targets a stage run so far holds
        self.runs_so_far: list[pd.DataFrame] = []  # each stage's runs, for the orderings that span stages
        self.ordering_checks: dict[int, OrderingCheck] = {}  # each ordering's latest check, by index

    def stage_line(self, title: str, runs: pd.DataFrame, stage: str | None, axes: dict, constants: dict) -> str:
        """The stage's line (under its table); the list is written again with the stage's section."""
        lines = []
        if self.published:
            lines.append(self._values_line(title, runs, stage, axes, constants))
        if self.orderings:
            lines.append(self._orderings_line(runs, stage, axes, constants))
        self.write()
        return f"{' '.join(lines)} Every target: {self.path}"

    def _values_line(self, title: str, runs: pd.DataFrame, stage: str | None, axes: dict, constants: dict) -> str:
        mine = [index for index, target in enumerate(self.published) if in_stage(target, stage, axes, constants)]
        self.held.update(mine)
        checks = check_targets(runs, [self.published[index] for index in mine], self.level)
        self.sections[title] = reproduction_markdown(checks, every_target=True, heading=f"## {title}") if checks \
            else f"## {title}\n\nNo target of the sweep is a cell of this stage."
        return targets_line(checks, len(self.published), eval_task_of) if checks else (
            f"Reproduction targets: none of the sweep's {len(self.published)} is a cell of this stage.")

    def _orderings_line(self, runs: pd.DataFrame, stage: str | None, axes: dict, constants: dict) -> str:
        self.runs_so_far.append(runs)
        every_run = pd.concat(self.runs_so_far, ignore_index=True)
        mine = [index for index, ordering in enumerate(self.orderings)
                if any(in_stage(cell, stage, axes, constants) for cell in ordering.cells())]
        for index in mine:
            self.ordering_checks[index] = check_ordering(every_run, self.orderings[index])
        return orderings_line([self.ordering_checks[index] for index in mine], len(self.orderings))

    def write(self) -> None:
        """The list as it stands: each stage run so far, then the targets no stage of them holds."""
        others = [target for index, target in enumerate(self.published) if index not in self.held]
        parts = [f"# Reproduction targets of {self.path.name.rsplit('-reproduction_targets', 1)[0]}"]
        if self.published:
            parts += [f"Each published value the sweep re-runs, with its metric, its cell and how this run's cell "
                      f"compares ({100 * self.level:g}% interval).", *self.sections.values()]
        if self.orderings:
            checked = [self.ordering_checks[index] for index in sorted(self.ordering_checks)]
            unchecked = [ordering for index, ordering in enumerate(self.orderings) if index not in self.ordering_checks]
            parts.append(orderings_markdown(checked) if checked else "## Orderings stated in words")
            if unchecked:
                parts.append(f"Orderings with no cell in a stage of this run ({len(unchecked)}): "
                             + "; ".join(f"{ordering.finding} ({ordering.source})" for ordering in unchecked) + ".")
        if others:
            parts.append(f"## Cells no stage of this run holds ({len(others)})\n\n"
                         "Targets of cells outside this run's grid (another grid, --quick's smaller one):\n\n"
                         "| cell | metric | published | source |\n|---|---|---|---|\n"
                         + "\n".join(f"| {target.cell_label()} | {target.metric} | {target.value:.2f} | "
                                     f"{target.source} |" for target in others))
        text = "\n\n".join(parts) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(text, encoding="utf-8")
        self.write_artifact(TARGET_LIST_ARTIFACT, text)
