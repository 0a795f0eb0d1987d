"""Deletion noise: the removed fraction matches the ratio, and no sentence is ever emptied."""

import random

import pytest

from sentsweep.data import read_corpus
from sentsweep.demo_data import CORPUS_FILE
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


SENTENCE = "A young man is playing an old guitar in the quiet park today ."


def noisy_words(noise_type, ratio, seed=0):
    from sentsweep.noise import WordNoise

    noise = WordNoise(noise_type, ratio, vocabulary=("zebra", "piano"), mask_token="[MASK]")
    return split_words(noise(SENTENCE, random.Random(seed)))


def test_swap_moves_about_ratio_of_the_words_and_keeps_them_all():
    words = split_words(SENTENCE)
    moved = [noisy_words("swap", 0.5, seed) for seed in range(200)]
    assert all(sorted(m) == sorted(words) for m in moved)
    changed = sum(sum(a != b for a, b in zip(m, words)) for m in moved) / (200 * len(words))
    assert 0.3 < changed <= 0.5  # round(0.5 * 13) = 6 of 13 words are shuffled; some land where they were


def test_insert_adds_round_ratio_n_vocabulary_words():
    words = split_words(SENTENCE)
    noisy = noisy_words("insert", 0.3)
    inserted = [w for w in noisy if w in ("zebra", "piano")]
    assert len(inserted) == round(0.3 * len(words))
    assert [w for w in noisy if w not in ("zebra", "piano")] == words  # the original words keep their order


@pytest.mark.parametrize("noise_type, marker", [("replace", ("zebra", "piano")), ("mask", ("MASK",))])
def test_replace_and_mask_change_about_ratio_of_the_words(noise_type, marker):
    words = split_words(SENTENCE)
    total = changed = 0
    for seed in range(300):
        noisy = noisy_words(noise_type, 0.3, seed)
        if noise_type == "mask":  # "[MASK]" splits into "[", "MASK", "]"
            noisy = " ".join(noisy).replace("[ MASK ]", "MASK").split()
        assert len(noisy) == len(words)
        changed += sum(w in marker for w in noisy)
        total += len(words)
    assert abs(changed / total - 0.3) < 0.03


def test_unknown_noise_type_is_named():
    from sentsweep.noise import WordNoise

    with pytest.raises(InputError, match="unknown noise type 'blur'"):
        WordNoise("blur", 0.3)
