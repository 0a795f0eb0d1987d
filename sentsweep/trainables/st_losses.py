"""Any sentence-transformers loss as a method, with no code: `st:<LossName>` (`st:CoSENTLoss`, `st:AnglELoss`,
`st:MultipleNegativesRankingLoss`, ...), trained by the shared loop like every method.

The method's settings are the loss's own constructor arguments, read from its signature: each argument after
`model` whose default is a number, a boolean or a string becomes a typed field with that default (its source:
the loss's signature in sentence-transformers; a `Literal[...]` annotation gives its choices), so `--set
scale=30` is checked as any setting is, and a misspelled argument is refused with the closest suggested.
Arguments without such a default (a similarity function, an inner loss) keep the loss's own.

What a loss reads is its inputs, as sentence-transformers documents them for each loss ("Inputs"); sentsweep
feeds each kind from the sweep's data (`st_inputs`, among those the loss takes, `LOSS_INPUTS`):

- `pairs_with_scores`: (sentence1, sentence2) and the gold score / score_max, from the labelled pairs
  (`train_file`): CoSENTLoss, AnglELoss, CosineSimilarityLoss;
- `pairs`: (anchor, positive) from the labelled pairs, the batch's other positives as negatives;
- `sentence_twice`: (x, x) for each corpus sentence, the two copies differing by dropout: MNRL so is unsupervised
  SimCSE, ContrastiveTensionLossInBatchNegatives is CT with in-batch negatives.

A loss sentsweep has no input kind for is refused, naming it and those it knows. The method's reference is the
loss's own `citation` (BibTeX), which the protocol card prints.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from types import SimpleNamespace

import torch

from sentsweep.errors import InputError
from sentsweep.models import load_sentence_model, preprocess_on_device
from sentsweep.references import Reference
from sentsweep.registry import closest
from sentsweep.settings import Settings, cited, required_input, setting
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
    # lazy: sentence-transformers is heavy; the catalog lists and checks methods without it until one is st:
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
    fields = []
    for argument in _arguments(cls):
        default = argument.default
        if isinstance(default, bool) or type(default) in (int, float, str):
            kind = float if isinstance(default, float) else type(default)
            source = cited(SENTENCE_TRANSFORMERS, f"{name}.__init__", f"default {argument.name}={default!r}")
            choices = _literal_choices(argument.annotation) if kind is str else ()
            fields.append((argument.name, kind, setting(default, f"{name}'s argument {argument.name}", source,
                                                        choices=choices)))
    settings = dataclasses.make_dataclass(f"{name}Settings", fields, bases=(StLossSettings,), frozen=True)
    return _BUILT.setdefault(method, Method(method, settings, run_st_loss, _reference(name, citation(cls)),
                                            check=check_st_inputs, citation=citation(cls)))


def loss_argument_defaults(method: str) -> dict:
    """{argument: default} of the loss's constructor arguments that are settings of method `method`."""
    own = {field.name for field in dataclasses.fields(StLossSettings)}
    return {field.name: field.default for field in dataclasses.fields(st_method(method).settings)
            if field.name not in own}


def loss_arguments(trial: Trial) -> dict:
    """The loss's constructor arguments the trial sets (every field of its settings but sentsweep's own)."""
    own = {field.name for field in dataclasses.fields(StLossSettings)}
    return {field.name: getattr(trial.settings, field.name) for field in dataclasses.fields(trial.settings)
            if field.name not in own}


def inputs_of(trial: Trial) -> str:
    name = trial.method[len(PREFIX):]
    return trial.settings.st_inputs or LOSS_INPUTS[name][0]


def check_st_inputs(trial: Trial) -> None:
    """The inputs asked for are the loss's, and the sweep's data has them (labelled pairs where it reads pairs)."""
    name, kind = trial.method[len(PREFIX):], inputs_of(trial)
    if kind not in LOSS_INPUTS[name]:
        raise InputError(f"method {trial.method}: st_inputs={kind!r} is not what the loss reads: "
                         + "; ".join(f"{option}: {INPUT_COLUMNS[option]}" for option in LOSS_INPUTS[name]))
    if kind != "sentence_twice" and not trial.settings.train_file:
        raise InputError(f"method {trial.method} reads {INPUT_COLUMNS[kind]}, which this sweep does not give (no "
                         "train_file: a sweep over labelled pairs, or --set train_file=...)"
                         + ("; it can also read (sentence, sentence) of the corpus: --set st_inputs=sentence_twice"
                            if "sentence_twice" in LOSS_INPUTS[name] else ""))


def run_st_loss(trial: Trial, session) -> None:
    run_trial(trial, build_st_loss, session)


def build_st_loss(trial: Trial):
    """The shared loop's setup: the model, the loss with the trial's arguments, and its batches."""
    settings, training = trial.settings, trial.training
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = load_sentence_model(training.model, settings.pooling, training.max_seq_length, device=device,
                                dropout=training.dropout)
    loss = loss_class(trial.method[len(PREFIX):])(model, **loss_arguments(trial)).to(device)
    kind = inputs_of(trial)
    if kind == "sentence_twice":
        def batch_loss(sentences, rng):
            features = preprocess_on_device(model, sentences)
            return loss([features, dict(features)], None)

        return TrainingSetup(model=model, module=loss, batch_loss=batch_loss)
    pairs = gold_pairs(trial)
    examples = [(a, b, score / settings.score_max) for a, b, score in zip(pairs.sentences1, pairs.sentences2,
                                                                           pairs.scores)]

    def batch_loss(batch, rng):
        first = preprocess_on_device(model, [example[0] for example in batch])
        second = preprocess_on_device(model, [example[1] for example in batch])
        labels = (torch.tensor([example[2] for example in batch], dtype=torch.float32, device=model.device)
                  if kind == "pairs_with_scores" else None)
        return loss([first, second], labels)

    return TrainingSetup(model=model, module=loss, batch_loss=batch_loss, examples=examples,
                         metrics={"gold_pairs": len(examples)})

