"""GPL, Generative Pseudo Labeling (004; Wang et al. 2021), as a trainable.

1. Queries: `queries_per_passage` (3) queries per passage of the corpus from a seq2seq `generator`.
2. Negative mining: a dense `retriever` (default: `model` as released) retrieves the `negatives_top_k` (50)
   passages closest to each query; one of them other than the query's own passage is its negative P-.
3. Pseudo labels: a cross-encoder scores (Q, P+) and (Q, P-), delta = CE(Q, P+) - CE(Q, P-) on logits. The
   cross-encoder is `cross_encoder` (a trained one), or one trained from `model` on the gold pairs.
4. The bi-encoder is trained with MarginMSE (sentence-transformers' MarginMSELoss, dot-product scores):
   L = mean_i ((q_i . p+_i - q_i . p-_i) - delta_i)^2.
"""

from __future__ import annotations

import random

import torch

from sentsweep.random_seeds import resolve_seed
from sentsweep.data import read_corpus, read_scored_pairs
from sentsweep.errors import InputError
from sentsweep.models import check_model_source, check_pooling, load_sentence_model, preprocess_on_device
from sentsweep.pair_models import CrossEncoderTeacher
from sentsweep.query_generation import check_query_generator, generate_queries, load_query_generator
from sentsweep.scorers import EmbeddingScorer
from sentsweep.trainables.loop import TrainingSetup, run_trial, sample_corpus
from sentsweep.trainables.teachers import teacher_spearman, train_teacher

DEFAULTS = dict(pooling="mean", queries_per_passage=3, negatives_top_k=50, score_max=5.0, teacher_epochs=3,
                teacher_batch_size=16, teacher_lr=2e-5, query_max_length=64)


def validate_gpl_config(config: dict) -> None:
    config = DEFAULTS | config
    check_pooling(config["pooling"])
    if not config.get("generator"):
        raise InputError("method 'gpl' needs generator (a seq2seq query-generation model: hub name or local folder)")
    check_query_generator(config["generator"])
    if config.get("cross_encoder"):
        check_model_source(config["cross_encoder"])
    elif not config.get("train_file"):
        raise InputError("method 'gpl' needs cross_encoder (a trained cross-encoder) or train_file (gold pairs to train one)")
    for key in ("queries_per_passage", "negatives_top_k"):
        if not isinstance(config[key], int) or config[key] < 1:
            raise InputError(f"{key} {config[key]!r} must be a positive integer")


def mine_negatives(retriever_scorer, queries: list[str], owners: list[int], passages: list[str], top_k: int,
                   rng: random.Random) -> list[int]:
    """For each query, a random passage among its `top_k` retrieved ones that is not its own (`owners`)."""
    if len(passages) < 2:
        raise InputError(f"GPL needs at least 2 passages to mine negatives, got {len(passages)}")
    _, retrieved = retriever_scorer.top_k(queries, passages, top_k + 1)
    negatives = []
    for owner, row in zip(owners, retrieved):
        candidates = [int(p) for p in row if int(p) != owner][:top_k]
        negatives.append(rng.choice(candidates))
    return negatives


def build_gpl(config: dict) -> TrainingSetup:
    from sentence_transformers.sentence_transformer.losses import MarginMSELoss

    config = DEFAULTS | config
    seed = resolve_seed(config)
    rng = random.Random(seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    passages = sample_corpus(read_corpus(config["corpus"]), config.get("sample_size"), seed)

    generator, tokenizer = load_query_generator(config["generator"])
    generated = generate_queries(generator.to(device), tokenizer, passages, config["queries_per_passage"], seed,
                                 config["query_max_length"])
    del generator
    queries = [q for per_passage in generated for q in per_passage]
    owners = [i for i, per_passage in enumerate(generated) for _ in per_passage]

    retriever = load_sentence_model(config.get("retriever") or config["model"], None, config["max_seq_length"], device)
    negatives = mine_negatives(EmbeddingScorer(retriever), queries, owners, passages, config["negatives_top_k"], rng)
    del retriever

    torch.manual_seed(seed)
    metrics = {}
    if config.get("cross_encoder"):
        teacher = CrossEncoderTeacher(config["cross_encoder"], config["max_seq_length"], device)
    else:
        teacher = CrossEncoderTeacher(config["model"], config["max_seq_length"], device)
        gold = read_scored_pairs(config["train_file"], config.get("eval_format", "stsb"), "train")
        train_teacher(teacher, gold, config["score_max"], config["teacher_epochs"], config["teacher_batch_size"],
                      config["teacher_lr"], seed)
        dev = read_scored_pairs(config["dev_file"], config.get("eval_format", "stsb"), "dev")
        metrics["teacher_sts_dev"] = teacher_spearman(teacher, dev)
    positive_scores = teacher.predict(queries, [passages[i] for i in owners], logits=True)
    negative_scores = teacher.predict(queries, [passages[i] for i in negatives], logits=True)
    del teacher
    examples = [(q, passages[p], passages[n], float(pos - neg))
                for q, p, n, pos, neg in zip(queries, owners, negatives, positive_scores, negative_scores)]

    torch.manual_seed(seed)
    model = load_sentence_model(config["model"], config["pooling"], config["max_seq_length"], device=device)
    loss = MarginMSELoss(model)

    def batch_loss(batch, rng):
        features = [preprocess_on_device(model, [example[k] for example in batch]) for k in range(3)]
        margins = torch.tensor([example[3] for example in batch], dtype=torch.float32, device=model.device)
        return loss(features, margins)

    metrics["gpl_queries"] = len(examples)
    return TrainingSetup(model=model, module=model, batch_loss=batch_loss, examples=examples, metrics=metrics)


def train_gpl(config: dict, session=None) -> None:
    """Ray Tune function trainable of GPL (see the module docstring)."""
    run_trial(DEFAULTS | config, build_gpl, session)
