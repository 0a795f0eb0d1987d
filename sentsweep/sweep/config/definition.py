"""What a sweep is: its stages and definition (an experiment), and its settings once the command line is applied."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol as TypingProtocol

from sentsweep.analysis.orderings import PublishedOrdering
from sentsweep.analysis.reproduction import (
    STAGE_PARAM,
    PublishedSweepValue,
    PublishedValue,
    contains_value,
    value_text,
)
from sentsweep.references import Reference
from sentsweep.search_spaces.protocol import Protocol
from sentsweep.sweep.config.options import SweepOptions

if TYPE_CHECKING:
    from sentsweep.analysis.tables import ComparisonTable


@dataclass
class Stage:
    """One stage of a sweep: its name and the axes it sweeps, {param: values} (grid) or {param: domain}; axes
    None: the stage is left out (an option turned it off); a setting of one stage only (its method) is an axis of
    one value. A stage may start from the models of an earlier stage (a chain: pre-training, then supervised
    training).

    Examples:
        >>> stage = sentsweep.Stage("pooling", lambda options: {"pooling": ["cls", "mean"]})
        >>> stage.axes(sentsweep.SweepOptions(quick=True))
        {'pooling': ['cls', 'mean']}
    """

    name: str
    axes: Callable[[SweepOptions], dict | None]
    grids: dict[str, str] = field(default_factory=dict)  # axis -> the protocol grid it takes, where not its name
    # A chained stage: each seed starts from the same seed's model of stage `init_from` (an earlier stage), of
    # its best configuration on dev (`init_rows` "best") or of each of its configurations ("each": an axis
    # `pretrained` naming the row).
    init_from: str | None = None
    init_rows: Literal["best", "each"] = "best"
    # In a greedy sweep: the rule by which the stage hands its axes' values on, in words, and the values
    # themselves (None: the stage's best on dev), e.g. the value a paper chose whatever dev said.
    keep: Callable[[SweepOptions], tuple[str, dict] | None] = lambda options: None


class SweepDriver(TypingProtocol):
    """What a definition's own `driver` may do to run its stages (a search whose next stage depends on the last,
    such as the labelled-data intersection): the sweep's options and settings, stages run one at a time, and
    metrics of the whole sweep. `sentsweep.sweep.execution.runner` implements it."""

    options: SweepOptions  # the command line, typed (the definition's `options` class)
    overrides: dict  # the settings the command line or --quick set, {key: value}
    selection_metric: str  # the definition's

    def run_stage(self, name: str, settings: dict, axes: dict, title: str | None = None) -> ComparisonTable:
        """Run one stage (its trials over the seeds, `settings` shared by them, `axes` {param: values}), log and
        print its table (headed `title`, else the stage's name), and return it; stages are numbered in the order
        they run."""

    def log_sweep_metrics(self, metrics: dict[str, float]) -> None:
        """Log metrics of the whole sweep to its MLflow run."""


@dataclass
class SweepDefinition:
    """An experiment: its name, its protocol (every setting, grid and seed with its source), and its stages.

    `options`: the class of its command-line options (`SweepOptions`, or a subclass with the experiment's own);
    each stage's axes are a function of them. `sampled_axes(options)`, where given, returns {param: Ray Tune
    domain} for `--search optuna` (one stage).
    `greedy`: each stage fixes its axes at their best value on dev before the next one starts (the TSDAE
    paper's App. A search); otherwise the stages are independent parts of one protocol (a table's rows).
    `published`: the published values of the table the sweep re-runs, one per cell it can produce (its
    reproduction targets, checked in its report; see `sentsweep.analysis.reproduction`). `published_results`: the
    published values of a result of the whole sweep (a search's answer, logged on the sweep's own run), which
    its driver checks against what it found (`sentsweep.analysis.reproduction.sweep_value_check`). `orderings`:
    the findings the document states in words about a figure the sweep re-runs, each an ordering of the table's
    cells with its quote (`sentsweep.analysis.orderings.PublishedOrdering`), checked under each stage's table with
    the published values.

    Examples:
        A sweep of SimCSE's temperature over seeds (examples/own_objective.py is a whole one):

        >>> own = sentsweep.project_choice("this example's choice")
        >>> protocol = sentsweep.Protocol(
        ...     settings={"pooling": sentsweep.Sourced("cls", own)},
        ...     seeds=sentsweep.Sourced(3, own), grids={"temperature": sentsweep.Sourced([0.05, 0.1], own)},
        ...     quick=dict(max_steps=4, eval_steps=2, seeds=2))
        >>> definition = sentsweep.SweepDefinition(
        ...     name="simcse_temperature", description="SimCSE's temperature", protocol=protocol,
        ...     stages=[sentsweep.Stage("temperature", lambda options: {
        ...         "method": ["simcse"], "temperature": protocol.grid("temperature")})])
        >>> [stage.name for stage in definition.stages], definition.selection_metric
        (['temperature'], 'best_sts_dev')
        >>> result = sentsweep.run(definition, quick=True, tracking_uri="sqlite:////tmp/s/mlflow.db",
        ...                        output_dir="/tmp/s")  # doctest: +SKIP
    """

    name: str
    description: str
    protocol: Protocol
    stages: list[Stage]
    greedy: bool = False
    options: type[SweepOptions] = SweepOptions
    sampled_axes: Callable[[SweepOptions], dict] | None = None
    quick_setup: Callable[[dict, Path], dict] | None = None  # --quick: extra tiny models, as config entries
    trains_on_gold_pairs: bool = False  # supervised: train_file = the labelled pairs beside the dev/test data
    # One model per target task, each on that task's corpus (--task-corpus; `sentsweep.sweep.search.target_tasks`): the
    # stages whose axes hold `target_task` train per task
    per_task: bool = False
    # Settings every trial shares that the sweep's own options give, {setting: value}, each named as its option
    # (the card gives that option as its source); a data file is checked there, so that a missing or malformed one
    # fails before anything runs
    settings_from_options: Callable[[SweepOptions], dict] = lambda options: {}
    # Runs the stages itself, e.g. a search whose next stage depends on the last: driver(sweep, constants)
    driver: Callable[[SweepDriver, dict], None] | None = None
    # Checks of the sweep's own options against its resolved settings, before anything runs: (options, constants)
    check: Callable[[SweepOptions, dict], None] = lambda options, constants: None
    # Inputs the options leave out that the sweep needs to run (the card lists them, a run is refused): (options)
    missing_inputs: Callable[[SweepOptions], list[str]] = lambda options: []
    reference: Reference | None = None  # the work whose experiment this re-runs (None: the project's own)
    # {param: its values}: a param naming the data set of a whole run, set by the sweep's own option through
    # `settings_from_options` and logged with every trial; a target of a table with one column per data set is
    # keyed on it
    data_labels: dict[str, tuple[str, ...]] = field(default_factory=dict)
    selection_metric: str = "best_sts_dev"
    table_metrics: list[str] = field(default_factory=lambda: ["sts_test_at_best_dev", "best_sts_dev"])
    published: tuple[PublishedValue, ...] = ()
    published_results: tuple[PublishedSweepValue, ...] = ()
    orderings: tuple[PublishedOrdering, ...] = ()


@dataclass
class ResolvedSweep:
    """A sweep's settings once the command line is applied: `constants` every trial shares (absolute paths,
    checked files), `method_settings` {method: {key: value}} of the protocol that nothing overrode, the keys the
    command line or --quick set (`overrides`), the seeds, the training corpus's size in sentences, Ray Tune's
    storage (shared by every node; its cache/ folder holds the preparation cache), and, for a sweep that trains
    per target task, each task's data ({task: `sentsweep.sweep.search.target_tasks.TaskData`})."""

    constants: dict
    method_settings: dict[str, dict]
    overrides: dict
    seeds: list[int]
    corpus_size: int
    storage_path: str
    task_data: dict = field(default_factory=dict)


