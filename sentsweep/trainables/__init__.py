"""Ray Tune trainables, one per method family, and `train`, which runs a trial of any method."""

from __future__ import annotations


def _method(name: str):
    """(trainable, validate the method's own settings) for a method name (see `get_method`)."""
    from sentsweep.trainables.lexical_baselines import LEXICAL_METHODS, train_lexical, validate_lexical_config

    if name in LEXICAL_METHODS:
        return train_lexical, validate_lexical_config
    from sentsweep.trainables.supervised import SUPERVISED_METHODS, train_supervised, validate_supervised_config

    if name in SUPERVISED_METHODS:
        return train_supervised, validate_supervised_config
    if name == "gpl":
        from sentsweep.trainables.gpl import train_gpl, validate_gpl_config

        return train_gpl, validate_gpl_config
    from sentsweep.trainables.objectives import parse_method, validate_config
    from sentsweep.trainables.unsupervised import train_unsupervised

    parse_method(name)
    return train_unsupervised, validate_config


def get_method(name: str):
    """(trainable, validate_config) for a method name; an unknown name is an `InputError` listing the known ones.

    Lexical baselines: 'tfidf', 'bm25'. Supervised: 'sbert', 'augsbert'; domain adaptation for retrieval:
    'gpl'. Unsupervised methods: an objective of sentsweep.trainables.objectives or two joined by '+' (e.g. 'mlm+nm').
    validate_config checks the method's own settings and those of the shared loop (precision).
    """
    return _with_shared_checks(_method(name))


def _with_shared_checks(pair):
    from sentsweep.trainables.loop import check_shared_settings

    trainable, validate = pair

    def validate_config(config: dict) -> None:
        check_shared_settings(config)
        validate(config)

    return trainable, validate_config


def train(config: dict, session=None) -> None:
    """Ray Tune function trainable: the trial of `config['method']`, whichever family it belongs to."""
    trainable, _ = get_method(config["method"])
    trainable(config, session)
