"""Any sentence-transformers loss as a method, with no code: `st:<LossName>` (`st:CoSENTLoss`, `st:AnglELoss`,
`st:MultipleNegativesRankingLoss`, ...), trained by the shared loop like every method.

Details: docs/extending.md, "How a sentence-transformers loss becomes a method"."""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path
from types import SimpleNamespace

import torch

from sentsweep.data import ScoredPairs, is_useb_training_folder
from sentsweep.errors import InputError
from sentsweep.models import load_sentence_model, preprocess_on_device
from sentsweep.references import Reference
from sentsweep.registry import closest
from sentsweep.settings import Settings, cited, project_choice, required_input, setting
from sentsweep.trainables.loop import TrainingSetup, run_trial
from sentsweep.trainables.sbert import gold_pairs
from sentsweep.trainables.settings import Method, Trial

PREFIX = "st:"
# The inputs each loss reads (sentence-transformers' "Inputs" table of each loss), first the default.
LOSS_INPUTS: dict[str, tuple[str, ...]] = {
    "CoSENTLoss": ("pairs_with_scores",),
    "AnglELoss": ("pairs_with_scores",),
    "CosineSimilarityLoss": ("pairs_with_scores",),
    "MultipleNegativesRankingLoss": ("pairs", "sentence_twice"),
    "MultipleNegativesSymmetricRankingLoss": ("pairs", "sentence_twice"),
    "CachedMultipleNegativesRankingLoss": ("pairs", "sentence_twice"),
    "ContrastiveTensionLossInBatchNegatives": ("sentence_twice",),
}
INPUT_COLUMNS = {"pairs_with_scores": "(sentence1, sentence2, score) of the labelled pairs (train_file)",
                 "pairs": "(anchor, positive) of the labelled pairs (train_file)",
                 "sentence_twice": "(sentence, sentence) of the corpus"}
# The range of a loss argument by its name, where the argument's meaning gives one (sentence-transformers'
# docstrings: "scale = 1 / temperature", a similarity multiplied by the scale; "hardness_strength ... Must be
# non-negative"; a margin is a distance; a mini-batch holds examples).
ARGUMENT_RANGES: dict[str, dict[str, float]] = {
    "scale": {"gt": 0}, "temperature": {"gt": 0}, "margin": {"gt": 0}, "hardness_strength": {"ge": 0},
    "mini_batch_size": {"ge": 1},
}
POSITIVE_THRESHOLD = project_choice(
    "a scored pair is an (anchor, positive) pair at score / score_max >= 0.8: 4 and above on STS-B's 0-5, the "
    "pairs its annotators judged equivalent or mostly so; the low-scored pairs are unrelated sentences, no positives")
SENTENCE_TRANSFORMERS = Reference("sentence-transformers", "UKPLab", "sentence-transformers (the library)", None,
                                  "https://www.sbert.net")


def is_st_method(name: str) -> bool:
    return isinstance(name, str) and name.startswith(PREFIX)


@dataclasses.dataclass(frozen=True)
class StLossSettings(Settings):
    """What every sentence-transformers loss method reads besides the loss's own arguments."""

    pooling: str = setting("mean", "how token vectors become the sentence vector",
                           cited(SENTENCE_TRANSFORMERS, "models.Pooling", "pooling_mode default: mean"),
                           choices=("mean", "cls", "max"))
    train_file: str | None = setting(None, "the labelled pairs, for a loss that reads pairs", required_input())
    score_max: float = setting(5.0, "gold scores are divided by it to lie in [0, 1] (pairs_with_scores)",
                               cited(SENTENCE_TRANSFORMERS, "CosineSimilarityLoss", "labels in [0, 1]"), gt=0)
    st_inputs: str = setting("", "what the loss is fed (sentsweep.trainables.st_losses): its first kind unless set",
                             cited(SENTENCE_TRANSFORMERS, "the loss's Inputs table"))


def loss_class(name: str):
    """The sentence-transformers loss class `name`; an `InputError` suggesting the closest loss otherwise."""
    # lazy: sentence_transformers
    from sentence_transformers.sentence_transformer import losses

    known = [entry for entry in dir(losses) if entry.endswith("Loss") and isinstance(getattr(losses, entry), type)]
    if name not in known:
        suggestion = closest(name, known)
        raise InputError(f"method '{PREFIX}{name}': sentence-transformers has no loss {name!r}"
                         + (f"; did you mean {PREFIX}{suggestion}?" if suggestion else ""))
    if name not in LOSS_INPUTS:
        raise InputError(f"method {PREFIX}{name}: sentsweep does not know what the loss reads; the losses it can feed "
                         f"from pairs or a corpus: {', '.join(PREFIX + loss for loss in LOSS_INPUTS)}")
    return getattr(losses, name)


