"""How many examples each trial trains on, and what a sweep's sizes and schedules cannot do with its data.

A trial of an unsupervised method trains on the corpus (its target task's, `sentsweep.sweep.search.target_tasks`), less
the `validation_size` sentences held out for `select_checkpoint=validation_loss` (none when a `validation_file`
holds the validation sentences), at most `sample_size` of them; a method of labelled pairs (SBERT, Augmented
SBERT's gold pairs: a `train_file`) counts `sample_size` in pairs of that file. A `sample_size` above what there
is to train on is refused before launch, for sentences and labelled pairs alike: the trial would train on fewer
examples than its size says. A batch larger than the training sentences is one batch of all of them per step (the
training loop's `BatchSchedule`); the card says which trials that concerns. A warm-up of more steps than a trial
takes leaves its learning rate below the peak its protocol gives; the card names those trials too.
"""

from __future__ import annotations

from functools import cache

from sentsweep.data import read_scored_pairs
from sentsweep.errors import InputError
from sentsweep.sweep.config.definition import ResolvedSweep
from sentsweep.sweep.search.target_tasks import corpus_size_of
from sentsweep.sweep.search.trials import trial_configs
from sentsweep.trainables.catalog import get_method, setting_default
from sentsweep.trainables.settings import TrainingSettings


def held_out_sentences(config: dict) -> int:
    """Corpus sentences a trial keeps out of training to select its checkpoint by validation loss."""
    if config.get("select_checkpoint") != "validation_loss" or config.get("validation_file"):
        return 0
    return config.get("validation_size", setting_default("validation_size"))


def training_sentences(config: dict, corpus_size: int) -> int:
    """The sentences one trial of `config` trains on, out of a corpus of `corpus_size`."""
    available = corpus_size - held_out_sentences(config)
    sample_size = config.get("sample_size")
    return available if sample_size is None else min(available, sample_size)


def trains_on_corpus(config: dict) -> bool:
    """Whether a trial trains on the corpus's sentences (an unsupervised method); SBERT and the other methods of
    labelled pairs count `sample_size` in pairs of their training file, and the baselines train nothing."""
    return bool(get_method(config["method"]).objectives)


def trains_on_labelled_pairs(config: dict) -> bool:
    """Whether a trial trains on the labelled pairs of its `train_file` (SBERT, Augmented SBERT's gold pairs)."""
    method = get_method(config["method"])
    return method.trains and not method.objectives and "train_file" in method.setting_names() and \
        config.get("train_file") is not None


@cache
def labelled_pairs(train_file: str, eval_format: str) -> int:
    """The labelled pairs of a training file."""
    return len(read_scored_pairs(train_file, eval_format, "train"))


def training_examples(config: dict, resolved: ResolvedSweep) -> int | None:
    """The examples one trial of `config` trains on: corpus sentences or labelled pairs (None: a method whose
    examples are made while it runs, such as silver pairs, or none)."""
    if trains_on_corpus(config):
        return training_sentences(config, corpus_size_of(config, resolved.task_data, resolved.corpus_size))
    if trains_on_labelled_pairs(config):
        pairs = labelled_pairs(config["train_file"], config.get("eval_format", "stsb"))
        size = config.get("sample_size")
        return pairs if size is None else min(size, pairs)
    return None


