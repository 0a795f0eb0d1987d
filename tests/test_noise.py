"""Deletion noise: the removed fraction matches the ratio, and no sentence is ever emptied."""

import random

import pytest

from sentsweep.demo_data import CORPUS_FILE
from sentsweep.data import read_corpus
from sentsweep.errors import InputError
from sentsweep.noise import check_ratio, delete_words, split_words


@pytest.mark.parametrize("ratio", [0.1, 0.3, 0.6, 0.9])
def test_deletion_removes_about_ratio_of_the_words(ratio):
    rng = random.Random(0)
    sentences = read_corpus(CORPUS_FILE) * 5
    before = sum(len(split_words(s)) for s in sentences)
    after = sum(len(split_words(delete_words(s, ratio, rng))) for s in sentences)
    # Each of a sentence's n words survives with probability 1 - r, and when none does one is put back:
    # E[kept] = n (1 - r) + r^n.
    expected_after = sum(n * (1 - ratio) + ratio**n for n in (len(split_words(s)) for s in sentences))
    # ~21,000 words: the binomial std of the kept fraction is below 0.004.
    assert abs(after - expected_after) / before < 0.012
    assert abs((1 - after / before) - ratio) < (0.04 if ratio == 0.9 else 0.015)


def test_deletion_never_empties_a_sentence():
    rng = random.Random(1)
    for sentence in ["One.", "Two words", "A man is playing a guitar in the park."]:
        for _ in range(500):
            noisy = delete_words(sentence, 0.99, rng)
            assert split_words(noisy), sentence
            assert set(split_words(noisy)) <= set(split_words(sentence))


def test_zero_ratio_keeps_every_word():
    sentence = "A man, a plan: a canal."
    assert split_words(delete_words(sentence, 0.0, random.Random(0))) == split_words(sentence)


@pytest.mark.parametrize("bad", [1.0, -0.1, 1.5, "x"])
def test_ratio_outside_unit_interval_is_named(bad):
    with pytest.raises(InputError, match=repr(bad).replace(".", r"\.")):
        check_ratio(bad)
