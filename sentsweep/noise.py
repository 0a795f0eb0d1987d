"""Input noise for denoising objectives (TSDAE, Noise Matching), on word tokens.

Words are split with a small regex (words, numbers and single punctuation marks), so no NLTK data is needed;
the noisy words are joined with single spaces, which the model's own tokenizer splits again.
"""

from __future__ import annotations

import random
import re

from sentsweep.errors import InputError

_WORD_PATTERN = re.compile(r"\w+(?:['’-]\w+)*|[^\w\s]")


def split_words(sentence: str) -> list[str]:
    """Word tokens of a sentence: runs of word characters (with inner ' or -) and single punctuation marks."""
    return _WORD_PATTERN.findall(sentence)


def check_ratio(ratio: float, name: str = "deletion ratio") -> float:
    """Return `ratio` as a float if it lies in [0, 1); otherwise raise an `InputError` naming it."""
    try:
        value = float(ratio)
    except (TypeError, ValueError):
        raise InputError(f"{name} {ratio!r} is not a number") from None
    if not 0.0 <= value < 1.0:
        raise InputError(f"{name} {ratio!r} is outside [0, 1)")
    return value


def delete_words(sentence: str, ratio: float, rng: random.Random) -> str:
    """Delete each word independently with probability `ratio`; if every word would go, keep one at random.

    The expected fraction of removed words is `ratio` (slightly less for very short sentences, which keep
    at least one word), and a non-empty sentence never becomes empty.
    """
    words = split_words(sentence)
    if not words:
        return sentence
    kept = [word for word in words if rng.random() >= ratio]
    if not kept:
        kept = [rng.choice(words)]
    return " ".join(kept)
