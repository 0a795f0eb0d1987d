"""The part-of-speech tasks (`sentsweep.tasks.pos_tags`, TSDAE §7.2): the relevant pairs of §7's split read from each
USEB release format, and the shares a trial logs, by hand on a toy scorer with TextBlob's tags."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sentsweep.errors import InputError
from sentsweep.tasks import build_task, main_metric
from sentsweep.word_relevance import GROUPS
from tests.tasks.test_tasks import askubuntu_folder, write


class WordCountScorer:
    """Cosine of bag-of-words count vectors over the lower-cased, space-separated words (punctuation kept)."""

    def pair_similarities(self, texts1, texts2):
        scores = []
        for first, second in zip(texts1, texts2):
            vocabulary = sorted(set(first.lower().split()) | set(second.lower().split()))
            u = np.array([first.lower().split().count(word) for word in vocabulary], dtype=float)
            v = np.array([second.lower().split().count(word) for word in vocabulary], dtype=float)
            norms = np.linalg.norm(u) * np.linalg.norm(v)
            scores.append(float(u @ v / norms) if norms else 0.0)
        return np.array(scores)


def test_askubuntu_pairs_are_each_dev_query_with_each_similar_question(tmp_path):
    task = build_task("pos_askubuntu", str(askubuntu_folder(tmp_path)))
    assert task.pairs == [("query one", "beta"), ("query one", "gamma"), ("query two", "delta")]


def test_cqadupstack_pairs_are_the_dev_duplicates_of_every_forum(tmp_path):
    corpus = {"tex": {"1": "t query", "2": "t dup", "3": "t other"}, "unix": {"5": "u query", "6": "u dup"}}
    split = {"valid": {"tex": {"1": ["2", "3"]}, "unix": {"5": ["6"]}}, "test": {"tex": {"3": ["2"]}}}
    write(tmp_path / "cqa" / "corpus.json", json.dumps(corpus))
    write(tmp_path / "cqa" / "retrieval_split.json", json.dumps(split))
    assert build_task("pos_cqadupstack", str(tmp_path / "cqa")).pairs == [
        ("t query", "t dup"), ("t query", "t other"), ("u query", "u dup")]


def twitterpara_folder(folder, url_rows, pit_rows):
    write(folder / "Twitter_URL_Corpus_test.txt", "".join(f"{a}\t{b}\t({n}, 6)\turl\n" for a, b, n in url_rows))
    write(folder / "test.data", "".join(f"0\ttopic\t{a}\t{b}\t({n}, 5)\n" for a, b, n in pit_rows))
    return folder


def test_twitterpara_pairs_are_the_test_paraphrases_of_both_corpora(tmp_path):
    folder = twitterpara_folder(tmp_path / "tp", [("a b", "a c", 4), ("d", "e", 3)], [("f g", "f h", 5)])
    assert build_task("pos_twitterpara", str(folder)).pairs == [("a b", "a c"), ("f g", "f h")]


def test_scidocs_pairs_are_the_dev_candidates_of_relevance_above_0_with_titles(tmp_path):
    corpus = {"q": {"title": "query paper"}, "r1": {"title": "relevant one"}, "r2": {"title": None},
              "n1": {"title": "negative one"}}
    qrels = {"q": {"r1": 1, "r2": 1, "n1": 0}}
    data = {"corpus": corpus, "valid": {"cite": qrels, "coview": {"q": {"n1": 1}}}, "test": {"cite": {}}}
    write(tmp_path / "scidocs" / "data.json", json.dumps(data))
    assert build_task("pos_scidocs", str(tmp_path / "scidocs")).pairs == [
        ("query paper", "relevant one"), ("query paper", "negative one")]


def test_the_task_logs_each_groups_share_and_prior_by_hand(tmp_path):
    # pair 1, "the cat sleeps" / "the cat": cossim 2 / (sqrt3 sqrt2) = 0.816; without "the": "cat sleeps" / "cat"
    # 1/sqrt2; without "cat": "the sleeps" / "the" 1/sqrt2; without "sleeps": "the cat" / "the cat" 1. The equal
    # drops of "the" and "cat" go to the first candidate, "the" (DT). Pair 2, "dogs run fast" / "dogs run": the same
    # shape, "dogs" (NNS: NN).
    folder = twitterpara_folder(tmp_path / "tp", [("the cat sleeps", "the cat", 5)], [("dogs run fast", "dogs run", 4)])
    task = build_task("pos_twitterpara", str(folder))
    metrics = task.evaluate(WordCountScorer(), "test").metrics
    assert main_metric("pos_twitterpara") == "pos_twitterpara_NN"
    assert set(metrics) == ({f"pos_twitterpara_{group}" for group in GROUPS}
                            | {f"pos_twitterpara_prior_{group}" for group in GROUPS} | {"pos_twitterpara_pairs"})
    assert {key: value for key, value in metrics.items() if value and "prior" not in key} == {
        "pos_twitterpara_DT": 50.0, "pos_twitterpara_NN": 50.0, "pos_twitterpara_pairs": 2.0}
    # the prior: pair 1's the (DT), cat (NN), sleeps (VBZ: VB-NAUX); pair 2's dogs (NNS), run (VBP), fast (RB)
    assert {key: value for key, value in metrics.items() if value and "prior" in key} == pytest.approx({
        "pos_twitterpara_prior_DT": 100 / 6, "pos_twitterpara_prior_NN": 200 / 6,
        "pos_twitterpara_prior_VB-NAUX": 200 / 6, "pos_twitterpara_prior_RB": 100 / 6})


def test_a_folder_without_a_relevant_pair_is_refused_naming_the_split(tmp_path):
    folder = twitterpara_folder(tmp_path / "tp", [("a", "b", 1)], [("c", "d", 2)])
    with pytest.raises(InputError, match=r"^pos_twitterpara: .* holds no pair labelled relevant in its test split$"):
        build_task("pos_twitterpara", str(folder))
