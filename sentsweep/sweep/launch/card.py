"""The protocol card of a sweep (`--dry-run`): what it will run and where every value comes from.

The card lists the resolved grid of each stage, every setting the sweep's methods read with its value and
source (the protocol's, the command line's, or the settings class' own default and its source), the settings
each method takes on its own, the seeds, and the number of trials and training steps in total. Printing it
trains nothing, starts no Ray and writes no MLflow run. A section lists the preparation stages the sweep's
methods cache (`sentsweep.preparation_cache`), each with whether the trial's seed is part of its key, and one
how the trials are scheduled and compared (significance, early stopping, racing, GPU packing, compute budgets).
The sweep's GPU-hours are estimated from the step times that earlier launches' GPU probes measured and kept in
the storage path (`sentsweep.sweep.compute.gpu_estimate`); where no probe measured a step of some trial, the card says
which.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable

from sentsweep.analysis.orderings import orderings_card_lines
from sentsweep.analysis.step_racing import RUNGS, fraction_text
from sentsweep.models import replaced_modules
from sentsweep.search_spaces.param_spaces import values_to_validate
from sentsweep.search_spaces.protocol import with_method_settings
from sentsweep.settings import Source
from sentsweep.sweep.compute.gpu_estimate import NOT_COUNTED, GpuEstimate, estimate_gpu_hours
from sentsweep.sweep.compute.gpu_packing import CUDA_CONTEXT_BYTES, MEMORY_MARGIN, GiB, probe_key
from sentsweep.sweep.compute.probe_records import probes_file, read_probes
from sentsweep.sweep.config.options import SweepOptions
from sentsweep.sweep.launch.data_sizes import (
    labelled_files,
    peak_rate_shortfalls,
    training_sentences,
    whole_corpus_batches,
)
from sentsweep.sweep.launch.demo_stand_ins import evaluation_data_given
from sentsweep.sweep.search.objectives import objectives_row, sweep_objectives
from sentsweep.sweep.search.optuna_sampler import sampler_description
from sentsweep.sweep.search.target_tasks import TASK_AXIS, corpus_size_of, settings_by_task
from sentsweep.tracking.models import is_model_uri
from sentsweep.trainables.catalog import get_method
from sentsweep.trainables.loop import UNTRAINED_EVALUATION
from sentsweep.trainables.settings import EvaluationSettings, TrainingSettings

# Settings a target task's data decides in the stages that run per task (`sentsweep.sweep.search.target_tasks`).
PER_TASK_SETTINGS = ("corpus", "eval_tasks")
# Settings the launcher fills from its own options (data files, the model), not from the protocol.
DATA_OPTIONS = {"model": "--model", "corpus": "--corpus", "dev_file": "--sts-dir / --sick-file / --hf-sts",
                "test_file": "--sts-dir / --sick-file / --hf-sts", "eval_format": "--sts-dir / --sick-file / --hf-sts",
                "train_file": "the training split beside the dev/test data", "eval_tasks": "--eval-task",
                "keep_model": "--keep-models", "preparation_cache": "--storage-path (none: --no-cache)"}


def protocol_card(definition, options: SweepOptions, resolved, stages: list[tuple[str, dict]], model: str,
                  problems: Iterable[str] = ()) -> str:
    """The card as Markdown: header, grid, fixed settings, per-method settings, how trials are scheduled and
    compared, seeds, trials, steps and the compute in all (GPU-hours estimated from the probes of earlier launches,
    whose keys name `model`, the model the launch would train); then the `problems` that would stop the sweep from
    starting as given, and the protocol's notes."""
    protocol = definition.protocol
    methods = sweep_methods(resolved.constants, stages)
    lines = [f"# Protocol card: {definition.name}", "", definition.description, ""]
    if definition.reference is not None:
        lines += [f"Re-runs: {definition.reference.label}: {definition.reference}", ""]
    else:
        lines += ["Re-runs: no published experiment (the project's own sweep)", ""]
    if options.quick:
        lines += ["**--quick**: the project's tiny run (tiny random model, demo data); its overrides are marked.", ""]

    chains = {stage.name: stage for stage in definition.stages if stage.init_from}
    lines += _grid_section(definition, options, resolved, stages, chains)
    lines += target_tasks_section(resolved, stages)

    swept = {axis for _, axes in stages for axis in axes}
    lines += ["## Settings of every trial", "", "| group | setting | value | source |", "|---|---|---|---|"]
    for group, name, value, source in fixed_settings(resolved, methods, options, protocol):
        mark = " (swept)" if name in swept else ""
        if name in swept and value is None and source.startswith("not given"):  # no option needed: the grid gives it
            value, source = "each trial's: the grid above", "the grid above"
        text = _value(value)
        if resolved.task_data and name in PER_TASK_SETTINGS:  # their target task's in the per-task stages
            text += " (stages per target task: the task's own, see 'Target tasks')"
        lines.append(f"| {group} | {name}{mark} | {text} | {source} |")
    lines.append("")

    own = {method: settings for method, settings in resolved.method_settings.items() if method in methods and settings}
    if own:
        lines += ["## Settings of one method (each with its own paper's)", "", "| method | setting | value | source |",
                  "|---|---|---|---|"]
        for method, settings in own.items():
            for name, value in settings.items():
                source = protocol.method_settings[method][name].source
                lines.append(f"| {method} | {name} | {_value(value)} | {source} |")
        lines.append("")

    lines += replaced_modules_section(resolved, [(name, axes) for name, axes in stages if name not in chains])

    cited_methods = [get_method(name) for name in methods if get_method(name).citation]
    if cited_methods:  # a sentence-transformers loss as a method: the work it cites, as the loss gives it
        lines += ["## Works the methods cite", ""]
        for method in cited_methods:
            lines += [f"**{method.name}**: {method.reference}", "", "```bibtex", method.citation.strip(), "```", ""]

    lines += preparation_cache_section(resolved.constants, methods)
    per_stage, points = stage_points(resolved, stages, options, chained_from_each(definition))
    estimate = gpu_estimate(resolved, points, options, model)
    lines += sweep_options_section(options, estimate)
    lines += _totals_lines(resolved, options, protocol, per_stage, points, estimate)
    batches = whole_corpus_batches(resolved, stages)
    if batches:
        lines += ["", "**Batches of the whole training set:** " + "; ".join(batches) + ". A batch never repeats a "
                  "sentence, so none meets its own copy as an in-batch negative; the seed's code does the same "
                  "(SimCSE's official trainer, TSDAE App. B, keeps the DataLoader's last, partial batch: outside the "
                  "seeds)."]
    files = labelled_files(resolved, stages)
    if files:
        lines += ["", "**Labelled training pairs:** " + "; ".join(
            f"{path}: {pairs:,} pairs" + (f", of which the trials draw {', '.join(f'{size:,}' for size in sizes)}"
                                           if sizes else "") for path, (pairs, sizes) in files.items())
                  + " (a size above a file's pairs cannot run)."]
    shortfalls = peak_rate_shortfalls(resolved, stages)
    if shortfalls:
        lines += ["", "**Trials that never train at their peak learning rate** (their warm-up outlasts the run): "
                  + "; ".join(shortfalls) + "."]
    if definition.orderings:
        lines += ["", *orderings_card_lines(definition.orderings)]
    for problem in problems:
        lines += ["", f"**Cannot run as given:** {problem}"]
    if protocol.notes:
        lines += ["", "## Notes", ""] + [f"- {note}" for note in protocol.notes]
    return "\n".join(lines)


