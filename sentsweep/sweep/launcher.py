"""Run a sweep: parse options, check every input, then launch Ray Tune with MLflow tracking and print tables.

Each script in sweeps/ describes its experiment with a `SweepDefinition` and calls `run_sweep`. Everything
that can be wrong with the input (unknown method or pooling, a ratio outside [0, 1), a missing or malformed
data file, an empty corpus, an unreachable tracking server) fails here, before Ray starts.

A sweep has one stage (a grid or an Optuna search over its axes) or several run one after the other: the
greedy search of the TSDAE paper (appendix A), where each stage fixes the best value of its axes on dev
(mean over seeds of the selection metric) before the next stage starts.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from sentsweep.analysis.runs import fetch_trial_runs
from sentsweep.analysis.tables import build_table, to_markdown
from sentsweep.data import read_corpus, read_scored_pairs, sts_benchmark_files
from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR
from sentsweep.errors import InputError
from sentsweep.models import build_tiny_model, check_model_source, load_sentence_model
from sentsweep.random_seeds import parse_seeds
from sentsweep.references import Reference
from sentsweep.search_spaces.param_spaces import grid_param_space, sampled_param_space, values_to_validate
from sentsweep.tasks import build_tasks, main_metric, parse_task_specs
from sentsweep.tasks.sts import StsEvaluator
from sentsweep.tracking.callback import SweepTracker
from sentsweep.tracking.store import check_tracking_reachable, resolve_tracking_uri
from sentsweep.trainables.catalog import check_keys, get_method, train, validate_config
from sentsweep.trainables.settings import BOOKKEEPING_KEYS, EvaluationSettings, TrainingSettings

DEFAULT_OUTPUT_DIR = Path("sweep_outputs")
TINY_MODEL_PENDING = "<the tiny random model, built once every check has passed>"
SCHEDULERS = ("fifo", "asha", "median")


@dataclass
class Stage:
    """One stage of a sweep: its name and the axes it sweeps, {param: values} (grid) or {param: domain}."""

    name: str
    axes: Callable[[argparse.Namespace], dict]


@dataclass
class SweepDefinition:
    """An experiment: its name, fixed settings (full and --quick), and its stages.

    `sampled_axes(args)`, where given, returns {param: Ray Tune domain} for `--search optuna` (one stage).
    """

    name: str
    description: str
    constants: dict
    quick_constants: dict
    stages: list[Stage]
    sampled_axes: Callable[[argparse.Namespace], dict] | None = None
    add_arguments: Callable[[argparse.ArgumentParser], None] = lambda parser: None
    quick_setup: Callable[[dict, Path], dict] | None = None  # --quick: extra tiny models, as config entries
    trains_on_gold_pairs: bool = False  # supervised: train_file = the labelled pairs beside the dev/test data
    # Runs the stages itself, e.g. a search whose next stage depends on the last: (runner, tracker, constants, stages)
    driver: Callable | None = None
    reference: Reference | None = None  # the work whose experiment this re-runs (None: the project's own)
    selection_metric: str = "best_sts_dev"
    table_metrics: list[str] = field(default_factory=lambda: ["sts_test_at_best_dev", "best_sts_dev"])


def build_parser(definition: SweepDefinition, prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=definition.description)
    parser.add_argument("--quick", action="store_true", help="tiny random model + shipped demo data, minutes on a CPU")
    parser.add_argument("--model", help="Hugging Face model name or local folder (default with --quick: a tiny BERT)")
    parser.add_argument("--corpus", help="training sentences, one per line (default: the shipped demo corpus)")
    data = parser.add_mutually_exclusive_group()
    data.add_argument("--sts-dir", help="folder with sts-dev.csv and sts-test.csv (STS benchmark format)")
    data.add_argument("--sick-file", help="SICK file; its SemEval_set column gives dev (TRIAL) and test")
    data.add_argument("--hf-sts", help="`datasets` hub name or local path with sentence1/sentence2/score")
    parser.add_argument("--eval-task", action="append", default=[], metavar="NAME=PATH",
                        help="also score every trial's dev-selected model on this task's test split, for example "
                        "askubuntu=data-eval/askubuntu, sts12=SentEval/data/downstream/STS/STS12-en-test, "
                        "mr=SentEval/data/downstream/MR (repeatable; names: sentsweep.tasks.task_names())")
    parser.add_argument("--seeds", default=None, help="count (5 = seeds 0..4) or list (0,1,2)")
    parser.add_argument("--search", choices=["grid", "optuna"], default="grid")
    parser.add_argument("--num-configs", type=int, default=8, help="configs Optuna samples (each run per seed)")
    parser.add_argument("--sample-sizes", type=int, nargs="+", help="training corpus sizes, an axis")
    parser.add_argument("--batch-sizes", type=int, nargs="+", help="batch sizes, an axis")
    parser.add_argument("--set", nargs="+", default=[], metavar="KEY=VALUE",
                        help="override fixed settings, values as JSON: --set temperature=0.1 tie_decoder=false")
    parser.add_argument("--lr", type=float)
    parser.add_argument("--max-steps", type=int)
    parser.add_argument("--eval-steps", type=int)
    parser.add_argument("--max-seq-length", type=int)
    parser.add_argument("--tracking-uri", help="MLflow tracking URI (default: MLFLOW_TRACKING_URI or ./mlflow.db)")
    parser.add_argument("--experiment", help="MLflow experiment name (default: the sweep's name)")
    parser.add_argument("--output-dir", default=str(DEFAULT_OUTPUT_DIR), help="Ray results and the tiny model")
    parser.add_argument("--storage-path", help="Ray Tune storage, shared by all nodes (NFS path or s3://...; "
                        "default: SENTSWEEP_STORAGE_PATH, else OUTPUT_DIR/ray)")
    parser.add_argument("--cpus-per-trial", type=float, default=1.0)
    parser.add_argument("--gpus-per-trial", type=float, default=0.0, help="fractions share a GPU, e.g. 0.25")
    parser.add_argument("--max-failures", type=int, default=2, help="retries of a failed trial from its checkpoint")
    parser.add_argument("--scheduler", choices=SCHEDULERS, default="fifo", help="early stopping on the dev metric")
    parser.add_argument("--resume", action="store_true", help="continue the latest unfinished sweep of the experiment")
    definition.add_arguments(parser)
    return parser


def parse_assignments(assignments: list[str]) -> dict:
    """KEY=VALUE strings as a dict, each VALUE read as JSON when it parses (numbers, true/false) else as text."""
    parsed = {}
    for assignment in assignments:
        key, separator, value = assignment.partition("=")
        if not separator or not key:
            raise InputError(f"--set {assignment!r}: expected KEY=VALUE")
        try:
            parsed[key] = json.loads(value)
        except json.JSONDecodeError:
            parsed[key] = value
    return parsed


def resolve_settings(definition: SweepDefinition, args: argparse.Namespace) -> tuple[dict, list[int]]:
    """The trials' fixed config (absolute paths, checked files) and the seeds; raises `InputError` on bad input."""
    constants = dict(definition.constants)
    if args.quick:
        constants.update(definition.quick_constants)
    for option in ("lr", "max_steps", "eval_steps", "max_seq_length"):
        if getattr(args, option) is not None:
            constants[option] = getattr(args, option)
    overrides = parse_assignments(args.set)
    check_keys(overrides)  # a misspelled key fails here, with the closest setting suggested
    constants.update(overrides)
    if args.cpus_per_trial <= 0:
        raise InputError(f"cpus per trial {args.cpus_per_trial!r} must be positive")
    if args.gpus_per_trial < 0:
        raise InputError(f"gpus per trial {args.gpus_per_trial!r} must be >= 0")

    corpus = Path(args.corpus or CORPUS_FILE).resolve()
    corpus_size = len(read_corpus(corpus))
    for size in args.sample_sizes or []:
        if size > corpus_size:
            raise InputError(f"sample size {size} exceeds the corpus's {corpus_size} sentences ({corpus})")
    constants["corpus"] = str(corpus)
    if args.sick_file:
        sick = str(Path(args.sick_file).resolve())
        constants.update(eval_format="sick", dev_file=sick, test_file=sick)
    elif args.hf_sts:
        constants.update(eval_format="hf", dev_file=args.hf_sts, test_file=args.hf_sts)
    else:
        files = sts_benchmark_files(args.sts_dir or DEMO_DIR)
        constants.update(eval_format="stsb", dev_file=str(files["dev"].resolve()),
                         test_file=str(files["test"].resolve()))
    read_scored_pairs(constants["dev_file"], constants["eval_format"], "dev")
    read_scored_pairs(constants["test_file"], constants["eval_format"], "test")
    if definition.trains_on_gold_pairs and "train_file" not in constants:
        constants["train_file"] = gold_train_file(args)
    if args.eval_task:
        specs = {name: str(Path(path).resolve()) for name, path in parse_task_specs(args.eval_task).items()}
        build_tasks(specs)  # reads and checks every task file now, before any training
        constants["eval_tasks"] = specs

    if args.model:
        constants["model"] = check_model_source(args.model)
    elif not args.quick:
        raise InputError("--model is required without --quick (a hub name or a local folder)")
    seeds = parse_seeds(args.seeds or str(constants.pop("seeds")))
    constants.pop("seeds", None)
    return constants, seeds


