"""Losses that sentence-transformers lacks (Noise Matching, SimCSE-BCE, ConSERT, CLM / MLM auto-encoders, MLM on
a shared encoder), TSDAE computed as sentence-transformers does with less work, and Contrastive Tension as the
TSDAE paper defines it (on sentence-transformers' ContrastiveTensionLoss).

Each loss names the work it implements in `reference` and gives its BibTeX entry as `citation`. Each follows
sentence-transformers' loss contract (`forward(sentence_features, labels)`, `get_config_dict()`, `citation`, an
Inputs table in its docstring), so `SentenceTransformerTrainer` trains with it. The classes are importable from
here (`from sentsweep.losses import SimCseBceLoss`); a module is imported when one of its classes is first asked
for, so those built on sentence-transformers' classes load it only then.
"""

import importlib

_MODULE_OF = {
    "NoiseMatchingLoss": "contrastive", "SimCseLoss": "contrastive", "SimCseBceLoss": "contrastive",
    "ConsertLoss": "consert", "ContrastiveTensionBceLoss": "contrastive_tension", "TsdaeLoss": "tsdae",
    "ClmAutoEncoderLoss": "reconstruction", "MlmAutoEncoderLoss": "reconstruction",
    "MaskedLanguageModelingLoss": "reconstruction",
}
__all__ = list(_MODULE_OF)


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_MODULE_OF[name]}"), name)
