"""No demo data in a real run: where the shipped demo files (`sentsweep.demo_data`) may stand in for data the
command line does not give.

They serve the demo only: `--quick` with no evaluation data given (and the card of a `--dry-run` without
evaluation data, which lists what a run as given lacks). There the demo
corpus stands in for `--corpus` and the demo STS pairs for `--sts-dir`. Anywhere else the data a sweep's trials
read must be given: a run without `--quick`, or one given real evaluation data, is refused before launch (exit 2,
one line naming the option) when a trial of it reads a corpus and `--corpus` is missing; without `--quick` the
evaluation pairs are required too. A sweep whose methods read no corpus (labelled pairs, NLI triplets, a
sentence-transformers loss fed pairs) runs without one, and no trial reads or records a corpus.
"""

from __future__ import annotations

from sentsweep.errors import InputError
from sentsweep.sweep.config.options import SweepOptions
from sentsweep.trainables.catalog import get_method, validate_config

EVALUATION_OPTIONS = ("sts_dir", "sick_file", "hf_sts")


def evaluation_data_given(options: SweepOptions) -> bool:
    return any(getattr(options, option) for option in EVALUATION_OPTIONS)


def demo_data_serves(options: SweepOptions) -> bool:
    """Whether the demo files stand in for data not given: the demo, and the card of a `--dry-run` without
    evaluation data (its numbers, as the demo's; the card lists what a run as given lacks)."""
    return (options.quick or options.dry_run) and not evaluation_data_given(options)


def corpus_given(options: SweepOptions, protocol_settings: dict) -> bool:
    """Whether the sweep has a corpus of its own choosing: --corpus, each target task's own (--task-corpus, whose
    cover of the tasks `sentsweep.sweep.search.target_tasks` checks), its protocol's, or the demo's in the demo."""
    return bool(options.corpus or getattr(options, "task_corpus", ()) or protocol_settings.get("corpus")) or (
        options.quick and not evaluation_data_given(options))


def missing_evaluation_data_problem(options: SweepOptions) -> str | None:
    """Why the sweep cannot run on the demo's evaluation pairs: it is no --quick run."""
    if options.quick or evaluation_data_given(options):
        return None
    return ("--sts-dir (an STS benchmark folder), --sick-file or --hf-sts is required without --quick: the shipped "
            "demo pairs serve --quick only")


def corpus_readers(points: dict[str, dict]) -> list[str]:
    """The methods, of {method: a checked config of it} (the launcher's `validate_axes`), whose trials read a
    corpus."""
    return sorted(method for method, point in points.items() if get_method(method).reads_corpus(validate_config(point)))


def missing_corpus_problem(given: bool, points: dict[str, dict], options: SweepOptions) -> str | None:
    """Why the sweep cannot run as given, where it has no corpus (`given`: `corpus_given`) and a method of it
    ({method: a checked config of it}) reads one."""
    if given:
        return None
    readers = corpus_readers(points)
    if not readers:
        return None
    why = ("without --quick" if not options.quick else
           "given evaluation data (" + ", ".join(f"--{option.replace('_', '-')}" for option in EVALUATION_OPTIONS
                                                  if getattr(options, option)) + ")")
    return (f"--corpus is required: {', '.join(readers)} train{'s' if len(readers) == 1 else ''} on a corpus, and the "
            f"shipped demo corpus serves only the demo (--quick with the shipped evaluation pairs), not a run {why}")


def check_data_given(given: bool, points: dict[str, dict], options: SweepOptions) -> None:
    """`missing_corpus_problem` as an `InputError`."""
    problem = missing_corpus_problem(given, points, options)
    if problem:
        raise InputError(problem)