def target_problems(definition: SweepDefinition, stages: Sequence[tuple[str, dict]]) -> list[str]:
    """Why each of the definition's targets names a cell its sweep cannot produce, given its stages' axes
    (`sentsweep.sweep.launch.launcher.stage_axes`); [] when every target can be produced.

    A target's param must, in one stage (its `stage`, where it names one), be an axis holding the value; or, in a
    greedy sweep, an earlier stage's axis holding it (the value that stage may carry over); or a fixed setting of
    the protocol (of the target's method) equal to it; or a data label (`data_labels`) holding it (or None: a run
    without one); or `pretrained` of a stage chained to each configuration of an earlier one (its values are that
    stage's rows, known once it has run). A target of a declared stage that the options leave out is not checked
    (none of its cells can run). Its metric
    must be one of the sweep's table metrics, or one an evaluation task logs (`askubuntu_map`: its name's prefix
    is a registered task's, which the runs log when given --eval-task with that name).
    """
    constants = definition.protocol.constants()
    metrics = set(definition.table_metrics) | {definition.selection_metric}
    # a stage started from each configuration of an earlier one gets the axis `pretrained` once that one has run
    chained_each = {stage.name for stage in definition.stages if stage.init_from and stage.init_rows == "each"}
    # lazy: torch
    from sentsweep.tasks import TASKS

    task_prefixes = tuple(f"{name}_" for name in TASKS.names())
    names = [name for name, _ in stages]
    problems = []
    for target in definition.published:
        label = f"{target.cell_label()} ({target.source})"
        if target.metric not in metrics and not target.metric.startswith(task_prefixes):
            problems.append(f"{label}: metric {target.metric!r} is neither among the sweep's {sorted(metrics)} nor "
                            "an evaluation task's")
        stage = target.params.get(STAGE_PARAM)
        if stage is not None and stage not in names and len(definition.stages) > 1 and \
                stage in {declared.name for declared in definition.stages}:
            continue  # a stage these options leave out (tsdae_main's baselines without --eval-task)
        if stage is not None and (len(definition.stages) < 2 or stage not in names):
            problems.append(f"{label}: no stage {stage!r} (stages logged: "
                            f"{names if len(definition.stages) > 1 else 'none'})")
            continue
        method = target.params.get("method", constants.get("method"))
        fixed = constants | definition.protocol.settings_of(method)
        reasons_by_stage = []
        for index, (name, axes) in enumerate(stages):
            if stage is not None and name != stage:
                continue
            earlier = {} if not definition.greedy else {
                axis: values for _, before in stages[:index] for axis, values in before.items()}
            reasons = []
            for param, value in target.params.items():
                if param == STAGE_PARAM or (param == "pretrained" and name in chained_each):
                    continue
                if param in axes:
                    if not isinstance(axes[param], list) or not contains_value(axes[param], value):
                        reasons.append(f"{param}={value_text(value)} is not in its axis {axes[param]}")
                elif param in earlier:
                    if not contains_value(earlier[param], value):
                        reasons.append(
                            f"{param}={value_text(value)} is not in an earlier stage's axis {earlier[param]}")
                elif param in definition.data_labels:  # None: a run without one (no data set named)
                    if value is not None and value not in definition.data_labels[param]:
                        reasons.append(f"{param}={value_text(value)} is none of the data sets "
                                       f"{list(definition.data_labels[param])}")
                elif param in fixed:
                    if not contains_value([fixed[param]], value):
                        reasons.append(
                            f"{param}={value_text(value)} but the sweep fixes it at {value_text(fixed[param])}")
                else:
                    reasons.append(f"{param} is neither an axis nor a setting of the sweep")
            if not reasons:
                break
            reasons_by_stage.append(f"stage {name!r}: " + "; ".join(reasons))
        else:
            problems.append(f"{label}: " + (" | ".join(reasons_by_stage) or "no stage"))
    return problems
