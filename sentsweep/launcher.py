"""Run a sweep: parse options, check every input, then launch Ray Tune with MLflow tracking and print the table.

Each script in sweeps/ describes its experiment with a `SweepDefinition` and calls `run_sweep`. Everything
that can be wrong with the input (unknown method or pooling, a ratio outside [0, 1), a missing or malformed
data file, an empty corpus, an unreachable tracking server) fails here, before Ray starts.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from sentsweep.data import read_corpus, read_scored_pairs, sts_benchmark_files
from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR
from sentsweep.errors import InputError
from sentsweep.models import check_model_source

DEFAULT_OUTPUT_DIR = Path("sweep_outputs")


@dataclass
class SweepDefinition:
    """An experiment: its name, method, fixed settings, and how its axes come from the options.

    grid_axes(args) and sampled_axes(args) return {param: values} and {param: Ray Tune domain}.
    """

    name: str
    method: str
    description: str
    constants: dict
    quick_constants: dict
    grid_axes: Callable[[argparse.Namespace], dict]
    sampled_axes: Callable[[argparse.Namespace], dict]
    add_arguments: Callable[[argparse.ArgumentParser], None] = lambda parser: None
    selection_metric: str = "best_sts_dev"
    table_metrics: list[str] = field(default_factory=lambda: ["sts_test_at_best_dev", "best_sts_dev"])


def build_parser(definition: SweepDefinition) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=definition.description)
    parser.add_argument("--quick", action="store_true", help="tiny random model + shipped demo data, minutes on a CPU")
    parser.add_argument("--model", help="Hugging Face model name or local folder (default with --quick: a tiny BERT)")
    parser.add_argument("--corpus", help="training sentences, one per line (default: the shipped demo corpus)")
    data = parser.add_mutually_exclusive_group()
    data.add_argument("--sts-dir", help="folder with sts-dev.csv and sts-test.csv (STS benchmark format)")
    data.add_argument("--sick-file", help="SICK file; its SemEval_set column gives dev (TRIAL) and test")
    data.add_argument("--hf-sts", help="`datasets` hub name or local path with sentence1/sentence2/score")
    parser.add_argument("--seeds", default=None, help="count (5 = seeds 0..4) or list (0,1,2)")
    parser.add_argument("--search", choices=["grid", "optuna"], default="grid")
    parser.add_argument("--num-configs", type=int, default=8, help="configs Optuna samples (each run per seed)")
    parser.add_argument("--sample-sizes", type=int, nargs="+", help="training corpus sizes, an axis")
    parser.add_argument("--batch-sizes", type=int, nargs="+", help="batch sizes, an axis")
    parser.add_argument("--lr", type=float)
    parser.add_argument("--max-steps", type=int)
    parser.add_argument("--eval-steps", type=int)
    parser.add_argument("--max-seq-length", type=int)
    parser.add_argument("--tracking-uri", help="MLflow tracking URI (default: MLFLOW_TRACKING_URI or ./mlflow.db)")
    parser.add_argument("--experiment", help="MLflow experiment name (default: the sweep's name)")
    parser.add_argument("--output-dir", default=str(DEFAULT_OUTPUT_DIR), help="Ray results and the tiny model")
    parser.add_argument("--cpus-per-trial", type=float, default=1.0)
    parser.add_argument("--gpus-per-trial", type=float, default=0.0)
    parser.add_argument("--max-failures", type=int, default=2, help="retries of a failed trial from its checkpoint")
    definition.add_arguments(parser)
    return parser


def _positive(values, name: str) -> None:
    for value in values or []:
        if value <= 0:
            raise InputError(f"{name} {value!r} must be positive")


def resolve_settings(definition: SweepDefinition, args: argparse.Namespace) -> tuple[dict, list[int]]:
    """The trials' fixed config (absolute paths, checked files) and the seeds; raises `InputError` on bad input."""
    from search_spaces.seeds import parse_seeds

    constants = dict(definition.constants)
    if args.quick:
        constants.update(definition.quick_constants)
    constants["method"] = definition.method
    for option in ("lr", "max_steps", "eval_steps", "max_seq_length"):
        if getattr(args, option) is not None:
            constants[option] = getattr(args, option)
    _positive([constants["max_steps"], constants["eval_steps"], constants["batch_size"]], "steps/batch size")
    _positive(args.sample_sizes, "sample size")
    _positive(args.batch_sizes, "batch size")

    corpus = Path(args.corpus or CORPUS_FILE).resolve()
    read_corpus(corpus)
    constants["corpus"] = str(corpus)
    if args.sick_file:
        constants.update(eval_format="sick", dev_file=str(Path(args.sick_file).resolve()))
        constants["test_file"] = constants["dev_file"]
    elif args.hf_sts:
        constants.update(eval_format="hf", dev_file=args.hf_sts, test_file=args.hf_sts)
    else:
        files = sts_benchmark_files(args.sts_dir or DEMO_DIR)
        constants.update(eval_format="stsb", dev_file=str(files["dev"].resolve()), test_file=str(files["test"].resolve()))
    read_scored_pairs(constants["dev_file"], constants["eval_format"], "dev")
    read_scored_pairs(constants["test_file"], constants["eval_format"], "test")

    if args.model:
        constants["model"] = check_model_source(args.model)
    elif not args.quick:
        raise InputError("--model is required without --quick (a hub name or a local folder)")
    seeds = parse_seeds(args.seeds or str(constants.pop("seeds")))
    constants.pop("seeds", None)
    return constants, seeds