def _grid_section(definition, options: SweepOptions, resolved, stages: list[tuple[str, dict]],
                  chains: dict) -> list[str]:
    """The card's grid: each stage's axes with their values and sources, the values a greedy stage keeps for the
    next, and the model each chained stage (`chains`, by name) starts from."""
    protocol = definition.protocol
    lines = ["## Grid" + (" (greedy: each stage keeps the best value on dev of the stages before)"
                          if definition.greedy else ""), "", "| stage | axis | values | source |", "|---|---|---|---|"]
    grid_names = {stage.name: stage.grids for stage in definition.stages}
    stage_rules = {stage.name: stage.keep(options) for stage in definition.stages} if definition.greedy else {}
    for index, (name, axes) in enumerate(stages, start=1):
        for axis, values in axes.items() or [("-", None)]:
            source = (("--eval-task (its target tasks; see 'Target tasks')" if resolved.task_data else
                       "--eval-task / --target-task (the task whose data the trials train on)") if axis == TASK_AXIS
                      else axis_source(protocol, grid_names.get(name, {}).get(axis, axis), values, options))
            lines.append(f"| {index} {name} | {axis} | {_values(values)} | {source} |")
        kept = stage_rules.get(name)
        if kept is not None:
            values = ", ".join(f"{axis}={_value(value)}" for axis, value in kept[1].items())
            lines.append(f"| {index} {name} | kept for the next stages | {values} | {kept[0]} |")
        if name in chains:
            rows = "its best configuration on dev" if chains[name].init_rows == "best" else "each of its configurations"
            earlier = dict(stages).get(chains[name].init_from, {})
            task = " of the same target task" if TASK_AXIS in axes and TASK_AXIS in earlier else ""
            lines.append(f"| {index} {name} | model | each seed starts from the same seed's model of stage "
                         f"'{chains[name].init_from}'{task}, {rows} | chain |")
    lines.append("")
    return lines


