"""A sweep's command-line options as one frozen dataclass, from which the parser is generated.

`SweepOptions` holds every option a sweep script takes; an experiment with options of its own subclasses it
(a frozen dataclass whose fields follow the same conventions) and names the subclass in its
`SweepDefinition.options`. As with transformers' `HfArgumentParser`, the parser is read off the fields:

- the flag is `--` + the field name with `_` as `-` (metadata `flag` where it differs: `--set`);
- `bool`: a switch (`store_true`, default False);
- `int`, `float`, `str`, or any of them `| None`: one value of that type;
- `tuple[T, ...]`: one or more values (`nargs="+"`; given again, the values add up), or, with metadata
  `repeat=True`, an option given once per value (`action="append"`); `tuple[T, T]`: exactly two;
- `Literal[...]` (or metadata `choices`): one of those values;
- metadata `parse`: a function that reads the text (its `ValueError` names the bad value), `help`, `metavar`,
  `group`: options of one group are mutually exclusive;
- a number's bounds, metadata `gt`, `ge`, `lt`, `le`, or `setting`: the setting the option stands for, whose
  bounds are its own (every option that takes numbers gives one or the other; `sentsweep.sweep.config.option_checks`).

`parse_options(cls, argv)` returns the frozen instance: nothing changes an option after parsing; what the
launcher derives from them (the storage path, the GPUs a probe settles) lives in its own results.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from sentsweep.analysis.race_schedules import RACE_SCHEDULES
from sentsweep.analysis.racing import RACE_ALPHA, TEST_OPTIONS
from sentsweep.analysis.significance import CORRECTIONS
from sentsweep.errors import InputError
from sentsweep.sweep.config.option_groups import GROUP_OF, group_line, group_of, group_order
from sentsweep.terminal import HelpFormatter
from sentsweep.tracking.writer import DEFAULT_WAIT_S

GPUS_AUTO = "auto"
DEFAULT_OUTPUT_DIR = "sweep_outputs"
SCHEDULERS = ("fifo", "asha", "median")  # see sentsweep.sweep.execution.stage_run.make_scheduler
KEEP_MODELS = ("best", "all", "none")  # see sentsweep.sweep.execution.models_kept.KeptModels.policy


def option(help: str, default: Any = None, **metadata) -> Any:
    """A field of an options class: its `help`, its default and how the command line gives it (`metadata`: `flag`,
    `choices`, `parse`, `repeat`, `group`, the bounds `gt`/`ge`/`lt`/`le` or the `setting` it stands for; the
    module sentsweep.sweep.config.options states them). A mutable default is a `TypeError`: give a tuple.

    Examples:
        An experiment's own option, `--teachers A B` (one or more values):

        >>> from dataclasses import dataclass
        >>> @dataclass(frozen=True)
        ... class TeacherOptions(sentsweep.SweepOptions):
        ...     teachers: tuple[str, ...] | None = sentsweep.option("teacher cross-encoders")
        >>> TeacherOptions(teachers=("a", "b")).teachers
        ('a', 'b')
    """
    if isinstance(default, (list, dict, set)):
        raise TypeError("option defaults are immutable: give a tuple")
    return field(default=default, metadata={"help": help, **metadata})


def interval_seconds(text: str) -> float:
    """--progress-interval: a number of seconds > 0."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds > 0")
    return seconds


