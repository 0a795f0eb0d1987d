"""Input noise for denoising objectives (TSDAE, Noise Matching), on word tokens.

Words are split with a small regex (words, numbers and single punctuation marks), so no NLTK data is needed;
the noisy words are joined with single spaces, which the model's own tokenizer splits again. The noise types
are those of the TSDAE paper (appendix A, table 5), each at a ratio r of the words:

- delete:  each word is removed with probability r (one word is kept if all would go);
- swap:    round(r * n) randomly chosen words are shuffled among their own positions;
- insert:  round(r * n) words drawn from the vocabulary are inserted at random positions ("Add");
- replace: each word is replaced with probability r by a word drawn from the vocabulary;
- mask:    each word is replaced with probability r by the tokenizer's mask token.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from sentsweep.errors import InputError

_WORD_PATTERN = re.compile(r"\w+(?:['’-]\w+)*|[^\w\s]")
NOISE_TYPES = ("delete", "swap", "insert", "replace", "mask")


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


def check_noise_type(noise_type: str) -> str:
    if noise_type not in NOISE_TYPES:
        raise InputError(f"unknown noise type {noise_type!r}; expected one of {', '.join(NOISE_TYPES)}")
    return noise_type


def delete_words(sentence: str, ratio: float, rng: random.Random) -> str:
    """Delete each word independently with probability `ratio`; if every word would go, keep one at random.

    The expected number of kept words of an n-word sentence is n (1 - r) + r^n, and a non-empty sentence
    never becomes empty.
    """
    words = split_words(sentence)
    if not words:
        return sentence
    kept = [word for word in words if rng.random() >= ratio]
    if not kept:
        kept = [rng.choice(words)]
    return " ".join(kept)


@dataclass(frozen=True)
class WordNoise:
    """One noise type at one ratio; `vocabulary` feeds insert/replace, `mask_token` feeds mask."""

    noise_type: str
    ratio: float
    vocabulary: tuple[str, ...] = ()
    mask_token: str = "[MASK]"

    def __post_init__(self) -> None:
        check_noise_type(self.noise_type)
        check_ratio(self.ratio, "noise ratio")
        if self.noise_type in ("insert", "replace") and not self.vocabulary:
            raise InputError(f"noise type {self.noise_type!r} needs a vocabulary to draw words from")

    def __call__(self, sentence: str, rng: random.Random) -> str:
        if self.noise_type == "delete":
            return delete_words(sentence, self.ratio, rng)
        words = split_words(sentence)
        if not words:
            return sentence
        if self.noise_type == "swap":
            chosen = sorted(rng.sample(range(len(words)), round(self.ratio * len(words))))
            moved = [words[i] for i in chosen]
            rng.shuffle(moved)
            for position, word in zip(chosen, moved):
                words[position] = word
        elif self.noise_type == "insert":
            for _ in range(round(self.ratio * len(words))):
                words.insert(rng.randrange(len(words) + 1), rng.choice(self.vocabulary))
        elif self.noise_type == "replace":
            words = [rng.choice(self.vocabulary) if rng.random() < self.ratio else w for w in words]
        else:  # mask
            words = [self.mask_token if rng.random() < self.ratio else w for w in words]
        return " ".join(words)


def corpus_vocabulary(sentences: list[str]) -> tuple[str, ...]:
    """The distinct words of a corpus, in first-seen order (the draw pool for insert and replace noise)."""
    return tuple(dict.fromkeys(word for sentence in sentences for word in split_words(sentence)))
