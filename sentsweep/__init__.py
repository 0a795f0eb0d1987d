"""sentsweep: hyperparameter and ablation sweeps for sentence-embedding research.

The public API is what `__all__` lists (the API reference, docs/api.md, documents each name); a module path
below `sentsweep` (`sentsweep.sweep.execution.runner`) is internal and may change.

- Running a sweep: `run` (an experiment by name or a `SweepDefinition`, its options as keywords) returns a
  `SweepResult` (`status`: `SweepStatus`, `best`: `BestConfiguration`); `read_sweep_result` reads one back from
  MLflow; `rerun` starts a recorded sweep again and compares it (`RerunResult`); `run_sweep` is a sweep script's
  command line; bad input raises `InputError`.
- Experiments and definitions: `experiment_names`, `get_experiment`, `SweepDefinition`, `Stage`, `Protocol`,
  `Sourced`, `SweepOptions` and `option` (an experiment's own options).
- Settings and sources: `Settings`, `setting`, `cited`, `project_choice`, `Reference`.
- Registries: `objective` (an unsupervised objective of one's own) with `Objective`, `task` (an evaluation task)
  with `Task` and `TaskResult`, `trainer_script` (a `SentenceTransformerTrainer` script as a method) with
  `TrainerRun`; the building blocks they use: `encode_views`, `preprocess_on_device`, `read_scored_pairs`,
  `mean_average_precision`, `mrr_at_k`.
- Losses: `TsdaeLoss`, `SimCseLoss`, `SimCseBceLoss`, `NoiseMatchingLoss`, `ConsertLoss`,
  `ContrastiveTensionBceLoss`, `MaskedLanguageModelingLoss`, `ClmAutoEncoderLoss`, `MlmAutoEncoderLoss`.
- Runs, tables and reports: `fetch_sweep_runs`, `build_table`, `to_frame`, `to_markdown`, `to_latex`,
  `plot_metric`, `ReportRequest`, `write_report`, `PublishedValue`.

`import sentsweep` loads none of them: each name is imported when first used (PEP 562), so that the import costs
neither torch nor Ray.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what the names are, for type checkers and the API reference; imported on first use below
    from sentsweep.analysis.plots import plot_metric
    from sentsweep.analysis.report import ReportRequest, write_report
    from sentsweep.analysis.reproduction import PublishedValue
    from sentsweep.analysis.runs import fetch_sweep_runs
    from sentsweep.analysis.tables import build_table, to_frame, to_latex, to_markdown
    from sentsweep.api import run
    from sentsweep.data import read_scored_pairs
    from sentsweep.errors import InputError
    from sentsweep.experiments import experiment_names, get_experiment
    from sentsweep.losses.consert import ConsertLoss
    from sentsweep.losses.contrastive import NoiseMatchingLoss, SimCseBceLoss, SimCseLoss, encode_views
    from sentsweep.losses.contrastive_tension import ContrastiveTensionBceLoss
    from sentsweep.losses.reconstruction import ClmAutoEncoderLoss, MaskedLanguageModelingLoss, MlmAutoEncoderLoss
    from sentsweep.losses.tsdae import TsdaeLoss
    from sentsweep.models import preprocess_on_device
    from sentsweep.references import Reference
    from sentsweep.retrieval_metrics import mean_average_precision, mrr_at_k
    from sentsweep.search_spaces.protocol import Protocol, Sourced
    from sentsweep.settings import Settings, cited, project_choice, setting
    from sentsweep.sweep.config.definition import Stage, SweepDefinition
    from sentsweep.sweep.config.options import SweepOptions, option
    from sentsweep.sweep.launch.entry_point import run_sweep
    from sentsweep.sweep_rerun import RerunResult, rerun
    from sentsweep.sweep_result import BestConfiguration, SweepResult, SweepStatus, read_sweep_result
    from sentsweep.tasks.base import Task, TaskResult, register as task
    from sentsweep.trainables.objectives import Objective, objective
    from sentsweep.trainables.trainer_script import TrainerRun, trainer_script

# {public name: (the module that defines it, its name there)}
_PUBLIC: dict[str, tuple[str, str]] = {
    "run": ("sentsweep.api", "run"),
    "SweepResult": ("sentsweep.sweep_result", "SweepResult"),
    "SweepStatus": ("sentsweep.sweep_result", "SweepStatus"),
    "BestConfiguration": ("sentsweep.sweep_result", "BestConfiguration"),
    "read_sweep_result": ("sentsweep.sweep_result", "read_sweep_result"),
    "rerun": ("sentsweep.sweep_rerun", "rerun"),
    "RerunResult": ("sentsweep.sweep_rerun", "RerunResult"),
    "run_sweep": ("sentsweep.sweep.launch.entry_point", "run_sweep"),
    "InputError": ("sentsweep.errors", "InputError"),
    "experiment_names": ("sentsweep.experiments", "experiment_names"),
    "get_experiment": ("sentsweep.experiments", "get_experiment"),
    "SweepDefinition": ("sentsweep.sweep.config.definition", "SweepDefinition"),
    "Stage": ("sentsweep.sweep.config.definition", "Stage"),
    "Protocol": ("sentsweep.search_spaces.protocol", "Protocol"),
    "Sourced": ("sentsweep.search_spaces.protocol", "Sourced"),
    "SweepOptions": ("sentsweep.sweep.config.options", "SweepOptions"),
    "option": ("sentsweep.sweep.config.options", "option"),
    "Settings": ("sentsweep.settings", "Settings"),
    "setting": ("sentsweep.settings", "setting"),
    "cited": ("sentsweep.settings", "cited"),
    "project_choice": ("sentsweep.settings", "project_choice"),
    "Reference": ("sentsweep.references", "Reference"),
    "objective": ("sentsweep.trainables.objectives", "objective"),
    "Objective": ("sentsweep.trainables.objectives", "Objective"),
    "task": ("sentsweep.tasks.base", "register"),
    "Task": ("sentsweep.tasks.base", "Task"),
    "TaskResult": ("sentsweep.tasks.base", "TaskResult"),
    "trainer_script": ("sentsweep.trainables.trainer_script", "trainer_script"),
    "TrainerRun": ("sentsweep.trainables.trainer_script", "TrainerRun"),
    "encode_views": ("sentsweep.losses.contrastive", "encode_views"),
    "preprocess_on_device": ("sentsweep.models", "preprocess_on_device"),
    "read_scored_pairs": ("sentsweep.data", "read_scored_pairs"),
    "mean_average_precision": ("sentsweep.retrieval_metrics", "mean_average_precision"),
    "mrr_at_k": ("sentsweep.retrieval_metrics", "mrr_at_k"),
    "TsdaeLoss": ("sentsweep.losses.tsdae", "TsdaeLoss"),
    "SimCseLoss": ("sentsweep.losses.contrastive", "SimCseLoss"),
    "SimCseBceLoss": ("sentsweep.losses.contrastive", "SimCseBceLoss"),
    "NoiseMatchingLoss": ("sentsweep.losses.contrastive", "NoiseMatchingLoss"),
    "ConsertLoss": ("sentsweep.losses.consert", "ConsertLoss"),
    "ContrastiveTensionBceLoss": ("sentsweep.losses.contrastive_tension", "ContrastiveTensionBceLoss"),
    "MaskedLanguageModelingLoss": ("sentsweep.losses.reconstruction", "MaskedLanguageModelingLoss"),
    "ClmAutoEncoderLoss": ("sentsweep.losses.reconstruction", "ClmAutoEncoderLoss"),
    "MlmAutoEncoderLoss": ("sentsweep.losses.reconstruction", "MlmAutoEncoderLoss"),
    "fetch_sweep_runs": ("sentsweep.analysis.runs", "fetch_sweep_runs"),
    "build_table": ("sentsweep.analysis.tables", "build_table"),
    "to_frame": ("sentsweep.analysis.tables", "to_frame"),
    "to_markdown": ("sentsweep.analysis.tables", "to_markdown"),
    "to_latex": ("sentsweep.analysis.tables", "to_latex"),
    "plot_metric": ("sentsweep.analysis.plots", "plot_metric"),
    "ReportRequest": ("sentsweep.analysis.report", "ReportRequest"),
    "write_report": ("sentsweep.analysis.report", "write_report"),
    "PublishedValue": ("sentsweep.analysis.reproduction", "PublishedValue"),
}

__all__ = [  # the names of `_PUBLIC`, in its order (written out for linters and the API reference)
    "run", "SweepResult", "SweepStatus", "BestConfiguration", "read_sweep_result", "rerun", "RerunResult",
    "run_sweep", "InputError",
    "experiment_names", "get_experiment", "SweepDefinition", "Stage", "Protocol", "Sourced", "SweepOptions",
    "option", "Settings", "setting", "cited", "project_choice", "Reference", "objective", "Objective", "task",
    "Task", "TaskResult", "trainer_script", "TrainerRun", "encode_views", "preprocess_on_device",
    "read_scored_pairs", "mean_average_precision", "mrr_at_k", "TsdaeLoss", "SimCseLoss", "SimCseBceLoss",
    "NoiseMatchingLoss", "ConsertLoss", "ContrastiveTensionBceLoss", "MaskedLanguageModelingLoss",
    "ClmAutoEncoderLoss", "MlmAutoEncoderLoss", "fetch_sweep_runs", "build_table", "to_frame", "to_markdown",
    "to_latex", "plot_metric", "ReportRequest", "write_report", "PublishedValue"
]


def __getattr__(name: str):
    """A public name, imported from its module when first used (and kept here from then on)."""
    if name not in _PUBLIC:
        raise AttributeError(f"module 'sentsweep' has no attribute {name!r}")
    module, attribute = _PUBLIC[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