def wait_seconds(text: str) -> float:
    """--mlflow-wait: a number of seconds >= 0."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 <= seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds >= 0")
    return seconds


def gpus_per_trial_value(text: str) -> float | str:
    """--gpus-per-trial: a finite number, or 'auto'."""
    if text == GPUS_AUTO:
        return GPUS_AUTO
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is neither a number of GPUs nor {GPUS_AUTO!r}")
    return value


@dataclass(frozen=True, kw_only=True)
class SweepOptions:
    """Every option of a sweep script (the experiment's own are a subclass' fields), as parsed from the command
    line: a field per flag (`max_steps` for `--max-steps`), frozen once parsed.

    Examples:
        >>> options = sentsweep.SweepOptions(quick=True, seeds="2", max_steps=4)
        >>> options.quick, options.seeds, options.max_steps
        (True, '2', 4)
    """

    quick: bool = option("tiny random model + shipped demo data, minutes on a CPU", False)
    dry_run: bool = option("print the protocol card (grid, every setting with its source, seeds, trials, steps) "
                           "and exit without training", False)
    model: str | None = option("Hugging Face model name, local folder, or MLflow model URI (runs:/<run id>/model, "
                               "models:/<name>/<version>); required, but with --quick (default there: a tiny random "
                               "BERT)")
    corpus: str | None = option("training sentences, one per line (default: none, required where a method reads a "
                                "corpus; --quick without evaluation data: the shipped demo corpus)")
    sts_dir: str | None = option("folder with sts-dev.csv and sts-test.csv, the STS benchmark's files (default: "
                                 "none, required unless --sick-file or --hf-sts; --quick: the shipped demo pairs)",
                                 group="evaluation data")
    sick_file: str | None = option("SICK instead of --sts-dir: SICK.txt (its SemEval_set column: dev and test) or the "
                                   "SemEval 2014 files' folder (default: --sts-dir)", group="evaluation data")
    hf_sts: str | None = option("a Hugging Face data set (hub name or local path) with sentence1, sentence2 and score "
                                "columns, instead of --sts-dir (default: --sts-dir)",
                                group="evaluation data")
    eval_task: tuple[str, ...] = option(
        "also score every trial's dev-selected model on this task's test split, for example "
        "askubuntu=data-eval/askubuntu, mr=SentEval/data/downstream/MR (repeatable; the task names are listed "
        "in docs/evaluation.md; default: STS dev and test only)", (),
        repeat=True, metavar="NAME=PATH")
    select_on: str | None = option("select every trial's checkpoint on the dev split of this --eval-task task (for "
                                   "example mteb:STSBenchmark); its test split is only reported (default: none, "
                                   "the protocol's selection, see --dry-run)", metavar="TASK")
    mteb_results: str | None = option("a local copy of MTEB's results repository (results/<org>__<model>/<revision>/"
                                      "<Task>.json): the model's published MTEB scores, reproduction targets of the "
                                      "untrained model's scores on the --eval-task mteb: tasks (default: none, no "
                                      "such targets)", metavar="FOLDER")
    seeds: str | None = option("a count (5 = seeds 0..4) or a list (0,1,2) (default: the protocol's, see "
                               "--dry-run)")
    search: Literal["grid", "optuna"] = option("a grid, or configurations Optuna samples", "grid")
    num_configs: int = option("configs Optuna samples (each run per seed)", 8, ge=1)
    sampler: Literal["tpe", "noise-gp", "rung-gp"] = option(
        "what proposes --search optuna's configurations: tpe (Optuna's TPE on the seed means), noise-gp (a Gaussian "
        "process that takes each configuration's seed mean and standard error as observation and noise) or rung-gp "
        "(that process fitted at the largest evaluation step with enough configurations, and a configuration's "
        "seeds stopped at a rung only on their paired test); the GPs for a space with a continuous parameter "
        "(docs/sweeps.md)", "tpe")
    objective: tuple[str, ...] = option(
        "an objective NAME:max or NAME:min (repeat it, at least twice): a score (best_sts_dev), a compute total "
        "(gpu_hours, cpu_hours, wall_hours, wall_seconds) or a numeric setting (max_seq_length); every stage's "
        "table marks the Pareto set over them with the seeds' uncertainty, and --search optuna searches them "
        "together (docs/sweeps.md; default: none, the selection metric alone)", (), repeat=True,
        metavar="NAME:max|min")
    sample_sizes: tuple[int, ...] | None = option("training corpus sizes, an axis (default: the whole corpus)",
                                                 setting="sample_size")
    batch_sizes: tuple[int, ...] | None = option("batch sizes, an axis (default: the protocol's one)",
                                                setting="batch_size")
    assignments: tuple[str, ...] = option("settings of every trial, values as JSON: --set temperature=0.1 "
                                          "tie_decoder=false (default: the protocol's, see --dry-run)", (),
                                          flag="--set", metavar="KEY=VALUE")
    lr: float | None = option("learning rate of every trial (default: the protocol's)", setting="lr")
    max_steps: int | None = option("training steps of every trial (default: the protocol's)", setting="max_steps")
    eval_steps: int | None = option("steps between dev evaluations (default: the protocol's)", setting="eval_steps")
    max_seq_length: int | None = option("tokens per sentence (default: the protocol's)",
                                         setting="max_seq_length")
    tracking_uri: str | None = option("MLflow tracking URI (default: MLFLOW_TRACKING_URI or ./mlflow.db)")
    experiment: str | None = option("MLflow experiment name (default: the sweep's name)")
    output_dir: str = option("Ray results and the tiny model", DEFAULT_OUTPUT_DIR)
    storage_path: str | None = option("Ray Tune storage, shared by all nodes (NFS path or s3://...; default: "
                                      "SENTSWEEP_STORAGE_PATH, else OUTPUT_DIR/ray); its cache/ folder holds the "
                                      "preparation cache")
    no_cache: bool = option("compute every preparation stage (noised corpora, teachers' labels, ...) in every "
                            "trial, without the cache in STORAGE_PATH/cache", False)
    cpus_per_trial: float = option("CPUs per trial (a trial runs on one node, which must have them and its GPUs)",
                                   1.0, gt=0)
    gpus_per_trial: float | str = option(
        "GPUs per trial, a number or auto. A fraction shares a GPU (0.25: four trials per GPU), refused before "
        "launch when a probe of the trial's peak memory says they would not fit; auto: the probe chooses the "
        "largest fraction that fits", 0.0, parse=gpus_per_trial_value, ge=0)
    autoscaling: bool = option("the Ray cluster adds nodes on demand: a request no current node fits is not "
                               "refused (bound the wait with --pending-timeout)", False)
    pending_timeout: float | None = option("end the sweep (resumable) when trials wait this long PENDING with "
                                           "none running (default: wait as long as it takes)", metavar="SECONDS", gt=0)
    time_budget: float | None = option("end the sweep (resumable) once it has run this long, wall clock from when "
                                       "Ray is up; --resume gets its own (default: no limit)", metavar="SECONDS",
                                       gt=0)
    gpu_hours: float | None = option("end the sweep (resumable) once its running trials have held this many "
                                     "GPU-hours (each its --gpus-per-trial fraction); --resume gets its own "
                                     "(default: no limit)",
                                     metavar="HOURS", gt=0)
    max_failures: int = option("retries of a failed trial from its checkpoint (a lost worker, a storage error); a "
                               "failure a retry repeats (a nan loss, an error of the method's code) is not retried", 2,
                               ge=0)
    scheduler: str = option("early stopping on the dev metric", "fifo", choices=SCHEDULERS)
    resume: bool = option("continue the latest unfinished sweep of the experiment", False)
    race: bool = option("race the grid's configurations over the seeds: each starts with --race-initial-seeds "
                        "seeds, and only those not significantly worse than another (paired over the same seeds) "
                        "get the next seed, up to --seeds (--race-schedule)", False)
    race_schedule: str = option(
        "how a race runs: 'async' gives a configuration its next seed as soon as a slot is free, decides once "
        "every configuration racing has a seed's results, and holds the whole race's family-wise error at "
        "--race-alpha (Tukey's range); 'steps' is 'async' that also judges the first seeds at intermediate "
        "evaluations (--race-rungs), so a configuration clearly worse stops at a fraction of its training; "
        "'async-per-level' runs as 'async' with the round race's test and decisions; 'rounds' waits for each "
        "round's slowest trial and tests against the leader at --race-alpha per round "
        "(docs/analysis.md, racing)", "async", choices=RACE_SCHEDULES)
    race_rungs: tuple[float, ...] | None = option(
        "with --race-schedule steps: the fractions of a trial's steps at which the first seeds of every "
        "configuration are compared, the race's test at each, --race-alpha split over them and the seeds' levels "
        "(default 1/9 and 1/3: successive halving's rungs with a reduction factor of 3, the project's choice)",
        metavar="FRACTION", gt=0, lt=1)
    race_initial_seeds: int = option("seeds every configuration runs (--race); with --race-schedule steps, the "
                                     "seeds the rungs compare", 2, ge=2)
    race_budget: int | None = option("at most this many trials in a race (--race; default: no limit but "
                                           "configurations x seeds)", ge=1)
    race_test: str = option("the race's test: on the seed-noise variance pooled across configurations (two-way "
                            "ANOVA; Tukey's range in the async race, a t against the leader in rounds) or a paired "
                            "t per pair",
                            "pooled", choices=tuple(TEST_OPTIONS))
    race_tolerance: float = option(
        "differences of the selection metric smaller than this do not matter (an indifference zone, in the "
        "metric's units): a configuration is dropped once it cannot beat the leader by this much (--race); with "
        "it, --correction bonferroni protects a configuration better than the others by this much, holm drops it "
        "more often", 0.0, ge=0)
    race_alpha: float = option(
        "level of the race's eliminations, a compute decision (the tables' claims use --alpha): the async race "
        "drops any configuration of equal ones in at most this share of races; async-per-level and rounds test "
        "at it per level or round (the racing benchmark: docs/performance.md)", RACE_ALPHA, gt=0, lt=1)
    alpha: float = option("significance level of the tables' significance groups and reproduction intervals", 0.05,
                          gt=0, lt=1)
    correction: str = option("multiple-comparison correction of the race's tests and the tables' significance "
                             "groups", "holm", choices=CORRECTIONS)
    extend: bool = option("add trials to the latest sweep of the experiment (more --seeds, more grid values): "
                          "those whose configuration and seed finished there are not run again", False)
    plugin: tuple[str, ...] = option("a module (importable name) or .py file of one's own that registers "
                                     "objectives, methods or tasks (repeatable); it is sent to every Ray worker "
                                     "(docs/extending.md; default: none)", (), repeat=True, metavar="MODULE_OR_FILE")
    keep_models: str = option("log the dev-selected model of the best configuration's trials (one per seed), of "
                              "all trials, or of none to their MLflow runs (sentence-transformers flavour)", "best",
                              choices=KEEP_MODELS)
    mlflow_wait: float = option("how long the driver waits for an MLflow store it cannot reach, at each read or "
                                "write it cannot queue, before it stops, resumable, naming its queued writes (the "
                                "project's choice: 600)", DEFAULT_WAIT_S,
                                parse=wait_seconds, metavar="SECONDS", ge=0)
    verbose: bool = option("Ray Tune's, Ray's and MLflow's own output (trial tables, each trial's config and "
                           "result, INFO logs, start-up warnings) instead of one progress bar per stage", False)
    progress_interval: float = option("where the output is no terminal (a log file), print the progress line this "
                                      "often (the project's choice: a SLURM log gets two lines a minute)", 30.0,
                                      parse=interval_seconds, metavar="SECONDS", gt=0)

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """{field: default} of every option."""
        return {spec.name: spec.default for spec in dataclasses.fields(cls)}

    def given(self) -> set[str]:
        """The options whose value is not their default (what the command line changed)."""
        return {name for name, default in self.defaults().items() if getattr(self, name) != default}


Options = TypeVar("Options", bound=SweepOptions)


def flag_of(spec: dataclasses.Field) -> str:
    """An option's command-line flag: metadata `flag`, else `--` + its name with dashes."""
    return spec.metadata.get("flag") or "--" + spec.name.replace("_", "-")