def _totals_lines(resolved, options: SweepOptions, protocol, per_stage: list[int], points, estimate) -> list[str]:
    """The card's seeds, trials, training steps and compute in all."""
    seeds_source = "command line" if options.seeds else (
        "--quick" if options.quick and "seeds" in protocol.quick else str(protocol.seeds.source))
    trials, steps = count_work(resolved, points)
    return [f"**Seeds:** {', '.join(map(str, resolved.seeds))} ({seeds_source})", "",
            f"**Trials:** {' + '.join(str(n) for n in per_stage)} grid point{'s' if sum(per_stage) != 1 else ''} x "
            f"{len(resolved.seeds)} seed{'s' if len(resolved.seeds) != 1 else ''} = {trials}",
            "", f"**Training steps in all:** {steps:,} (" + (
                f"corpus: {resolved.corpus_size:,} sentences" if "corpus" in resolved.constants else "no corpus")
            + ("; the target tasks' own in their stages" if resolved.task_data else "") + ")",
            "", f"**Compute in all:** {trials} trials, {steps:,} training steps, " + (
                f"about {estimate.value} GPU-hours of steps ({NOT_COUNTED}; see 'estimated GPU-hours')"
                if estimate.gpu_hours else f"no GPU-hours ({estimate.source})" if estimate.gpu_hours == 0 else
                "GPU-hours not estimated (see 'estimated GPU-hours')")]


def target_tasks_section(resolved, stages: list[tuple[str, dict]]) -> list[str]:
    """The card's lines on per-task training: each target task's corpus and evaluation data, and which stages
    train a model per task; none for a sweep that trains one model on --corpus."""
    if not resolved.task_data:
        return []
    per_task = [name for name, axes in stages if TASK_AXIS in axes]
    others = [name for name, axes in stages if TASK_AXIS not in axes]
    lines = ["## Target tasks (one model per task)", "",
             f"Stages {', '.join(repr(name) for name in per_task)} run once per target task: each trial trains on "
             "the task's own corpus and is scored on that task alone (its in-domain column: TSDAE §4.1 \"For "
             "unsupervised training, we just use the sentences from the training split\"); every trial logs "
             "`target_task`."
             + (f" Stages {', '.join(repr(name) for name in others)} train one model for all tasks and score it "
                "on each." if others else ""), "",
             "| target task | training corpus | sentences | evaluation data |", "|---|---|---|---|"]
    lines += [f"| {task} | {data.corpus} | {data.corpus_size:,} | {data.eval_tasks[task]} |"
              for task, data in resolved.task_data.items()]
    others = [name for name in next(iter(resolved.task_data.values())).eval_tasks if name not in resolved.task_data]
    if others:
        lines += ["", f"The --eval-task tasks {', '.join(others)} are no target task: every trial is scored on them."]
    return lines + [""]


