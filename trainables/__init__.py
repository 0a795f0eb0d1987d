"""Ray Tune trainables, one per method family, looked up by method name."""

from __future__ import annotations


def get_method(name: str):
    """(trainable, validate_config) for a method name; an unknown name is an `InputError` listing the known ones.

    Unsupervised methods: an objective of trainables.objectives or two joined by '+' (for example 'mlm+nm').
    """
    from trainables.objectives import parse_method, validate_config
    from trainables.unsupervised import train_unsupervised

    parse_method(name)
    return train_unsupervised, validate_config
