"""Ray Tune trainables, one per method family, and `train`, which runs a trial of any method."""

from __future__ import annotations


def get_method(name: str):
    """(trainable, validate_config) for a method name; an unknown name is an `InputError` listing the known ones.

    Lexical baselines: 'tfidf'. Unsupervised methods: an objective of trainables.objectives or two joined by
    '+' (for example 'mlm+nm').
    """
    from trainables.lexical import LEXICAL_METHODS, train_lexical, validate_lexical_config

    if name in LEXICAL_METHODS:
        return train_lexical, validate_lexical_config
    from trainables.objectives import parse_method, validate_config
    from trainables.unsupervised import train_unsupervised

    parse_method(name)
    return train_unsupervised, validate_config


def train(config: dict, session=None) -> None:
    """Ray Tune function trainable: the trial of `config['method']`, whichever family it belongs to."""
    trainable, _ = get_method(config["method"])
    trainable(config, session)