def replaced_modules_section(resolved, stages: list[tuple[str, dict]]) -> list[str]:
    """Where a pooling the `stages` ask for is not the given model's own: the modules it replaces (a model whose own
    pooling is asked for trains as released, `sentsweep.models.load_sentence_model`). Chained stages start from
    an earlier stage's model, with its own pooling, and are not passed."""
    model = resolved.constants.get("model")
    if not model or is_model_uri(model):  # an MLflow model is only fetched once the sweep runs
        return []
    poolings = []
    for _, axes in stages:  # a stage's pooling axis, else each of its methods' pooling, else the sweep's
        if "pooling" in axes:
            poolings += values_to_validate(axes["pooling"])
            continue
        for method in values_to_validate(axes.get("method", [resolved.constants.get("method")])):
            poolings.append(resolved.method_settings.get(method, {}).get("pooling", resolved.constants.get("pooling")))
    rows = [f"| {pooling} | {replaced} |" for pooling in dict.fromkeys(poolings)
            if isinstance(pooling, str) and (replaced := replaced_modules(model, pooling))]
    if not rows:
        return []
    return ["## The model's own modules replaced", "", f"{model}: a pooling other than its own rebuilds the "
            "modules after its Transformer.", "", "| pooling | modules |", "|---|---|", *rows, ""]


def preparation_cache_section(constants: dict, methods: Iterable[str]) -> list[str]:
    """The card's lines on the preparation cache: where it is, and every stage the methods cache, with whether
    the seed is in its key (only where the stage draws random numbers from it; a method's `preparation_seed`,
    where the sweep sets one, replaces the trial's seed there, so every trial shares the entry)."""
    rows = []
    for name in methods:
        method = get_method(name)
        stages = ([UNTRAINED_EVALUATION] if method.trains else []) + list(method.cached_stages)
        shared_seed = constants.get("preparation_seed") if "preparation_seed" in method.setting_names() else None
        seeded = "yes" if shared_seed is None else f"preparation_seed {shared_seed}, one for every trial"
        rows += [f"| {name} | {stage.name} | {stage.computes} | {seeded if stage.seeded else 'no'} |"
                 for stage in stages]
    if not rows:
        return []
    folder = constants.get("preparation_cache")
    where = (f"computed once per key and shared by the trials, in {folder}" if folder else
             "off (--no-cache, or a storage path that is no shared folder): every trial computes every stage")
    return ["## Preparation cache", "", f"Preparation stages are {where}.", "",
            "| method | stage | computes | seed in key |", "|---|---|---|---|", *rows, ""]


