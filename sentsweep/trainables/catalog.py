"""Every method by name, and the typed trial a config dict becomes: where a Ray Tune trial starts.

Methods: the lexical baselines (`tfidf`, `bm25`), a model as released (`frozen_encoder`), the supervised ones
(`sbert`, `augsbert`), `gpl`, and every unsupervised method: an objective of
`sentsweep.trainables.objectives.OBJECTIVES` or two joined by '+' (`mlm+nm`). A config holds the settings of the
shared loop, of the evaluation and of its method under flat keys; a key that is no setting of any method is refused,
with the closest known key suggested, and every value is checked against its field (type, range, choices) before
anything is loaded.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from sentsweep.errors import InputError
from sentsweep.plugins import USER_CODE_KEY, import_user_modules
from sentsweep.random_seeds import resolve_seed
from sentsweep.registry import Registry, closest
from sentsweep.settings import Settings
from sentsweep.trainables.augsbert import AUGSBERT_METHOD
from sentsweep.trainables.frozen_encoder import FROZEN_ENCODER_METHOD
from sentsweep.trainables.gpl import GPL_METHOD
from sentsweep.trainables.lexical_baselines import LEXICAL_METHODS
from sentsweep.trainables.objectives import OBJECTIVES, UnsupervisedSettings
from sentsweep.trainables.sbert import SBERT_METHODS
from sentsweep.trainables.settings import BOOKKEEPING_KEYS, EvaluationSettings, Method, TrainingSettings, Trial
from sentsweep.trainables.st_losses import built_st_methods, is_st_method, st_method
from sentsweep.trainables.topic_classifier import TOPIC_CLASSIFIER_METHOD
from sentsweep.trainables.unsupervised import unsupervised_method

METHODS: Registry[Method] = Registry("method")
for _method in (*LEXICAL_METHODS, FROZEN_ENCODER_METHOD, *SBERT_METHODS, AUGSBERT_METHOD, TOPIC_CLASSIFIER_METHOD,
                GPL_METHOD):
    METHODS.add(_method.name, _method)


def get_method(name: str) -> Method:
    """The method `name`; an unknown name is an `InputError` that suggests the closest method or objective."""
    if name in METHODS:
        return METHODS.get(name)
    if is_st_method(name):
        return st_method(name)
    if "+" not in str(name) and name not in OBJECTIVES:
        suggestion = closest(name, METHODS.names() + OBJECTIVES.names())
        hint = f"; did you mean {suggestion!r}?" if suggestion else ""
        raise InputError(f"unknown method {name!r}{hint} (known: {', '.join(METHODS.names())}, one of "
                         f"{', '.join(OBJECTIVES.names())} or two of those joined by '+', or st:<a "
                         "sentence-transformers loss>)")
    return unsupervised_method(name)


def settings_groups() -> list[type[Settings]]:
    """Every settings class: the shared loop's and evaluation's, each method's and each objective's."""
    groups = [TrainingSettings, EvaluationSettings] + [method.settings for _, method in METHODS.items()]
    groups += [method.settings for method in built_st_methods()]
    return groups + [spec.settings for _, spec in OBJECTIVES.items()] + [UnsupervisedSettings]


def known_setting_names() -> set[str]:
    """Every key a trial config may hold: the settings of every method and objective, and bookkeeping."""
    return {name for group in settings_groups() for name in group.field_names()} | set(BOOKKEEPING_KEYS)


def setting_default(name: str):
    """The default of setting `name` (the first settings class that declares it); an `InputError` when it has
    none (an input such as the model or the learning rate)."""
    for group in settings_groups():
        for row in group.describe():
            if row.name == name and not row.source.is_input:
                return row.default
    raise InputError(f"setting {name!r} has no default: the sweep must give it")


def check_setting_value(name: str, value) -> None:
    """An `InputError` (the first class's) where no settings class declaring setting `name` takes `value`; a key
    no class declares is `check_keys`'s to refuse."""
    errors = []
    for group in settings_groups():
        if name in group.field_names():
            try:
                group.check_value(name, value)
                return
            except InputError as error:
                errors.append(error)
    if errors:
        raise errors[0]


def check_keys(config: Mapping) -> None:
    """An `InputError` for the first key of `config` that is no known setting, suggesting the closest."""
    known = known_setting_names()
    for key in config:
        if key not in known:
            suggestion = closest(key, known)
            hint = f"; did you mean {suggestion!r}?" if suggestion else ""
            raise InputError(f"unknown setting {key!r}{hint}")


def resolve_trial(config: Mapping) -> Trial:
    """The typed trial of a config dict; the first bad key or value is an `InputError` naming it."""
    if "method" not in config:
        raise InputError("the config names no method")
    method = get_method(config["method"])
    check_keys(config)
    trial = Trial(
        method=method.name,
        seed=resolve_seed(config),
        evaluation=EvaluationSettings.from_config(config),
        training=TrainingSettings.from_config(config) if method.trains else None,
        settings=method.settings.from_config(config),
        objectives={name: settings.from_config(config) for name, settings in method.objectives.items()},
    )
    if trial.evaluation.select_checkpoint == "validation_loss" and not method.objectives:
        raise InputError(f"select_checkpoint='validation_loss' needs an unsupervised method (its loss on held-out "
                         f"corpus sentences); method {method.name!r} is not one")
    method.check(trial)
    return without_unread_data(trial, method.unread_data(trial))


def without_unread_data(trial: Trial, unread: tuple[str, ...]) -> Trial:
    """`trial` with the data settings `unread` (a method's `unread_data`) set to none in every group that has them."""
    if not unread:
        return trial

    def cleared(group: Settings | None):
        names = {name: None for name in unread if group is not None and name in group.field_names()}
        return dataclasses.replace(group, **names) if names else group

    return dataclasses.replace(trial, evaluation=cleared(trial.evaluation), training=cleared(trial.training),
                               settings=cleared(trial.settings),
                               objectives={name: cleared(group) for name, group in trial.objectives.items()})


def validate_config(config: Mapping) -> Trial:
    """`resolve_trial` for a config checked before launch, which has no seed yet."""
    return resolve_trial({"seed": 0, **config} if "seed" not in config and "seeds" not in config else config)


def train(config: dict, session=None) -> None:
    """Ray Tune function trainable: a trial of any method (the researcher's own modules imported first)."""
    import_user_modules(config.get(USER_CODE_KEY, []))
    trial = resolve_trial(config)
    get_method(trial.method).run(trial, session)