def gold_train_file(args: argparse.Namespace) -> str:
    """The labelled training pairs beside the evaluation data: sts-train.csv, SICK's TRAIN rows, the train split."""
    if args.sick_file:
        path = str(Path(args.sick_file).resolve())
        read_scored_pairs(path, "sick", "train")
        return path
    if args.hf_sts:
        return args.hf_sts
    train = sts_benchmark_files(args.sts_dir or DEMO_DIR)["train"]
    read_scored_pairs(train)  # a missing or malformed file fails here, naming itself
    return str(train.resolve())


def stage_axes(definition: SweepDefinition, args: argparse.Namespace) -> list[tuple[str, dict]]:
    """[(stage name, axes)]: the definition's stages, or its Optuna ranges; plus sample/batch size axes."""
    if args.search == "optuna":
        if definition.sampled_axes is None:
            raise InputError(f"sweep {definition.name!r} has no Optuna search space; use --search grid")
        stages = [("optuna", definition.sampled_axes(args))]
    else:
        stages = [(stage.name, stage.axes(args)) for stage in definition.stages]
    for name, values in (("sample_size", args.sample_sizes), ("batch_size", args.batch_sizes)):
        if values:
            for _, axes in stages:
                axes[name] = list(values)
    return stages


def validate_axes(constants: dict, stages: list[tuple[str, dict]]) -> set[str]:
    """Check every value every axis can take as its method's typed settings, before anything runs; returns
    the names of the sweep's methods."""
    methods = set()
    for _, axes in stages:
        first_point = constants | {name: values_to_validate(axis)[0] for name, axis in axes.items()}
        first_point.setdefault("model", TINY_MODEL_PENDING)
        for name, axis in axes.items():
            for value in values_to_validate(axis):
                methods.add(validate_config(first_point | {name: value}).method)
        if not axes:
            methods.add(validate_config(first_point).method)
    return methods