def _arguments(cls) -> list[inspect.Parameter]:
    """The loss's constructor arguments after `model` (self and model left out)."""
    return list(inspect.signature(cls.__init__).parameters.values())[2:]


def _literal_choices(annotation) -> tuple:
    text = annotation if isinstance(annotation, str) else str(annotation)
    match = re.fullmatch(r"Literal\[(.+)\]", text.strip())
    return tuple(part.strip().strip("'\"") for part in match.group(1).split(",")) if match else ()


def citation(cls) -> str:
    """The loss's `citation` (BibTeX) as its defaults give it, '' where it has none."""
    try:
        prop = inspect.getattr_static(cls, "citation")
        defaults = SimpleNamespace(**{argument.name: argument.default for argument in _arguments(cls)})
        return (prop.fget(defaults) if isinstance(prop, property) else str(prop)) or ""
    except (AttributeError, TypeError):
        return ""


def _reference(name: str, bibtex: str) -> Reference:
    """The work a loss cites, read from its BibTeX (else the library itself)."""
    def field(key: str) -> str:
        match = re.search(rf"\b{key}\s*=\s*[{{\"](.+?)[}}\"]\s*,?\s*\n", bibtex, re.IGNORECASE)
        return re.sub(r"[{}]", "", match.group(1)).strip() if match else ""

    if not bibtex:
        return dataclasses.replace(SENTENCE_TRANSFORMERS, label=name)
    year = field("year")
    venue = field("journal") or field("booktitle") or field("publisher") or "venue not given"
    return Reference(name, field("author") or "no author given", field("title") or name,
                     int(year) if year.isdigit() else None, venue)


_BUILT: dict[str, Method] = {}  # the st: methods this process has named, built once each


def built_st_methods() -> list[Method]:
    """The st: methods named so far (their settings join the known settings)."""
    return list(_BUILT.values())


def st_method(method: str) -> Method:
    """The method `st:<LossName>`: settings from the loss's signature, inputs, and its citation."""
    if method in _BUILT:
        return _BUILT[method]
    name = method[len(PREFIX):]
    cls = loss_class(name)
    kinds = LOSS_INPUTS[name]
    # sentsweep's own settings whose default depends on the loss: the kind it is fed, the positives' threshold
    fields = [("st_inputs", str, setting(kinds[0], "what the loss is fed (sentsweep.trainables.st_losses): "
                                         f"{' or '.join(kinds)}", cited(SENTENCE_TRANSFORMERS, f"{name}'s Inputs table",
                                                                        f"first: {kinds[0]}")))]
    if "pairs" in kinds:
        fields.append(("positive_threshold", float | None, setting(
            0.8, "st_inputs=pairs: a scored pair is a positive at score / score_max >= it (none: every pair is, "
            "for relevant pairs without scores)", POSITIVE_THRESHOLD, ge=0, le=1)))
    for argument in _arguments(cls):
        default = argument.default
        if isinstance(default, bool) or type(default) in (int, float, str):
            kind = float if isinstance(default, float) else type(default)
            source = cited(SENTENCE_TRANSFORMERS, f"{name}.__init__", f"default {argument.name}={default!r}")
            choices = _literal_choices(argument.annotation) if kind is str else ()
            fields.append((argument.name, kind, setting(default, f"{name}'s argument {argument.name}", source,
                                                        choices=choices, **ARGUMENT_RANGES.get(argument.name, {}))))
    settings = dataclasses.make_dataclass(f"{name}Settings", fields, bases=(StLossSettings,), frozen=True,
                                          namespace={"__post_init__": _threshold_of_pairs_only})
    return _BUILT.setdefault(method, Method(method, settings, run_st_loss, _reference(name, citation(cls)),
                                            check=check_st_inputs, citation=citation(cls), unread_data=unread_data))


def _threshold_of_pairs_only(settings: StLossSettings) -> None:
    """The positives' threshold applies to st_inputs=pairs only: none for any other kind (no param of a value the
    trial does not use)."""
    if settings.st_inputs != "pairs" and getattr(settings, "positive_threshold", None) is not None:
        object.__setattr__(settings, "positive_threshold", None)


def unread_data(trial: Trial) -> tuple[str, ...]:
    """(x, x) of the corpus reads no labelled pairs; pairs read no corpus."""
    return ("train_file",) if trial.settings.st_inputs == "sentence_twice" else ("corpus",)