def sweep_options_section(options: SweepOptions, estimate: GpuEstimate) -> list[str]:
    """The card's lines on how the sweep schedules and compares its trials: the significance tests, early
    stopping, the race, GPU packing and the compute budget with the `estimate` of the sweep's GPU-hours, each
    option with its value and whether the command line gave it or it is the project's default (no seed sets any of
    them)."""

    def row(topic: str, option: str, value, why: str) -> str:
        given = option.lstrip("-").replace("-", "_") in options.given()
        return f"| {topic} | {option} | {_value(value)} | {'command line' if given else f'project choice ({why})'} |"

    rows = [row("tables", "--alpha", options.alpha, "the usual level"),
            row("tables, race", "--correction", options.correction,
                "Holm 1979: the family-wise error control of Bonferroni, rejecting at least as often"),
            row("early stopping", "--scheduler", options.scheduler,
                "none: rung-gp stops configurations at its rungs itself, as the search row says"
                if options.search == "optuna" and options.sampler == "rung-gp" else "none: every trial runs out")]
    if options.search == "optuna":
        why = ("--sampler noise-gp: the standard errors the seeds give, as each observation's noise; "
               "sentsweep.sweep.search.noise_aware_sampler" if options.sampler == "noise-gp" else
               "--sampler rung-gp: the scores of every seed at every evaluation, a model from the early evaluations "
               "and stops only on the seeds' test; sentsweep.sweep.search.rung_search" if options.sampler == "rung-gp"
               else "Optuna 5.0's defaults for one objective, stated so that another release's defaults change no "
               "proposal; sentsweep.sweep.search.optuna_sampler")
        rows.append(f"| search | sampler | {sampler_description(options.sampler)} | project choice ({why}) |")
    if options.objective:
        rows.append(objectives_row(sweep_objectives(options.objective), options.search))
    if options.scheduler != "fifo":
        from sentsweep.sweep.search.seed_groups import PROJECT_RUNG_SETTINGS  # lazy: ray, mlflow

        rows += [f"| early stopping | {name} | {value} | project choice (sentsweep.sweep.search.seed_groups) |"
                 for name, value in PROJECT_RUNG_SETTINGS.items()]
    if options.race:
        rows += [row("race", "--race-schedule", options.race_schedule, "no barrier: a slot gets the next trial as it "
                     "frees, and the whole race's family-wise error is held at --race-alpha when all configurations "
                     "are equal; sentsweep.analysis.async_racing"),
                 row("race", "--race-alpha", options.race_alpha, "an elimination saves compute and claims nothing; at "
                     "0.20 the async race dropped some configuration of 27 equal ones in 12% of simulated races and "
                     "the TSDAE grid's true best in none; benchmarks/racing.py"),
                 row("race", "--race-initial-seeds", options.race_initial_seeds, "two: the fewest a paired test needs"),
                 row("race", "--race-test", options.race_test, "the pooled t: more degrees of freedom after few seeds; "
                     "sentsweep.analysis.racing"),
                 row("race", "--race-tolerance", options.race_tolerance, "no indifference zone"),
                 row("race", "--race-budget", options.race_budget, "none: up to every seed")]
        if options.race_schedule == "steps":
            rungs = options.race_rungs or RUNGS
            rows.append(row("race", "--race-rungs", ", ".join(fraction_text(rung) for rung in rungs),
                            "successive halving's rungs with a reduction factor of 3; the first seeds are compared at "
                            "each, --race-alpha split over them and the levels of seeds; "
                            "sentsweep.analysis.step_racing"))
    if options.gpus_per_trial:
        rows.append(f"| GPU packing | memory per trial | measured peak x {1 + MEMORY_MARGIN:g} + "
                    f"{CUDA_CONTEXT_BYTES / GiB:g} GiB | project choice (sentsweep.sweep.compute.gpu_packing) |")
    rows += [row("compute budget", "--time-budget", options.time_budget, "none: no limit"),
             row("compute budget", "--gpu-hours", options.gpu_hours, "none: no limit"),
             f"| compute budget | estimated GPU-hours | {estimate.value} | {estimate.source} |"]
    return ["## How trials are scheduled and compared", "", "| topic | option | value | source |", "|---|---|---|---|",
            *rows, ""]


def sweep_methods(constants: dict, stages: list[tuple[str, dict]]) -> list[str]:
    """The methods the sweep's trials run, in order of appearance."""
    methods = [constants["method"]] if "method" in constants else []
    for _, axes in stages:
        methods += [str(value) for value in values_to_validate(axes.get("method", []))]
    return list(dict.fromkeys(methods))