def check_overrides_used(overrides: dict, methods: set[str]) -> None:
    """Every --set key must be a setting of at least one method the sweep runs (else it would do nothing)."""
    used = set(BOOKKEEPING_KEYS).union(*(get_method(name).setting_names() for name in methods))
    for key in overrides:
        if key not in used:
            raise InputError(f"setting {key!r} is not used by the method(s) of this sweep: "
                             f"{', '.join(sorted(methods))}")


def _tiny_model(output_dir: Path, corpus: Path) -> Path:
    folder = (output_dir / "tiny-bert").resolve()
    if not (folder / "config.json").is_file():
        build_tiny_model(folder, read_corpus(corpus) + read_corpus_pairs_text())
    return folder


def read_corpus_pairs_text() -> list[str]:
    """The sentences of the shipped demo pairs, so the tiny model's vocabulary covers evaluation text."""
    pairs = [read_scored_pairs(DEMO_DIR / f"sts-{split}.csv") for split in ("dev", "test")]
    return [sentence for p in pairs for sentence in p.sentences1 + p.sentences2]


def baseline_scores(constants: dict) -> dict:
    """STS dev/test scores of the untrained model as released (its own pooling)."""
    model = load_sentence_model(constants["model"], pooling=None, max_seq_length=constants["max_seq_length"])
    fmt = constants["eval_format"]
    return {
        f"untrained_sts_{split}": StsEvaluator(read_scored_pairs(constants[f"{split}_file"], fmt, split))(model)
        for split in ("dev", "test")
    }


def prepare_quick_models(definition: SweepDefinition, constants: dict, args: argparse.Namespace) -> None:
    """Without --model, the tiny random BERT; then whatever else the sweep's --quick mode needs (once)."""
    if "model" not in constants:
        constants["model"] = str(_tiny_model(Path(args.output_dir), Path(constants["corpus"])))
    if args.quick and definition.quick_setup is not None:
        constants.update(definition.quick_setup(constants, Path(args.output_dir)))