def _tiny_model(output_dir: Path, corpus: Path) -> Path:
    from sentsweep.models import build_tiny_model

    folder = (output_dir / "tiny-bert").resolve()
    if not (folder / "config.json").is_file():
        build_tiny_model(folder, read_corpus(corpus) + read_corpus_pairs_text())
    return folder


def read_corpus_pairs_text() -> list[str]:
    """The sentences of the shipped demo pairs, so the tiny model's vocabulary covers evaluation text."""
    pairs = [read_scored_pairs(DEMO_DIR / f"sts-{split}.csv") for split in ("dev", "test")]
    return [sentence for p in pairs for sentence in p.sentences1 + p.sentences2]


def build_axes(definition: SweepDefinition, args: argparse.Namespace) -> dict:
    """The swept params: the experiment's own, plus sample size and batch size when given several values."""
    axes = definition.grid_axes(args) if args.search == "grid" else definition.sampled_axes(args)
    for name, values in (("sample_size", args.sample_sizes), ("batch_size", args.batch_sizes)):
        if values:
            axes[name] = list(values)
    return axes


def validate_axes(definition: SweepDefinition, constants: dict, axes: dict) -> None:
    """Check every value an axis can take with the method's own validation, before anything runs."""
    from search_spaces.spaces import values_to_validate
    from trainables import get_method

    _, validate_config = get_method(definition.method)
    first_point = constants | {name: values_to_validate(axis)[0] for name, axis in axes.items()}
    for name, axis in axes.items():
        for value in values_to_validate(axis):
            validate_config(first_point | {name: value})


def baseline_scores(constants: dict) -> dict:
    """STS dev/test scores of the untrained model as released (its own pooling)."""
    from sentsweep.evaluation import StsEvaluator
    from sentsweep.models import load_sentence_model

    model = load_sentence_model(constants["model"], pooling=None, max_seq_length=constants["max_seq_length"])
    fmt = constants["eval_format"]
    return {
        f"untrained_sts_{split}": StsEvaluator(read_scored_pairs(constants[f"{split}_file"], fmt, split))(model)
        for split in ("dev", "test")
    }


def run_sweep(definition: SweepDefinition, argv=None) -> int:
    """Entry point of a sweep script; returns the process exit code."""
    args = build_parser(definition).parse_args(argv)
    try:
        return _run(definition, args)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def _run(definition: SweepDefinition, args: argparse.Namespace) -> int:
    from sentsweep.tracking import check_tracking_reachable, resolve_tracking_uri
    from trainables import get_method

    trainable, _ = get_method(definition.method)
    constants, seeds = resolve_settings(definition, args)
    axes = build_axes(definition, args)
    validate_axes(definition, constants, axes)
    tracking_uri = resolve_tracking_uri(args.tracking_uri)
    check_tracking_reachable(tracking_uri)
    if "model" not in constants:  # --quick without --model: every check passed, now build the tiny model
        constants["model"] = str(_tiny_model(Path(args.output_dir), Path(constants["corpus"])))

    baseline = baseline_scores(constants)
    print(
        f"untrained model {constants['model']}: STS dev {baseline['untrained_sts_dev']:.2f}, "
        f"test {baseline['untrained_sts_test']:.2f} (Spearman x 100 of cosine)"
    )
    results = launch(definition, args, trainable, constants, axes, seeds, tracking_uri, baseline)
    print(results)
    return 0


def launch(definition, args, trainable, constants, axes, seeds, tracking_uri, baseline) -> str:
    """Run the trials on Ray (joining a running cluster if there is one) and return the results table."""
    import ray
    from ray import tune
    from ray.tune.search import Repeater
    from ray.tune.search.optuna import OptunaSearch

    from analysis.runs import fetch_trial_runs
    from analysis.tables import aggregate, to_markdown
    from search_spaces.spaces import grid_param_space, sampled_param_space
    from sentsweep.tracking import SweepTracker

    experiment = args.experiment or definition.name
    tracker = SweepTracker(tracking_uri, experiment, definition.name, definition.method)
    tracker.log_sweep_metrics(baseline)
    if args.search == "grid":
        param_space = grid_param_space(constants, axes, seeds)
        tune_config = tune.TuneConfig(num_samples=1)
    else:
        param_space = sampled_param_space(constants, axes, seeds)
        searcher = Repeater(
            OptunaSearch(metric=definition.selection_metric, mode="max", seed=0), repeat=len(seeds), set_index=True
        )
        tune_config = tune.TuneConfig(search_alg=searcher, num_samples=args.num_configs * len(seeds))
    ray.init(ignore_reinit_error=True, include_dashboard=False, log_to_driver=False)
    resources = {"cpu": args.cpus_per_trial, "gpu": args.gpus_per_trial}
    tuner = tune.Tuner(
        tune.with_resources(trainable, resources),
        param_space=param_space,
        tune_config=tune_config,
        run_config=tune.RunConfig(
            name=f"{definition.name}-{tracker.parent_run_id[:8]}",
            storage_path=str(Path(args.output_dir, "ray").resolve()),
            callbacks=[tracker],
            failure_config=tune.FailureConfig(max_failures=args.max_failures),
            checkpoint_config=tune.CheckpointConfig(num_to_keep=1),
            verbose=1,
        ),
    )
    tuner.fit()
    group_by = list(axes)
    runs = fetch_trial_runs(tracking_uri, experiment, tracker.parent_run_id)
    table, left_out = aggregate(runs, group_by, definition.table_metrics)
    return (
        f"\n{definition.name}: mean ± std over seeds (MLflow experiment {experiment!r}, "
        f"sweep run {tracker.parent_run_id})\n\n{to_markdown(table, group_by, definition.table_metrics)}\n\n"
        f"{len(runs) - left_out} finished trial runs; {left_out} failed or unfinished left out."
    )
