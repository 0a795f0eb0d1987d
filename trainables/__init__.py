"""Ray Tune trainables, one per method family, registered by method name."""

from __future__ import annotations

from sentsweep.errors import InputError


def _registry() -> dict:
    from trainables.tsdae import train_tsdae, validate_tsdae_config

    return {"tsdae": (train_tsdae, validate_tsdae_config)}


def get_method(name: str):
    """(trainable, validate_config) of a method; an unknown name is an `InputError` listing the known ones."""
    registry = _registry()
    if name not in registry:
        raise InputError(f"unknown method {name!r}; expected one of {', '.join(sorted(registry))}")
    return registry[name]