def run_sweep(definition: SweepDefinition, argv=None, prog: str | None = None) -> int:
    """Entry point of a sweep script; returns the process exit code."""
    args = build_parser(definition, prog).parse_args(argv)
    try:
        return _run(definition, args)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def _run(definition: SweepDefinition, args: argparse.Namespace) -> int:
    constants, seeds = resolve_settings(definition, args)
    stages = stage_axes(definition, args)
    EvaluationSettings.from_config(constants)  # the shared settings need no model: checked before any is built
    TrainingSettings.from_config({"model": TINY_MODEL_PENDING} | constants)
    if args.quick and definition.quick_setup is not None:
        prepare_quick_models(definition, constants, args)  # the checks below need the tiny models it builds
    check_overrides_used(parse_assignments(args.set), validate_axes(constants, stages))
    tracking_uri = resolve_tracking_uri(args.tracking_uri)
    check_tracking_reachable(tracking_uri)
    prepare_quick_models(definition, constants, args)  # --quick without --model: every check passed, build now

    baseline = baseline_scores(constants)
    print(
        f"untrained model {constants['model']}: STS dev {baseline['untrained_sts_dev']:.2f}, "
        f"test {baseline['untrained_sts_test']:.2f} (Spearman x 100 of cosine)"
    )
    return SweepRunner(definition, args, tracking_uri, seeds).run(constants, stages, baseline)


class SweepRunner:
    """Runs the stages of one sweep on Ray Tune, logging to one MLflow parent run, and prints each table."""

    def __init__(self, definition: SweepDefinition, args: argparse.Namespace, tracking_uri: str, seeds: list[int]):
        self.definition = definition
        self.args = args
        self.tracking_uri = tracking_uri
        self.seeds = seeds
        self.task_metrics: list[str] = []  # main metrics of --eval-task tasks, shown in the tables
        self.experiment = args.experiment or definition.name
        self.storage_path = (
            args.storage_path or os.environ.get("SENTSWEEP_STORAGE_PATH") or str(Path(args.output_dir, "ray").resolve())
        )

    def run(self, constants: dict, stages: list[tuple[str, dict]], baseline: dict) -> int:
        """Run every stage (or the definition's own `driver`); returns the exit code (3 when results could
        only be queued, not written)."""
        import ray

        tracker = SweepTracker(self.tracking_uri, self.experiment, self.definition.name,
                               pending_dir=self.args.output_dir, resume=self.args.resume)
        tracker.log_sweep_metrics(baseline)
        ray.init(ignore_reinit_error=True, include_dashboard=False, log_to_driver=False)
        self.task_metrics = [main_metric(name) for name in constants.get("eval_tasks", {})]
        try:
            if self.definition.driver is not None:
                self.definition.driver(self, tracker, constants, stages)
            else:
                for index, (stage_name, axes) in enumerate(stages):
                    title = (f"stage {index + 1}/{len(stages)} '{stage_name}'" if len(stages) > 1
                             else self.definition.name)
                    table = self.run_stage(tracker, index, title, constants | (
                        {"stage": stage_name} if len(stages) > 1 else {}), axes,
                        stage_name if len(stages) > 1 else None)
                    if len(stages) > 1:
                        best = self.best_values(table, axes)
                        print(f"best on dev ({self.definition.selection_metric}, mean over seeds): {best}")
                        constants = constants | best
        except StageFailed as failure:
            print(f"error: {failure}", file=sys.stderr)
            return failure.exit_code
        tracker.finish()
        return 0

    def run_stage(self, tracker, index: int, title: str, constants: dict, axes: dict, stage: str | None):
        """Fit one stage, write its results, print its table and return it
        (`sentsweep.analysis.tables.ComparisonTable`)."""
        self._fit(tracker, f"{self.definition.name}-{tracker.parent_run_id[:8]}-{index}", constants, axes)
        if not tracker.writer.flush(attempts=6, wait_s=5.0):
            raise StageFailed(
                f"MLflow at {self.tracking_uri} is unreachable; {tracker.writer.pending} results are saved in "
                f"{tracker.writer.pending_file}; write them later with\n"
                f"  python -m sentsweep.tracking.writer {tracker.writer.pending_file}", exit_code=3)
        runs = fetch_trial_runs(self.tracking_uri, self.experiment, tracker.parent_run_id)
        if stage is not None and len(runs):
            runs = runs[runs["params.stage"] == stage]
        if not len(runs) or not (runs["status"] == "FINISHED").any():
            raise StageFailed(no_trial_finished(runs), exit_code=1)
        table = self._table(runs, axes)
        print(f"\n{title}: mean ± std over seeds (MLflow experiment {self.experiment!r}, "
              f"sweep run {tracker.parent_run_id})\n\n{to_markdown(table)}")
        if self.definition.selection_metric not in table.best:
            raise StageFailed("no trial of this stage finished; see the failure_reason tags in MLflow", exit_code=1)
        return table

    def best_values(self, table, axes: dict) -> dict:
        """{axis: value} of the table's best row by the selection metric (mean over seeds, on dev)."""
        group_by = list(axes) or ["method"]
        return dict(zip(group_by, map(_python_value, table.best[self.definition.selection_metric])))

    def _fit(self, tracker, run_name: str, constants: dict, axes: dict) -> None:
        from ray import tune
        from ray.tune.search import Repeater
        from ray.tune.search.optuna import OptunaSearch

        metric = self.definition.selection_metric
        scheduler = make_scheduler(self.args.scheduler, metric)
        if self.args.search == "grid":
            param_space = grid_param_space(constants, axes, self.seeds)
            tune_config = tune.TuneConfig(num_samples=1, scheduler=scheduler, reuse_actors=True)
        else:
            param_space = sampled_param_space(constants, axes, self.seeds)
            searcher = Repeater(OptunaSearch(metric=metric, mode="max", seed=0), repeat=len(self.seeds))
            tune_config = tune.TuneConfig(
                search_alg=searcher, num_samples=self.args.num_configs * len(self.seeds), scheduler=scheduler,
                reuse_actors=True,
            )
        trainable = tune.with_resources(
            train, {"cpu": self.args.cpus_per_trial, "gpu": self.args.gpus_per_trial}
        )
        experiment_path = f"{self.storage_path.rstrip('/')}/{run_name}"
        if self.args.resume and tune.Tuner.can_restore(experiment_path):
            tuner = tune.Tuner.restore(
                experiment_path, trainable, resume_errored=True, param_space=param_space
            )
        else:
            tuner = tune.Tuner(
                trainable,
                param_space=param_space,
                tune_config=tune_config,
                run_config=tune.RunConfig(
                    name=run_name,
                    storage_path=self.storage_path,
                    callbacks=[tracker],
                    failure_config=tune.FailureConfig(max_failures=self.args.max_failures),
                    checkpoint_config=tune.CheckpointConfig(num_to_keep=1),
                    verbose=1,
                ),
            )
        tuner.fit()

    def _table(self, runs, axes: dict):
        """The stage's comparison table of its trial `runs`: its axes as rows, the table metrics as columns."""
        group_by = list(axes) or ["method"]  # a sweep over seeds alone still gets its one row
        metrics = list(dict.fromkeys(self.definition.table_metrics + [self.definition.selection_metric]
                                     + self.task_metrics))
        return build_table(runs, group_by, metrics)