def build_options_parser(cls: type[SweepOptions], prog: str | None = None, description: str | None = None,
                         epilog: str | None = None) -> argparse.ArgumentParser:
    """The argparse parser of an options class (see the module docstring): its options in the argument groups of
    `sentsweep.sweep.config.option_groups` (the experiment's own first), every default shown."""
    parser = argparse.ArgumentParser(prog=prog, description=description, epilog=epilog, usage="%(prog)s [options]",
                                     formatter_class=HelpFormatter)
    shared = {spec.name for spec in dataclasses.fields(SweepOptions)}
    sections = {title: parser.add_argument_group(title, group_line(title)) for title in group_order()}
    exclusive: dict[str, argparse._MutuallyExclusiveGroup] = {}
    hints = typing.get_type_hints(cls)
    rank = {title: position for position, title in enumerate(group_order())}
    listed = {name: position for position, name in enumerate(GROUP_OF)}
    for spec in sorted(dataclasses.fields(cls), key=lambda spec: (rank[group_of(spec.name, shared)],
                                                                  listed.get(spec.name, -1))):
        section = sections[group_of(spec.name, shared)]
        group = spec.metadata.get("group")
        if group is not None and group not in exclusive:
            exclusive[group] = section.add_mutually_exclusive_group()
        target = section if group is None else exclusive[group]
        target.add_argument(flag_of(spec), dest=spec.name, **_argument_of(spec, hints[spec.name]))
    return parser


