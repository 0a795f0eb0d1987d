"""What a sweep is: its stages and definition (an experiment), and its settings once the command line is applied."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sentsweep.analysis.reproduction import PublishedValue
from sentsweep.references import Reference
from sentsweep.search_spaces.protocol import Protocol


@dataclass
class Stage:
    """One stage of a sweep: its name and the axes it sweeps, {param: values} (grid) or {param: domain}; axes
    None: the stage is left out (an option turned it off); a setting of one stage only (its method) is an axis of
    one value. A stage may start from the models of an earlier stage (a chain: pre-training, then supervised
    training)."""

    name: str
    axes: Callable[[argparse.Namespace], dict | None]
    grids: dict[str, str] = field(default_factory=dict)  # axis -> the protocol grid it takes, where not its name
    # A chained stage: each seed starts from the same seed's model of stage `init_from` (an earlier stage), of
    # its best configuration on dev (`init_rows` "best") or of each of its configurations ("each": an axis
    # `pretrained` naming the row).
    init_from: str | None = None
    init_rows: Literal["best", "each"] = "best"


@dataclass
class SweepDefinition:
    """An experiment: its name, its protocol (every setting, grid and seed with its source), and its stages.

    `sampled_axes(args)`, where given, returns {param: Ray Tune domain} for `--search optuna` (one stage).
    `greedy`: each stage fixes its axes at their best value on dev before the next one starts (the TSDAE
    paper's App. A search); otherwise the stages are independent parts of one protocol (a table's rows).
    `published`: the published values of the table the sweep re-runs, one per cell it can produce (its
    reproduction targets, checked in its report; see `sentsweep.analysis.reproduction`).
    """

    name: str
    description: str
    protocol: Protocol
    stages: list[Stage]
    greedy: bool = False
    sampled_axes: Callable[[argparse.Namespace], dict] | None = None
    add_arguments: Callable[[argparse.ArgumentParser], None] = lambda parser: None
    quick_setup: Callable[[dict, Path], dict] | None = None  # --quick: extra tiny models, as config entries
    trains_on_gold_pairs: bool = False  # supervised: train_file = the labelled pairs beside the dev/test data
    # Runs the stages itself, e.g. a search whose next stage depends on the last: (runner, tracker, constants, stages)
    driver: Callable | None = None
    # Checks of the sweep's own options against its resolved settings, before anything runs: (args, constants)
    check: Callable[[argparse.Namespace, dict], None] = lambda args, constants: None
    reference: Reference | None = None  # the work whose experiment this re-runs (None: the project's own)
    selection_metric: str = "best_sts_dev"
    table_metrics: list[str] = field(default_factory=lambda: ["sts_test_at_best_dev", "best_sts_dev"])
    published: tuple[PublishedValue, ...] = ()


@dataclass
class ResolvedSweep:
    """A sweep's settings once the command line is applied: `constants` every trial shares (absolute paths,
    checked files), `method_settings` {method: {key: value}} of the protocol that nothing overrode, the keys the
    command line or --quick set (`overrides`), the seeds, and the training corpus's size in sentences."""

    constants: dict
    method_settings: dict[str, dict]
    overrides: dict
    seeds: list[int]
    corpus_size: int