def no_trial_finished(runs) -> str:
    """What to say when no trial of a stage finished: how many ended how, and their failure reasons (the last
    line of each distinct traceback)."""
    if not len(runs):
        return "no trial of this stage reported anything to MLflow"
    counts = runs["status"].value_counts().to_dict()
    reasons = [reason.strip().splitlines()[-1] for reason in runs["failure_reason"].dropna().unique() if reason.strip()]
    summary = ", ".join(f"{count} {status.lower()}" for status, count in sorted(counts.items()))
    listed = "".join(f"\n  {reason}" for reason in dict.fromkeys(reasons))
    return f"no trial of this stage finished ({summary}); failure reason(s):{listed or ' none recorded'}"


class StageFailed(Exception):
    """A stage whose results cannot be used: nothing finished, or MLflow unreachable (`exit_code`)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _python_value(value):
    """A table cell back as the plain Python value a config holds (numpy scalars and 'True' strings undone)."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return {"True": True, "False": False}.get(value, value) if isinstance(value, str) else value


def make_scheduler(name: str, metric: str):
    """Ray Tune's early-stopping scheduler by name, on the dev metric (None for fifo: every trial runs out)."""
    from ray.tune.schedulers import ASHAScheduler, MedianStoppingRule

    if name == "asha":
        return ASHAScheduler(metric=metric, mode="max", grace_period=2, reduction_factor=2)
    if name == "median":
        return MedianStoppingRule(metric=metric, mode="max", grace_period=2, min_samples_required=2)
    return None