def parse_options(cls: type[Options], argv=None, prog: str | None = None, description: str | None = None,
                  epilog: str | None = None, exit_on_error: bool = True) -> Options:
    """The frozen options of a command line (argparse exits with its usage message on a bad one; without
    `exit_on_error`, argparse's message is an `InputError`)."""
    parser = build_options_parser(cls, prog, description, epilog)
    if not exit_on_error:
        parser.error = _raise_input_error
    namespace = parser.parse_args(argv)
    return cls(**{name: tuple(value) if isinstance(value, list) else value
                  for name, value in vars(namespace).items()})


def _raise_input_error(message: str):
    raise InputError(message)


def default_text(default: Any) -> str | None:
    """An option's default as --help shows it; None where there is none to show (a switch, no value)."""
    if default is None or isinstance(default, bool) or default == ():
        return None
    return " ".join(map(str, default)) if isinstance(default, tuple) else str(default)


def _argument_of(spec: dataclasses.Field, hint) -> dict:
    """argparse's keyword arguments for one field; its help ends with its default, where it has one to show and
    does not say it in words."""
    metadata = spec.metadata
    help_text, shown = metadata["help"], default_text(spec.default)
    if shown is not None and "default" not in help_text:
        help_text += f" (default: {shown})"
    arguments = {"help": help_text.replace("%", "%%"), "default": spec.default}
    if "metavar" in metadata:
        arguments["metavar"] = metadata["metavar"]
    kind = _without_none(hint)
    if kind is bool:
        return arguments | {"action": "store_true"}
    if typing.get_origin(kind) is tuple:
        items = typing.get_args(kind)
        arguments["type"] = _reader(items[0], metadata)
        if metadata.get("repeat"):
            return arguments | {"action": "append", "default": []}  # argparse appends to a copy of a list
        if items[-1] is Ellipsis:  # given twice, the values add up (--set a=1 --set b=2), in a list argparse extends
            default = list(spec.default) if isinstance(spec.default, tuple) else spec.default
            return arguments | {"nargs": "+", "action": "extend", "default": default}
        return arguments | {"nargs": len(items)}
    if typing.get_origin(kind) is Literal:
        return arguments | {"choices": typing.get_args(kind)}
    if "choices" in metadata:
        arguments["choices"] = metadata["choices"]
    return arguments | {"type": _reader(kind, metadata)}


def _without_none(hint):
    """`T | None` as T; a union of several types is read by the field's `parse`."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        kinds = [kind for kind in typing.get_args(hint) if kind is not type(None)]
        return kinds[0] if len(kinds) == 1 else hint
    return hint


def _reader(kind, metadata) -> typing.Callable[[str], Any]:
    """The function that reads one value's text (argparse reports its ValueError with the value)."""
    reader = metadata.get("parse", kind)
    if not callable(reader) or typing.get_origin(reader) is not None:
        raise TypeError(f"no reader for option type {kind!r}: give metadata parse=...")
    return reader


def parse_assignments(assignments: list[str]) -> dict:
    """KEY=VALUE strings as a dict, each VALUE read as JSON when it parses (numbers, true/false) else as text; a
    key given twice is refused, naming both."""
    parsed, given = {}, {}
    for assignment in assignments:
        key, separator, value = assignment.partition("=")
        if not separator or not key:
            raise InputError(f"--set {assignment!r}: expected KEY=VALUE")
        if key in given:
            raise InputError(f"--set {given[key]} {assignment}: {key} is given twice; give it once")
        given[key] = assignment
        try:
            parsed[key] = json.loads(value)
        except json.JSONDecodeError:
            parsed[key] = value
    return parsed
