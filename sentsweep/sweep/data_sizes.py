"""How many sentences each trial trains on, and what a sweep's sizes cannot do with its corpus.

A trial of an unsupervised method trains on the corpus, less the `validation_size` sentences held out for
`select_checkpoint=validation_loss` (none when a `validation_file` holds the validation sentences), at most
`sample_size` of them (a method of labelled pairs counts `sample_size` in pairs of its training file).
A `sample_size` above that is refused before launch: the trial would train on fewer sentences than its
size says. A batch larger than the training sentences is one batch of all of them per step (the training
loop's `BatchSchedule`); the card says which trials that concerns.
"""

from __future__ import annotations

from sentsweep.sweep.definition import ResolvedSweep
from sentsweep.sweep.trials import trial_configs
from sentsweep.trainables.catalog import get_method, setting_default


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


def grid_stages(stages: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    """The stages whose axes are all lists (an Optuna stage's ranges have no trials to list before it runs)."""
    return [(name, axes) for name, axes in stages if all(isinstance(values, list) for values in axes.values())]


def sample_size_problems(resolved: ResolvedSweep, stages: list[tuple[str, dict]]) -> list[str]:
    """One line per `sample_size` above the sentences its trials could train on (none without a corpus)."""
    problems = {}
    if "corpus" not in resolved.constants:
        return []
    for _, config in trial_configs(resolved, grid_stages(stages)):
        if not trains_on_corpus(config):
            continue
        size = config.get("sample_size")
        available = resolved.corpus_size - held_out_sentences(config)
        if size is not None and size > available:
            held = f", {resolved.corpus_size - available} more held out for validation" if available < \
                resolved.corpus_size else ""
            problems[size] = (f"sample size {size} exceeds the corpus's {available} sentences ({config['corpus']}"
                              f"{held}); give a larger --corpus or leave the size out (--sample-sizes)")
    return [problems[size] for size in sorted(problems)]


def whole_corpus_batches(resolved: ResolvedSweep, stages: list[tuple[str, dict]]) -> list[str]:
    """One line per method and size whose batch is larger than its training sentences: each of its steps is
    those sentences once."""
    lines = {}
    if "corpus" not in resolved.constants:
        return []
    for _, config in trial_configs(resolved, grid_stages(stages)):
        if not trains_on_corpus(config):
            continue
        sentences = training_sentences(config, resolved.corpus_size)
        if config["batch_size"] > sentences:
            lines[(config["method"], config["batch_size"], sentences)] = (
                f"{config['method']} at batch size {config['batch_size']} on {sentences} training sentences: "
                f"each step is the {sentences} sentences once (a batch holds no sentence twice)")
    return list(lines.values())
