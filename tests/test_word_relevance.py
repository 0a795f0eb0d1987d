"""`sentsweep.word_relevance`: TSDAE §7.2's most relevant word of a pair, by hand on a toy bag-of-words encoder, its
tag groups and distributions, and the TextBlob tagger it runs with."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from sentsweep import word_relevance
from sentsweep.errors import InputError
from sentsweep.word_relevance import (
    GROUPS,
    RelevantWord,
    cosine_of,
    most_relevant_words,
    pos_relevance,
    tag_group,
    textblob_tagger,
    tokens,
    without,
)

VECTORS = {"the": (0.0, 0.0, 1.0), "cat": (2.0, 0.0, 0.0), "sat": (0.0, 1.0, 0.0)}
TAGS = {"the": "DT", "cat": "NN", "sat": "VBD", "...": ":", "!": "."}


def bag_of_words(texts: list[str]) -> np.ndarray:
    """Each text's embedding: the sum of its words' vectors (punctuation and the empty text: the zero vector)."""
    return np.array([np.sum([VECTORS[word] for word in text.split() if word in VECTORS] or [(0.0, 0.0, 0.0)], axis=0)
                     for text in texts])


def toy_tagger(words: list[str]) -> list[str]:
    return [TAGS[word] for word in words]


def test_the_most_relevant_word_is_the_one_whose_removal_lowers_the_cosine_most():
    # a = the + cat + sat = (2, 1, 1), b = the + cat = (2, 0, 1): cossim(a, b) = 5 / sqrt(30).
    # the: cossim(a\the, b) = (2,1,0).(2,0,1) / (sqrt5 sqrt5) = 0.8, cossim(a, b\the) = 4 / (sqrt6 * 2) = 0.816
    # cat: cossim(a\cat, b) = (0,1,1).(2,0,1) / (sqrt2 sqrt5) = 1 / sqrt(10), cossim(a, b\cat) = 1 / sqrt6
    # sat: cossim(a\sat, b) = 1, b\sat = b: cossim(a, b) -> a drop of 0
    # second pair: a = sat = (0,1,0), b = the sat = (0,1,1): cossim 1 / sqrt2; sat (in both): a\sat is empty (cosine
    # 0) -> drop 1 / sqrt2; the (b only): a\the = a, cossim(a, b\the) = 1 -> min = cossim(a, b), drop 0
    pairs = [("the cat sat", "the cat"), ("sat", "the sat")]
    words = most_relevant_words(pairs, cosine_of(bag_of_words), toy_tagger)
    assert [(word.word, word.group) for word in words] == [("cat", "NN"), ("sat", "VB-NAUX")]
    assert words[0].drop == pytest.approx(5 / math.sqrt(30) - 1 / math.sqrt(10))
    assert words[1].drop == pytest.approx(1 / math.sqrt(2))
    analysis = pos_relevance(pairs, cosine_of(bag_of_words), toy_tagger)
    assert {group: share for group, share in analysis.shares.items() if share} == {"NN": 50.0, "VB-NAUX": 50.0}
    # the prior: pair 1's three candidates 1/3 each (DT, NN, VB-NAUX), pair 2's two 1/2 each (VB-NAUX, DT)
    assert {group: share for group, share in analysis.prior.items() if share} == pytest.approx(
        {"DT": 100 * (1 / 3 + 1 / 2) / 2, "NN": 100 * (1 / 3) / 2, "VB-NAUX": 100 * (1 / 3 + 1 / 2) / 2})
    assert set(analysis.shares) == set(analysis.prior) == set(GROUPS)


def test_a_tie_goes_to_the_first_candidate_and_a_pair_without_words_has_none():
    # the = (0,0,1) and sat = (0,1,0) each lower the cosine from 1 to 1 / sqrt2
    pairs = [("the sat", "the sat"), ("...", "!")]
    assert most_relevant_words(pairs, cosine_of(bag_of_words), toy_tagger) == [
        RelevantWord("the", "DT", pytest.approx(1 - 1 / math.sqrt(2))), None]


def test_texts_go_to_the_similarity_in_batches_of_pairs():
    calls = []

    def similarity(texts1, texts2):
        calls.append(len(texts1))
        return cosine_of(bag_of_words)(texts1, texts2)

    most_relevant_words([("the cat", "cat")] * 5, similarity, toy_tagger, batch_pairs=2)
    assert calls == [2 * (1 + 2 * 2), 2 * (1 + 2 * 2), 1 + 2 * 2]  # per pair: (a, b) and 2 texts per candidate


@pytest.mark.parametrize(("tag", "word", "group"), [
    ("VBZ", "is", "VB-AUX"), ("VBD", "had", "VB-AUX"), ("VBP", "'re", "VB-AUX"), ("VBZ", "runs", "VB-NAUX"),
    ("VB", "install", "VB-NAUX"), ("NNS", "drivers", "NN"), ("NNP", "Ubuntu", "NN"), ("JJR", "faster", "JJ"),
    ("PRP$", "my", "PRP"), ("MD", "can", "MD"), ("IN", "on", "IN"), ("-LRB-", "(", "other"),
])
def test_penn_treebank_tags_fall_in_figure_4s_groups(tag, word, group):
    assert tag_group(tag, word) == group


def test_a_word_is_cut_out_at_every_occurrence_and_punctuation_is_no_word():
    text = "The cat sat on the mat, didn't it?"
    spans = tokens(text)
    assert [text[start:end] for start, end in spans] == ["The", "cat", "sat", "on", "the", "mat", ",", "did",
                                                         "n't", "it", "?"]
    assert without(text, [span for span in spans if text[span[0]:span[1]] == "the"]) == \
        "The cat sat on mat, didn't it?"


def test_textblob_tags_a_sentence_offline():
    tag = textblob_tagger()
    assert tag(["How", "do", "I", "install", "the", "nvidia", "drivers", "on", "Ubuntu", "?"]) == [
        "WRB", "VBP", "PRP", "VB", "DT", "NN", "NNS", "IN", "NNP", "."]


def test_without_textblob_the_tagger_is_refused_in_one_line(monkeypatch):
    found = importlib.util.find_spec
    monkeypatch.setattr(word_relevance.importlib.util, "find_spec",
                        lambda name, *args: None if name == "textblob" else found(name, *args))
    with pytest.raises(InputError) as refused:
        textblob_tagger()
    assert str(refused.value) == ("the part-of-speech analysis needs TextBlob, which is not installed: pip install "
                                  "-c constraints.txt -e '.[pos]' (its tagger and lexicon come with the package)")