def axis_source(protocol, grid: str, values, options: SweepOptions) -> str:
    """The source of an axis' values: the protocol's for its `grid`, or who changed them."""
    declared = protocol.grids.get(grid)
    if declared is not None and isinstance(values, list) and list(declared.value) == values:
        return str(declared.source)
    if declared is not None and isinstance(values, list) and set(values) <= set(declared.value):
        return f"part of {declared.source}" + (" (--quick)" if options.quick else " (command line)")
    return "--quick (the project's tiny run)" if options.quick else "command line"


def fixed_settings(resolved, methods: Iterable[str], options: SweepOptions, protocol):
    """(group, setting, value, source) of every setting the sweep's methods read, outside their own
    per-method settings."""
    rows, seen = [], set()
    given = {item.partition("=")[0] for item in options.assignments}
    given |= {option for option in ("lr", "max_steps", "eval_steps", "max_seq_length")
              if getattr(options, option) is not None}
    for method_name in methods:
        method = get_method(method_name)
        for group, settings in settings_groups_of(method):
            for row in settings.describe():
                if row.name in seen:
                    continue
                seen.add(row.name)
                value = resolved.constants.get(row.name, row.default)
                rows.append((group, row.name, value, _source(row.name, value, row.source, protocol, given, options)))
    return rows


def settings_groups_of(method) -> list[tuple[str, type]]:
    """(label, settings class) of each group a method reads."""
    groups = [("training", TrainingSettings)] if method.trains else []
    groups += [("evaluation", EvaluationSettings), ("unsupervised" if method.objectives else method.name,
                                                    method.settings)]
    return groups + list(method.objectives.items())


def _source(name: str, value, default_source: Source, protocol, given: set[str], options: SweepOptions) -> str:
    if name in given:
        return "command line"
    if options.quick and name in protocol.quick:
        return "--quick (the project's tiny run)"
    if name in DATA_OPTIONS:
        return data_source(name, value, options)
    if name in experiment_option_names(options):  # SweepDefinition.settings_from_options
        return f"--{name.replace('_', '-')}"
    if name in protocol.settings:
        return str(protocol.settings[name].source)
    return f"default: {default_source}"


def data_source(name: str, value, options: SweepOptions) -> str:
    """Where a data setting of this command comes from (its `value` on the card): the option that gave it, the
    demo file standing in for it (`sentsweep.sweep.launch.demo_stand_ins`: in the demo, or on the card of a `--dry-run`
    without `--quick`, where a run as given needs the option instead), or nothing."""
    stands_in = "--quick without {}" if options.quick else "this card's stand-in; a run without --quick needs {}"
    if name == "model" and not options.model:
        return "--quick: the tiny random BERT" if options.quick else "not given: --model (required without --quick)"
    if name == "corpus" and not options.corpus:
        if value is None:
            return "not given: --corpus"
        return f"the shipped demo corpus ({stands_in.format('--corpus')})"
    if name in ("dev_file", "test_file", "eval_format", "train_file") and not evaluation_data_given(options):
        if value is None:
            return f"not given: {DATA_OPTIONS['dev_file']}"
        return f"the shipped demo STS pairs ({stands_in.format('--sts-dir')})"
    return DATA_OPTIONS[name]


def experiment_option_names(options: SweepOptions) -> set[str]:
    """The names of the options an experiment adds to `SweepOptions`."""
    return ({field.name for field in dataclasses.fields(options)}
            - {field.name for field in dataclasses.fields(SweepOptions)})


def chained_from_each(definition) -> dict[str, str]:
    """{stage: earlier stage} for the stages that start from each configuration of an earlier one."""
    return {stage.name: stage.init_from for stage in definition.stages if stage.init_from and stage.init_rows == "each"}