def grid_stages(stages: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    """The stages whose axes are all lists (an Optuna stage's ranges have no trials to list before it runs)."""
    return [(name, axes) for name, axes in stages if all(isinstance(values, list) for values in axes.values())]


def sample_size_problems(resolved: ResolvedSweep, stages: list[tuple[str, dict]]) -> list[str]:
    """One line per `sample_size` above the sentences or labelled pairs its trials could train on."""
    problems = {}
    for _, config in trial_configs(resolved, grid_stages(stages)):
        size = config.get("sample_size")
        if size is None:
            continue
        if trains_on_corpus(config) and config.get("corpus"):  # a corpus not given is refused where it is named
            corpus_size = corpus_size_of(config, resolved.task_data, resolved.corpus_size)
            available = corpus_size - held_out_sentences(config)
            if size > available:
                held = f", {corpus_size - available} more held out for validation" if available < corpus_size else ""
                problems[(size, config["corpus"])] = (
                    f"sample size {size} exceeds the corpus's {available} sentences ({config['corpus']}{held}); give "
                    "a larger --corpus or leave the size out (--sample-sizes)")
        elif trains_on_labelled_pairs(config):
            try:
                pairs = labelled_pairs(config["train_file"], config.get("eval_format", "stsb"))
            except InputError:
                continue  # an unreadable file is refused where it is named (the trial's own check)
            if size > pairs:
                problems[(size, config["train_file"])] = (
                    f"labelled size {size} exceeds the {pairs} labelled pairs of {config['train_file']} "
                    f"({config['method']}); give a larger training file or leave the size out")
    return [problems[key] for key in sorted(problems)]


def labelled_files(resolved: ResolvedSweep, stages: list[tuple[str, dict]]) -> dict[str, tuple[int, list[int]]]:
    """{training file: (its labelled pairs, the sample sizes trials draw from it)} of the trials of labelled pairs
    (an unreadable file is left out: it is refused where it is named)."""
    files: dict[str, tuple[int, set]] = {}
    for _, config in trial_configs(resolved, grid_stages(stages)):
        if not trains_on_labelled_pairs(config):
            continue
        try:
            pairs = labelled_pairs(config["train_file"], config.get("eval_format", "stsb"))
        except InputError:
            continue
        sizes = files.setdefault(config["train_file"], (pairs, set()))[1]
        if config.get("sample_size") is not None:
            sizes.add(config["sample_size"])
    return {path: (pairs, sorted(sizes)) for path, (pairs, sizes) in files.items()}


def whole_corpus_batches(resolved: ResolvedSweep, stages: list[tuple[str, dict]]) -> list[str]:
    """One line per method and size whose batch is larger than its training sentences: each of its steps is
    those sentences once (none where no sentence is left to train on: the sweep is refused for that)."""
    lines = {}
    if "corpus" not in resolved.constants:
        return []
    for _, config in trial_configs(resolved, grid_stages(stages)):
        if not trains_on_corpus(config):
            continue
        sentences = training_sentences(config, corpus_size_of(config, resolved.task_data, resolved.corpus_size))
        if 0 < sentences < config["batch_size"]:
            lines[(config["method"], config["batch_size"], sentences)] = (
                f"{config['method']} at batch size {config['batch_size']} on {sentences} training sentences: "
                f"each step is the {sentences} sentences once (a batch holds no sentence twice)")
    return list(lines.values())


def short_of_peak_rate(config: dict, resolved: ResolvedSweep) -> str | None:
    """Why a trial of `config` never trains at its peak learning rate (`lr`), if it does not: its warm-up lasts
    as long as its run or longer. None where it reaches it, or where its examples are only known once it runs."""
    if not get_method(config["method"]).trains:
        return None
    try:
        examples = training_examples(config, resolved)
    except InputError:  # an unreadable training file is refused where it is named
        return None
    if examples is None or examples <= 0:  # nothing to train on: the sweep is refused for that
        return None
    training = TrainingSettings.from_config({"model": "-"} | config)
    steps, warmup = training.total_steps(examples), training.warmup(examples)
    if warmup < steps:
        return None
    return (f"{config['method']} on {examples:,} training examples: its {steps:,} steps end within its {warmup:,}-step "
            f"warm-up, so its rate peaks at {training.lr * steps / warmup:.2g}, not {training.lr:g}")


def peak_rate_shortfalls(resolved: ResolvedSweep, stages: list[tuple[str, dict]]) -> list[str]:
    """One line per trial configuration that never reaches its peak learning rate (`short_of_peak_rate`)."""
    lines = {}
    for _, config in trial_configs(resolved, grid_stages(stages)):
        reason = short_of_peak_rate(config, resolved)
        if reason is not None:
            lines.setdefault(reason, None)
    return list(lines)