def loss_arguments(trial: Trial) -> dict:
    """The loss's constructor arguments the trial sets (every field of its settings but sentsweep's own: those of
    `StLossSettings` and the positives' threshold)."""
    own = {field.name for field in dataclasses.fields(StLossSettings)} | {"positive_threshold"}
    return {field.name: getattr(trial.settings, field.name) for field in dataclasses.fields(trial.settings)
            if field.name not in own}


def check_st_inputs(trial: Trial) -> None:
    """The inputs asked for are the loss's, and the sweep's data has them (labelled pairs where it reads pairs);
    a positives' threshold only where the pairs have scores."""
    name, kind, settings = trial.method[len(PREFIX):], trial.settings.st_inputs, trial.settings
    if kind not in LOSS_INPUTS[name]:
        raise InputError(f"method {trial.method}: st_inputs={kind!r} is not what the loss reads: "
                         + "; ".join(f"{option}: {INPUT_COLUMNS[option]}" for option in LOSS_INPUTS[name]))
    if kind != "sentence_twice" and not settings.train_file:
        raise InputError(f"method {trial.method} reads {INPUT_COLUMNS[kind]}, which this sweep does not give (no "
                         "train_file: a sweep over labelled pairs, or --set train_file=...)"
                         + ("; it can also read (sentence, sentence) of the corpus: --set st_inputs=sentence_twice"
                            if "sentence_twice" in LOSS_INPUTS[name] else ""))
    threshold = getattr(settings, "positive_threshold", None)  # a setting of the losses that read pairs
    if kind == "pairs" and threshold is not None and unscored_pairs(settings.train_file):
        raise InputError(f"method {trial.method}: train_file={settings.train_file!r} holds relevant pairs without "
                         f"scores, every one a positive: positive_threshold={threshold} has nothing "
                         "to compare; --set positive_threshold=null")


def unscored_pairs(path: str) -> bool:
    """Relevant pairs without scores: a USEB training folder of train.org / train.para (`read_useb_training_pairs`
    gives each the score 1)."""
    return is_useb_training_folder(path) and not (Path(path) / "train.s1").is_file()


def positives(trial: Trial, pairs: ScoredPairs) -> list[tuple[str, str, float]]:
    """(anchor, positive, score / score_max) of the pairs the loss takes: all of them, or for st_inputs=pairs with
    a threshold those at score / score_max >= it; an `InputError` when fewer than two are left (no in-batch
    negative)."""
    settings = trial.settings
    threshold = getattr(settings, "positive_threshold", None)
    examples = [(a, b, score / settings.score_max) for a, b, score in zip(pairs.sentences1, pairs.sentences2,
                                                                           pairs.scores)]
    if settings.st_inputs != "pairs" or threshold is None:
        return examples
    kept = [example for example in examples if example[2] >= threshold]
    if len(kept) < 2:
        raise InputError(f"method {trial.method}: {len(kept)} of the {len(examples)} pairs of {pairs.source} reach "
                         f"positive_threshold={threshold} (score / score_max, score_max={settings.score_max}); "
                         "the loss needs two at least")
    return kept


def run_st_loss(trial: Trial, session) -> None:
    run_trial(trial, build_st_loss, session)


def build_st_loss(trial: Trial):
    """The shared loop's setup: the model, the loss with the trial's arguments, and its batches."""
    settings, training = trial.settings, trial.training
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = load_sentence_model(training.model, settings.pooling, training.max_seq_length, device=device,
                                dropout=training.dropout)
    loss = loss_class(trial.method[len(PREFIX):])(model, **loss_arguments(trial)).to(device)
    kind = settings.st_inputs
    if kind == "sentence_twice":
        def batch_loss(sentences, rng):
            features = preprocess_on_device(model, sentences)
            return loss([features, dict(features)], None)

        return TrainingSetup(model=model, module=loss, batch_loss=batch_loss)
    pairs = gold_pairs(trial)
    examples = positives(trial, pairs)

    def batch_loss(batch, rng):
        first = preprocess_on_device(model, [example[0] for example in batch])
        second = preprocess_on_device(model, [example[1] for example in batch])
        labels = (torch.tensor([example[2] for example in batch], dtype=torch.float32, device=model.device)
                  if kind == "pairs_with_scores" else None)
        return loss([first, second], labels)

    counts = {"gold_pairs": len(pairs)} | ({"positive_pairs": len(examples)} if kind == "pairs" else {})
    return TrainingSetup(model=model, module=loss, batch_loss=batch_loss, examples=examples, metrics=counts)