def count_work(resolved, points: list[tuple[dict, int]]) -> tuple[int, int]:
    """(trials, training steps in all) of the sweep's `points` (`stage_points`), each once per seed."""
    seeds = len(resolved.seeds)
    return seeds * len(points), seeds * sum(steps for _, steps in points)


def stage_points(resolved, stages: list[tuple[str, dict]], options: SweepOptions,
                 from_each: dict[str, str] | None = None) -> tuple[list[int], list[tuple[dict, int]]]:
    """(points per stage, (config, training steps of one trial) of every point of every stage): every grid
    point of every stage, an Optuna stage as `num_configs` points at its axes' first values; a stage chained to
    each configuration of an earlier stage (`from_each`) runs once per such configuration."""
    per_stage, points_of, configs = [], {}, []
    axes_of = dict(stages)
    for stage_name, axes in stages:
        if options.search == "optuna":
            points = [{name: values_to_validate(axis)[0] for name, axis in axes.items()}] * options.num_configs
        else:
            names = list(axes)
            points = [dict(zip(names, combination)) for combination in
                      itertools.product(*(list(axes[name]) for name in names))]
        earlier = (from_each or {}).get(stage_name)
        # a stage of each earlier configuration of the same target task runs once per configuration of that task
        per_task = TASK_AXIS in axes and TASK_AXIS in axes_of.get(earlier, {})
        points *= points_of.get(earlier, 1) // (len(axes[TASK_AXIS]) if per_task else 1)
        points_of[stage_name] = len(points)
        per_stage.append(len(points))
        by_task = settings_by_task(resolved.task_data, axes)
        for point in points:
            point = point | {name: values[point[TASK_AXIS]] for name, values in by_task.items()}
            config = with_method_settings(resolved.constants | point, resolved.method_settings, axes)
            configs.append((config, trial_steps(config, corpus_size_of(config, resolved.task_data,
                                                                       resolved.corpus_size))))
    return per_stage, configs


def gpu_estimate(resolved, points: list[tuple[dict, int]], options: SweepOptions, model: str) -> GpuEstimate:
    """The sweep's GPU-hours estimated from the probes its storage path keeps (`sentsweep.sweep.compute.gpu_estimate`):
    each training trial of `points` (`stage_points`) by its key with `model`, the model a launch's probes name."""
    trials = [(probe_key(config | {"model": model}), steps) for config, steps in points
              if get_method(config["method"]).trains] * len(resolved.seeds)
    path = probes_file(resolved.storage_path)
    stored = read_probes(path) if path and options.gpus_per_trial else []  # on CPUs, as a launch, it reads none
    return estimate_gpu_hours(trials, options.gpus_per_trial, path, stored)


def trial_steps(config: dict, corpus_size: int) -> int:
    """Optimisation steps of one trial of `config` (0 for a method that trains nothing)."""
    if not get_method(config["method"]).trains:
        return 0
    training = TrainingSettings.from_config({"model": "-"} | config)
    return training.total_steps(max(training_sentences(config, corpus_size), 1))


def _values(values) -> str:
    """An axis's values as the card prints them: a grid's list, or a Ray Tune domain an Optuna search samples
    (told by its attributes, as `param_spaces.values_to_validate` tells them): "sampled from cls, mean, max",
    "sampled uniform from 0.1 to 0.9", "sampled log-uniform from 1e-05 to 0.001"."""
    if isinstance(values, list):
        return ", ".join(map(_value, values))
    if hasattr(values, "categories"):  # tune.choice
        return "sampled from " + ", ".join(map(_value, values.categories))
    if hasattr(values, "lower") and hasattr(values, "upper"):  # tune.uniform, tune.loguniform
        scale = "log-uniform" if type(getattr(values, "sampler", None)).__name__ == "_LogUniform" else "uniform"
        return f"sampled {scale} from {_value(values.lower)} to {_value(values.upper)}"
    return str(values)


def _value(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, int):
        return f"{value:,}" if value >= 10_000 else str(value)
    return str(value)
