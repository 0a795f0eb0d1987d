"""Launch a parsed sweep: check every input; then print the protocol card (--dry-run) or hand the sweep to
`sentsweep.sweep.execution.runner` (Ray Tune with MLflow tracking, tables).

Each script in sweeps/ describes its experiment with a `SweepDefinition` and calls `run_sweep`
(`sentsweep.sweep.launch.entry_point`), which parses the command line and calls `launch`. Everything
that can be wrong with the input (unknown method or pooling, a ratio outside [0, 1), a missing or malformed
data file, an empty corpus, an unreachable tracking server, an output folder that takes no file, too little free disk
for the checkpoints and models the sweep keeps) fails here, before Ray starts.

A sweep has one stage (a grid or an Optuna search over its axes) or several run one after the other: the
greedy search of the TSDAE paper (appendix A), where each stage fixes the best value of its axes on dev
(mean over seeds of the selection metric) before the next stage starts.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from sentsweep.data import read_corpus, read_scored_pairs, sts_benchmark_files
from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR
from sentsweep.errors import InputError
from sentsweep.hub import cached_model_folder, hub_cache, hub_model_folder, is_hub_name
from sentsweep.models import build_tiny_model, check_model_source
from sentsweep.plugins import USER_CODE_KEY, user_modules
from sentsweep.preparation_cache import cache_folder
from sentsweep.random_seeds import parse_seeds
from sentsweep.search_spaces.param_spaces import added_axes, values_to_validate
from sentsweep.search_spaces.protocol import with_method_settings
from sentsweep.sweep.compute.ray_connection import check_ray_cluster
from sentsweep.sweep.config.definition import ResolvedSweep, SweepDefinition
from sentsweep.sweep.config.option_checks import check_budget_options
from sentsweep.sweep.config.options import SweepOptions, parse_assignments
from sentsweep.sweep.config.swept_settings import check_swept_settings
from sentsweep.sweep.execution.driver_lock import driver_lock, lock_file
from sentsweep.sweep.launch.card import protocol_card
from sentsweep.sweep.launch.data_sizes import sample_size_problems
from sentsweep.sweep.launch.demo_stand_ins import (
    check_data_given,
    corpus_given,
    demo_data_serves,
    missing_corpus_problem,
    missing_evaluation_data_problem,
)
from sentsweep.sweep.launch.disk_space import check_disk_space, check_output_folders
from sentsweep.sweep.launch.first_step import check_own_methods_start
from sentsweep.sweep.search.objectives import check_sweep_objectives
from sentsweep.sweep.search.target_tasks import TASK_AXIS, resolve_task_data
from sentsweep.tasks import build_tasks, parse_task_specs
from sentsweep.tasks.mteb_tasks import MTEB_PREFIX, is_mteb_name, published_main_scores, untrained_scores
from sentsweep.terminal import say
from sentsweep.tracking.models import check_model_uri, is_model_uri, materialize_model
from sentsweep.tracking.store import check_tracking_reachable, prepare_store, redact, resolve_tracking_uri
from sentsweep.tracking.store_log import store_reports_logged
from sentsweep.tracking.sweep_lookup import resume_target
from sentsweep.trainables.catalog import check_keys, get_method, setting_default, validate_config
from sentsweep.trainables.settings import BOOKKEEPING_KEYS, EvaluationSettings, TrainingSettings

MODEL_SETTINGS = ("model", "generator", "cross_encoder")  # the settings that name a model a trial loads
TINY_MODEL_PENDING = "<the tiny random model, built once every check has passed>"


def resolve_settings(definition: SweepDefinition, options: SweepOptions) -> ResolvedSweep:
    """The protocol with the command line applied; raises `InputError` on bad input (before anything runs)."""
    protocol = definition.protocol
    overrides = dict(protocol.quick) if options.quick else {}
    for option in ("lr", "max_steps", "eval_steps", "max_seq_length"):
        if getattr(options, option) is not None:
            overrides[option] = getattr(options, option)
    assignments = parse_assignments(options.assignments)
    name_sweep_methods(definition, options)  # a sentence-transformers loss's arguments are known keys from here
    check_keys(assignments)  # a misspelled key fails here, with the closest setting suggested
    overrides.update(local_paths_made_absolute(assignments))
    seeds_given = overrides.pop("seeds", None)
    seeds = parse_seeds(options.seeds or _seeds_text(seeds_given if seeds_given is not None else protocol.seeds.value))
    constants = protocol.constants() | overrides
    constants["keep_model"] = options.keep_models != "none" or any(stage.init_from for stage in definition.stages)
    storage = storage_path(options)  # Ray Tune's storage (the runner's) holds the cache
    constants["preparation_cache"] = None if options.no_cache else cache_folder(storage)
    method_settings = {method: {key: value for key, value in protocol.settings_of(method).items()
                                if key not in overrides} for method in protocol.method_settings}
    check_budget_options(options.time_budget, options.gpu_hours, options.gpus_per_trial)

    # --corpus, else --quick's demo corpus, else the protocol's own; with none, no method of the sweep may read one
    # (checked once they are: `check_data_given`)
    corpus_file = options.corpus or (CORPUS_FILE if demo_data_serves(options) else constants.get("corpus"))
    corpus_size = 0
    if corpus_file:
        corpus = Path(corpus_file).resolve()
        corpus_size = len(read_corpus(corpus))
        constants["corpus"] = str(corpus)
    if options.sick_file:
        sick = str(Path(options.sick_file).resolve())
        constants.update(eval_format="sick", dev_file=sick, test_file=sick)
    elif options.hf_sts:
        constants.update(eval_format="hf", dev_file=options.hf_sts, test_file=options.hf_sts)
    else:
        files = sts_benchmark_files(options.sts_dir or DEMO_DIR)
        constants.update(eval_format="stsb", dev_file=str(files["dev"].resolve()),
                         test_file=str(files["test"].resolve()))
    read_scored_pairs(constants["dev_file"], constants["eval_format"], "dev")
    read_scored_pairs(constants["test_file"], constants["eval_format"], "test")
    if definition.trains_on_gold_pairs and "train_file" not in constants:
        constants["train_file"] = gold_train_file(options)
    elif definition.trains_on_gold_pairs:  # given with --set: a missing or malformed file fails here, naming itself
        read_scored_pairs(constants["train_file"], constants["eval_format"], "train")
    constants.update(definition.settings_from_options(options))
    task_data = {}
    if options.eval_task:
        specs = {name: str(Path(path).resolve()) for name, path in parse_task_specs(options.eval_task).items()}
        tasks = build_tasks(specs)  # reads and checks every task file now, before any training
        constants["eval_tasks"] = specs
        constants.update(selection_on(options, specs, assignments))
        if definition.per_task:  # each task's corpus, read now
            task_data = resolve_task_data(options, corpus, corpus_size, specs,
                                          definition.data_labels.get(TASK_AXIS, ()))
        selection = constants.get("selection_task")
        if constants.get("select_checkpoint") == "best_task_dev" and selection in tasks and \
                "dev" not in tasks[selection].splits:
            raise InputError(f"selection_task {selection!r} has no dev split ({specs[selection]}) to select "
                             "checkpoints on")

    if options.select_on and not options.eval_task:
        raise InputError(f"--select-on {options.select_on!r}: give the task with --eval-task")
    if options.mteb_results:  # read now: a folder that does not hold the model's results fails before launch
        mteb_tasks = [name.removeprefix(MTEB_PREFIX) for name in constants.get("eval_tasks") or {}
                      if is_mteb_name(name)]
        if not mteb_tasks:
            raise InputError("--mteb-results: give the MTEB tasks to compare with --eval-task mteb:<Task>=FOLDER")
        published_main_scores(options.mteb_results, options.model or "", mteb_tasks)
    if options.model:  # an MLflow model URI is checked once the tracking store is known to be reachable
        constants["model"] = options.model if is_model_uri(options.model) else check_model_source(options.model)
    elif not options.quick and not options.dry_run:
        raise InputError("--model is required without --quick (a hub name or a local folder)")
    if getattr(options, "task_corpus", ()) and not task_data:
        raise InputError("--task-corpus names a target task's training sentences: give the task with --eval-task")
    return ResolvedSweep(constants, method_settings, overrides, seeds, corpus_size, storage, task_data)


def selection_on(options: SweepOptions, specs: dict[str, str], assignments: dict) -> dict:
    """--select-on TASK as the settings it stands for (select_checkpoint best_task_dev on TASK's dev split)."""
    if not options.select_on:
        return {}
    if options.select_on not in specs:
        raise InputError(f"--select-on {options.select_on!r} is not one of the --eval-task tasks ({', '.join(specs)})")
    if {"select_checkpoint", "selection_task"} & set(assignments):
        raise InputError("--select-on and --set select_checkpoint/selection_task say the same thing: give one")
    return {"select_checkpoint": "best_task_dev", "selection_task": options.select_on}


def storage_path(options: SweepOptions) -> str:
    """Ray Tune's storage (shared by every node): --storage-path, else SENTSWEEP_STORAGE_PATH, else OUTPUT_DIR/ray."""
    return (options.storage_path or os.environ.get("SENTSWEEP_STORAGE_PATH")
            or str(Path(options.output_dir, "ray").resolve()))


def local_paths_made_absolute(assignments: dict) -> dict:
    """--set values naming an existing local file or folder, made absolute: trials run in Ray workers whose
    working directory is not the launcher's (a hub name that is no local path stays as it is)."""
    return {key: str(Path(value).resolve()) if isinstance(value, str) and value and Path(value).exists() else value
            for key, value in assignments.items()}


def _seeds_text(seeds) -> str:
    """A protocol's seeds (a count, or a list of seeds) as `parse_seeds` reads them."""
    return ",".join(map(str, seeds)) + "," if isinstance(seeds, (list, tuple)) else str(seeds)


def gold_train_file(options: SweepOptions) -> str:
    """The labelled training pairs beside the evaluation data: sts-train.csv, SICK's TRAIN rows, the train split."""
    if options.sick_file:
        path = str(Path(options.sick_file).resolve())
        read_scored_pairs(path, "sick", "train")
        return path
    if options.hf_sts:
        return options.hf_sts
    train = sts_benchmark_files(options.sts_dir or DEMO_DIR)["train"]
    read_scored_pairs(train)  # a missing or malformed file fails here, naming itself
    return str(train.resolve())


def name_sweep_methods(definition: SweepDefinition, options: SweepOptions) -> None:
    """Resolve every method the sweep's stages name (a method axis, or the protocol's one method), so that the
    settings of methods built on demand (st:<loss>) are known before the command line's keys are checked."""
    named = [definition.protocol.constants().get("method")]
    for _, axes in stage_axes(definition, options):
        values = axes.get("method")
        named += values if isinstance(values, list) else []
    for method in named:
        if isinstance(method, str):
            get_method(method)


def stage_axes(definition: SweepDefinition, options: SweepOptions) -> list[tuple[str, dict]]:
    """[(stage name, axes)]: the definition's stages, or its Optuna ranges; plus sample/batch size axes. A grid
    axis is a list (an option's tuple of values becomes one); any other value is a Ray Tune domain."""
    if options.search == "optuna":
        if definition.sampled_axes is None:
            raise InputError(f"sweep {definition.name!r} has no Optuna search space; use --search grid")
        stages = [("optuna", definition.sampled_axes(options))]
        if options.sampler in ("noise-gp", "rung-gp"):
            from sentsweep.sweep.search.noise_aware_sampler import check_space  # lazy: optuna

            check_space(stages[0][1], options.sampler)
    else:
        stages = [(stage.name, axes) for stage in definition.stages if (axes := stage.axes(options)) is not None]
    shared = added_axes(options.sample_sizes, options.batch_sizes)
    return [(name, {axis: list(values) if isinstance(values, tuple) else values for axis, values in axes.items()}
             | shared) for name, axes in stages]


def validate_axes(resolved: ResolvedSweep, stages: list[tuple[str, dict]]) -> dict[str, dict]:
    """Check every value every axis can take as its method's typed settings (with the method's protocol
    settings), before anything runs; returns the sweep's methods, each with the first point checked of it."""
    methods = {}
    for _, axes in stages:
        first_point = resolved.constants | {name: values_to_validate(axis)[0] for name, axis in axes.items()}
        first_point.setdefault("model", TINY_MODEL_PENDING)
        for name, axis in axes.items():
            for value in values_to_validate(axis):
                point = with_method_settings(first_point | {name: value}, resolved.method_settings, axes)
                methods.setdefault(validate_config(point).method, point)
        if not axes:
            point = with_method_settings(first_point, resolved.method_settings)
            methods.setdefault(validate_config(point).method, point)
    return methods


def validation_split_problem(resolved: ResolvedSweep) -> str | None:
    """What is wrong with holding validation sentences out of the corpus, if anything."""
    constants, corpus_size = resolved.constants, resolved.corpus_size
    if constants.get("select_checkpoint") != "validation_loss" or "corpus" not in constants:
        return None  # (a sweep without a corpus is refused where a method reads one: check_data_given)
    if constants.get("validation_file"):
        read_corpus(constants["validation_file"])  # a missing or empty file fails here, naming itself
        return None
    size = constants.get("validation_size", setting_default("validation_size"))
    if size >= corpus_size:
        return (f"validation_size {size} leaves no training sentences of the corpus's {corpus_size} "
                f"({constants['corpus']}); give a larger --corpus or --set validation_size=N")
    return None


def check_sampled_methods(resolved: ResolvedSweep, stages: list[tuple[str, dict]]) -> None:
    """Optuna cannot condition a setting on the method it samples: refuse a sampled method axis whose methods
    carry their own protocol settings."""
    for _, axes in stages:
        axis = axes.get("method")
        if axis is None or isinstance(axis, list):
            continue
        own = [f"{method} ({', '.join(sorted(resolved.method_settings[method]))})"
               for method in values_to_validate(axis) if resolved.method_settings.get(method)]
        if own:
            raise InputError(f"--search optuna samples the method, but {'; '.join(own)} run with their own "
                             "settings; use --search grid, or --methods with one method")


def check_race(definition: SweepDefinition, options: SweepOptions, seeds: list[int],
               stages: list[tuple[str, dict]]) -> None:
    """--race (on a grid, without a scheduler: `check_search_combination`) needs stages that stand alone, more
    seeds than it starts with, a budget of one round at least, and rungs (the steps schedule's, each in (0, 1):
    `check_option_bounds`) given once."""
    if not options.race:
        return
    configs = max((math.prod(len(values) for values in axes.values()) for _, axes in stages), default=1)
    problem = ("--race and --extend: give one" if options.extend else
               "--race cannot race chained stages (a race may end before the last seed, and a later stage needs the "
               "earlier stage's model of every seed); race the stages as sweeps of their own"
               if any(stage.init_from for stage in definition.stages) else
               f"--race-initial-seeds {options.race_initial_seeds} must be at least 2 (a paired test needs two seeds) "
               f"and fewer than the {len(seeds)} seeds given" if not 2 <= options.race_initial_seeds < len(seeds) else
               f"--race-budget {options.race_budget} is less than one first round ({configs} configurations x "
               f"{options.race_initial_seeds} seeds)" if options.race_budget is not None
               and options.race_budget < configs * options.race_initial_seeds else
               f"--race-rungs is the steps schedule's (--race-schedule steps), not {options.race_schedule}'s"
               if options.race_rungs is not None and options.race_schedule != "steps" else
               f"--race-rungs {' '.join(map(str, options.race_rungs))}: each fraction of the steps given once"
               if options.race_rungs is not None and len(set(options.race_rungs)) != len(options.race_rungs)
               else None)
    if problem:
        raise InputError(problem)


def check_extension(definition: SweepDefinition, options: SweepOptions) -> None:
    """--extend adds grid trials to a sweep whose stages stand alone."""
    if not options.extend:
        return
    problem = ("--resume continues a sweep as it was; --extend adds to one: give one" if options.resume else
               "--extend adds grid trials; --search optuna samples new configurations anyway"
               if options.search == "optuna" else
               "--extend cannot add to chained stages (a new seed needs its own earlier-stage model); rerun the sweep"
               if any(stage.init_from for stage in definition.stages) else None)
    if problem:
        raise InputError(problem)


def check_overrides_used(overrides: dict, methods: set[str]) -> None:
    """Every --set key must be a setting of at least one method the sweep runs (else it would do nothing)."""
    used = set(BOOKKEEPING_KEYS).union(*(get_method(name).setting_names() for name in methods))
    for key in overrides:
        if key not in used:
            raise InputError(f"setting {key!r} is not used by the method(s) of this sweep: "
                             f"{', '.join(sorted(methods))}")


def tiny_model_folder(output_dir: Path) -> Path:
    """Where --quick without --model builds its tiny random model."""
    return (output_dir / "tiny-bert").resolve()


def _tiny_model(output_dir: Path, corpus: Path) -> Path:
    folder = tiny_model_folder(output_dir)
    if not (folder / "config.json").is_file():
        build_tiny_model(folder, read_corpus(corpus) + read_corpus_pairs_text())
    return folder


def read_corpus_pairs_text() -> list[str]:
    """The sentences of the shipped demo pairs, so the tiny model's vocabulary covers evaluation text."""
    pairs = [read_scored_pairs(DEMO_DIR / f"sts-{split}.csv") for split in ("dev", "test")]
    return [sentence for p in pairs for sentence in p.sentences1 + p.sentences2]


def prepare_quick_models(definition: SweepDefinition, constants: dict, options: SweepOptions) -> None:
    """Without --model, the tiny random BERT; then whatever else the sweep's --quick mode needs (once)."""
    if "model" not in constants:
        constants["model"] = str(_tiny_model(Path(options.output_dir), Path(constants.get("corpus") or CORPUS_FILE)))
    if options.quick and definition.quick_setup is not None:
        constants.update(definition.quick_setup(constants, Path(options.output_dir)))


def launch(definition: SweepDefinition, options: SweepOptions) -> int:
    """Check every input of the parsed sweep, then print its card (--dry-run) or run it (`launch_checked`, whose
    driver holds the sweep's lock); returns the exit code."""
    resolved = resolve_settings(definition, options)
    constants = resolved.constants
    user_code = [module.as_config() for module in user_modules()]
    if user_code:  # the researcher's own modules, which every worker imports before its trial (sentsweep.plugins)
        constants[USER_CODE_KEY] = user_code
    stages = stage_axes(definition, options)
    check_sweep_objectives(options, constants, stages)
    check_extension(definition, options)
    check_race(definition, options, resolved.seeds, stages)
    check_sampled_methods(resolved, stages)
    definition.check(options, constants)  # the experiment's own checks first: they say more than the generic ones
    check_swept_settings(options, stages)
    EvaluationSettings.from_config(constants)  # the shared settings need no model: checked before any is built
    if options.dry_run:  # the card, with what would stop the sweep as given (a missing input, too small a corpus)
        problems = [problem] if (problem := validation_split_problem(resolved)) else []
        problems += definition.missing_inputs(options)
        problems += sample_size_problems(resolved, stages)
        try:
            points = validate_axes(resolved, stages)
            given = corpus_given(options, definition.protocol.constants())
            problems += [problem] if (problem := missing_corpus_problem(given, points, options)) else []
        except InputError as error:
            problems.append(str(error))
        print(protocol_card(definition, options, resolved, stages, probed_model(resolved, options), problems))
        return 0
    if problem := missing_evaluation_data_problem(options):  # the demo's pairs serve --quick only
        raise InputError(problem)
    if "method" in constants:  # a sweep of one method; the trials of a method axis are checked by validate_axes
        TrainingSettings.from_config(with_method_settings({"model": TINY_MODEL_PENDING} | constants,
                                                          resolved.method_settings))
    problem = (validation_split_problem(resolved) or next(iter(definition.missing_inputs(options)), None)
               or next(iter(sample_size_problems(resolved, stages)), None))
    if problem:
        raise InputError(problem)
    if options.quick and definition.quick_setup is not None:
        prepare_quick_models(definition, constants, options)  # the checks below need the tiny models it builds
    methods = validate_axes(resolved, stages)
    # the demo corpus stands in for --corpus in the demo only
    check_data_given(corpus_given(options, definition.protocol.constants()), methods, options)
    check_overrides_used(parse_assignments(options.assignments), methods)
    return launch_checked(definition, options, resolved, stages, methods)


def launch_checked(definition: SweepDefinition, options: SweepOptions, resolved: ResolvedSweep,
                   stages: list[tuple[str, dict]], methods: dict[str, dict]) -> int:
    """The launch of a sweep whose options and data passed their checks: the tracking store (and, for --resume,
    that there is something to resume), the Ray cluster, the models and the disk checked, the untrained model scored,
    then the sweep run."""
    constants = resolved.constants
    tracking_uri = resolve_tracking_uri(options.tracking_uri)
    check_tracking_reachable(tracking_uri)
    if options.resume and (nothing := nothing_to_resume(definition, options, tracking_uri)):
        say(nothing)
        return 0
    check_ray_cluster()  # a cluster to join that is down, wants a token, or runs other versions: one line, now
    check_output_folders(options, resolved.storage_path)  # before anything is written there
    resolve_hub_models(resolved)  # hub names: local folders from here on, the driver's and every trial's
    if is_model_uri(constants.get("model")):  # a run or registered version that does not exist fails here
        prepare_store(tracking_uri)
        constants["parent_model_run_id"] = check_model_uri(tracking_uri, constants["model"])
        constants["model"] = str(materialize_model(tracking_uri, constants["model"],
                                                   Path(options.output_dir, "models")))
    check_disk_space(definition, options, resolved, stages, tracking_uri)  # the model's size is known from here
    # one driver per sweep (`sentsweep.sweep.execution.driver_lock`): every input checked, a second driver stops here,
    # in one line, before it builds or writes anything, writes to MLflow or starts Ray; MLflow's own reports of a store
    # fault go to the output folder's store log (`sentsweep.tracking.store_log`)
    with driver_lock(lock_file(resolved.storage_path, options.output_dir, options.experiment or definition.name,
                               definition.name), definition.name), store_reports_logged(options.output_dir):
        return run_locked(definition, options, resolved, stages, methods, tracking_uri)


def run_locked(definition: SweepDefinition, options: SweepOptions, resolved: ResolvedSweep,
               stages: list[tuple[str, dict]], methods: dict[str, dict], tracking_uri: str) -> int:
    """The checked sweep run by the driver that holds its lock: the quick models built, methods of one's own tried,
    the store prepared, the untrained model scored, then the sweep's stages (`SweepRunner.run`)."""
    constants = resolved.constants
    prepare_quick_models(definition, constants, options)  # --quick without --model: every check passed, build now
    # a method of one's own takes one step on a tiny model before a cluster's hours go to it
    check_own_methods_start(methods, lambda: _tiny_model(Path(options.output_dir),
                                                         Path(constants.get("corpus") or CORPUS_FILE)))
    prepare_store(tracking_uri)  # a new SQLite store: created once, before this or any other sweep's first write

    # lazy: ray, mlflow
    from sentsweep.sweep.execution.runner import SweepRunner, baseline_scores

    baseline = baseline_scores(constants)
    say(f"untrained model {constants['model']}: STS dev {baseline['untrained_sts_dev']:.2f}, "
        f"test {baseline['untrained_sts_test']:.2f} (Spearman x 100 of cosine)")
    mteb_baseline, lines = untrained_scores(constants["model"], constants["max_seq_length"],
                                            constants.get("eval_tasks") or {}, options.model, options.mteb_results)
    baseline |= mteb_baseline
    if lines:
        say("\n".join(lines))
    return SweepRunner(definition, options, tracking_uri, resolved).run(stages, baseline)


def nothing_to_resume(definition: SweepDefinition, options: SweepOptions, tracking_uri: str) -> str | None:
    """What --resume would continue: None where the sweep has an unfinished run; the line to print where every run
    of it finished (nothing to resume); an `InputError` where the experiment holds no run of the sweep."""
    experiment = options.experiment or definition.name
    target = resume_target(tracking_uri, experiment, definition.name, options.mlflow_wait)
    if target.run_id is None:
        raise InputError(f"--resume: experiment {experiment!r} at {redact(tracking_uri)} has no run of sweep "
                         f"{definition.name} to resume; start the sweep without --resume")
    if not target.finished:
        return None
    return (f"nothing to resume: sweep {definition.name} of experiment {experiment!r} finished (its MLflow run "
            f"{target.run_id}); to add seeds or configurations to it, run the same command with --extend instead "
            "of --resume")


def probed_model(resolved: ResolvedSweep, options: SweepOptions) -> str:
    """The model a launch's GPU probes would name (`ProbeKey.model`, the card's estimate looks its probes up by it),
    found without fetching or building anything: the tiny random model's folder for --quick without --model; a
    hub model's snapshot folder where the hub cache holds it (`resolve_hub_models`), else its name, which no probe
    names; a local folder or an MLflow model URI as given (an MLflow model's folder is known once it is fetched)."""
    model = resolved.constants.get("model")
    if model is None:
        return str(tiny_model_folder(Path(options.output_dir)))
    if not is_model_uri(model) and is_hub_name(model):
        return cached_model_folder(model, hub_cache(resolved.storage_path)) or model
    return model


def resolve_hub_models(resolved: ResolvedSweep) -> None:
    """Replace each hub model name among the sweep's settings (`MODEL_SETTINGS` of its constants and of its methods'
    own settings) by its snapshot's local folder, fetched on the driver where missing (`sentsweep.hub`): trials on
    nodes without internet never reach for the hub; one that cannot be had fails here, naming itself."""
    cache = hub_cache(resolved.storage_path)
    for settings in [resolved.constants, *resolved.method_settings.values()]:
        for key in MODEL_SETTINGS:
            value = settings.get(key)
            if isinstance(value, str) and not is_model_uri(value) and is_hub_name(value):
                settings[key] = hub_model_folder(value, cache)


