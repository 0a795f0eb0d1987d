"""Trainables of the supervised and semi-supervised settings (thesis 000, chapters 4-6; TSDAE paper, table 10).

- `sbert`: a bi-encoder trained on gold scored pairs with SBERT's CosineSimilarityLoss,
  L = mean_i (cos(u_i, v_i) - y_i)^2, y = score / score_max; with `sample_size` labelled pairs it is the
  in-domain supervised reference of the labelled-data intersection search.
- `augsbert`: Augmented SBERT. A teacher (`teacher`: 'ce' cross-encoder or 'cbe' Cross-Bi-Encoder, both
  trained from `model` on the gold pairs) annotates silver pairs sampled by `sampling` (see
  sentsweep.sampling), and the bi-encoder is trained on them with the same loss. `setting`:
  'semi' (silver pairs from the gold sentences, trained on gold + silver), 'unsupervised' (silver pairs from
  the target `corpus`, trained on silver only), 'domain' (as unsupervised, but the teacher first continues MLM
  pre-training on the silver pairs and fine-tunes with frozen embeddings; `student_init: domain` starts the
  bi-encoder from that MLM checkpoint too: FullDomainSBERT). With `topic_corpus` ("topic<TAB>sentence"
  lines) the silver sentences carry their topic prompt "topic ¥ sentence" for MLM and annotation, and
  `topic_prompt` says whether the bi-encoder sees it ('shown') or not ('hidden'). `reannotate_gold: true`
  replaces the gold labels by the teacher's scores (the distillation of section 5.2.2, a label
  regularisation; with `sampling: none` the bi-encoder learns from the re-annotated gold pairs alone).
Every preparation step is seeded by the trial's seed; a resumed trial repeats it identically.
"""

from __future__ import annotations

import random

import torch

from sentsweep.data import ScoredPairs, read_corpus, read_scored_pairs
from sentsweep.errors import InputError
from sentsweep.models import check_pooling, load_sentence_model, preprocess_on_device
from sentsweep.pair_models import TEACHERS, build_teacher
from sentsweep.scorers import EmbeddingScorer
from sentsweep.random_seeds import resolve_seed
from sentsweep.sampling import (
    bm25_pairs,
    check_sampling,
    iterative_kde,
    random_pairs,
    semantic_pairs,
)
from sentsweep.topics import TOPIC_DELIMITER, read_topic_corpus, with_topic
from sentsweep.trainables.loop import TrainingSetup, run_trial
from sentsweep.trainables.teachers import domain_adapt, freeze_embeddings, teacher_spearman, train_teacher

SUPERVISED_METHODS = ("sbert", "augsbert")
SETTINGS = ("semi", "unsupervised", "domain")
DEFAULTS = dict(pooling="mean", score_max=5.0, teacher="cbe", sampling="bm25", setting="semi", top_k=3,
                random_pairs_per_sentence=3, teacher_epochs=3, teacher_batch_size=16, teacher_lr=2e-5,
                domain_mlm_steps=100, student_init="model", topic_prompt="shown", reannotate_gold=False)


def with_supervised_defaults(config: dict) -> dict:
    return DEFAULTS | config


def validate_supervised_config(config: dict) -> None:
    """Raise an `InputError` naming the first bad value of a supervised or Augmented SBERT config."""
    config = with_supervised_defaults(config)
    check_pooling(config["pooling"])
    if not config.get("train_file"):
        raise InputError(f"method {config['method']!r} needs gold pairs: train_file (an STS benchmark sts-train.csv)")
    if config["method"] == "augsbert":
        if config["teacher"] not in TEACHERS:
            raise InputError(f"unknown teacher {config['teacher']!r}; expected one of {', '.join(TEACHERS)}")
        check_sampling(config["sampling"])
        if config["setting"] not in SETTINGS:
            raise InputError(f"unknown Augmented SBERT setting {config['setting']!r}; expected one of {', '.join(SETTINGS)}")
        if config["setting"] != "semi" and config["sampling"] == "none":
            raise InputError(f"setting {config['setting']!r} trains on silver pairs only, so sampling 'none' leaves nothing")
        if config["topic_prompt"] not in ("shown", "hidden"):
            raise InputError(f"topic_prompt {config['topic_prompt']!r}; expected shown or hidden")
        if config["student_init"] not in ("model", "domain"):
            raise InputError(f"student_init {config['student_init']!r}; expected model or domain")
        if not isinstance(config["reannotate_gold"], bool):
            raise InputError(f"reannotate_gold {config['reannotate_gold']!r} must be true or false")
        if config["student_init"] == "domain" and config["setting"] != "domain":
            raise InputError("student_init 'domain' needs setting 'domain' (the MLM checkpoint it starts from)")


def gold_pairs(config: dict, seed: int) -> ScoredPairs:
    """The gold training pairs, `sample_size` of them drawn with the trial's seed when given."""
    pairs = read_scored_pairs(config["train_file"], config.get("eval_format", "stsb"), "train")
    size = config.get("sample_size")
    if size is None or size >= len(pairs):
        return pairs
    chosen = sorted(random.Random(seed).sample(range(len(pairs)), size))
    return ScoredPairs([pairs.sentences1[i] for i in chosen], [pairs.sentences2[i] for i in chosen],
                       [pairs.scores[i] for i in chosen], f"{pairs.source}[{size} of {len(pairs)}]")


def cosine_similarity_setup(model, examples: list[tuple[str, str, float]], metrics: dict | None = None) -> TrainingSetup:
    """A bi-encoder trained on (sentence1, sentence2, label) with sentence-transformers' CosineSimilarityLoss."""
    from sentence_transformers.sentence_transformer.losses import CosineSimilarityLoss

    loss = CosineSimilarityLoss(model)

    def batch_loss(batch, rng):
        first = preprocess_on_device(model, [example[0] for example in batch])
        second = preprocess_on_device(model, [example[1] for example in batch])
        labels = torch.tensor([example[2] for example in batch], dtype=torch.float32, device=model.device)
        return loss([first, second], labels)

    return TrainingSetup(model=model, module=model, batch_loss=batch_loss, examples=examples, metrics=metrics or {})


def _device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def build_sbert(config: dict) -> TrainingSetup:
    config = with_supervised_defaults(config)
    pairs = gold_pairs(config, resolve_seed(config))
    model = load_sentence_model(config["model"], config["pooling"], config["max_seq_length"], device=_device())
    examples = [(a, b, s / config["score_max"]) for a, b, s in zip(pairs.sentences1, pairs.sentences2, pairs.scores)]
    return cosine_similarity_setup(model, examples, {"gold_pairs": len(examples)})


def silver_candidates(config: dict, sentences: list[str], rng: random.Random) -> list[tuple[int, int]]:
    """Index pairs into `sentences` by the configured strategy (for 'kde': random + BM25 candidates)."""
    strategy, top_k = config["sampling"], config["top_k"]
    if strategy == "random":
        return random_pairs(top_k * len(sentences), len(sentences), rng)
    if strategy == "bm25":
        return bm25_pairs(sentences, top_k)
    if strategy == "semantic":
        retriever = load_sentence_model(config["model"], config["pooling"], config["max_seq_length"], device=_device())
        return semantic_pairs(EmbeddingScorer(retriever), sentences, top_k)
    if strategy == "kde":
        candidates = random_pairs(config["random_pairs_per_sentence"] * len(sentences), len(sentences), rng)
        return list(dict.fromkeys(candidates + bm25_pairs(sentences, top_k)))
    return []


def build_augsbert(config: dict) -> TrainingSetup:
    config = with_supervised_defaults(config)
    seed = resolve_seed(config)
    rng = random.Random(seed)
    gold = gold_pairs(config, seed)
    topics = None
    if config["setting"] == "semi":
        sentences = list(dict.fromkeys(gold.sentences1 + gold.sentences2))
    elif config.get("topic_corpus"):
        topics, sentences = read_topic_corpus(config["topic_corpus"])
    else:
        sentences = read_corpus(config["corpus"])
    prompted = [with_topic(s, t) for s, t in zip(sentences, topics)] if topics else sentences
    pairs = silver_candidates(config, prompted, rng)

    teacher_source = config["model"]
    if config["setting"] == "domain":
        teacher_source = domain_adapt(
            config["model"], [prompted[i] for i, _ in pairs], [prompted[j] for _, j in pairs],
            config["domain_mlm_steps"], config["batch_size"], config["lr"], seed, config["max_seq_length"],
            protect_prefix=TOPIC_DELIMITER if topics else None)
    torch.manual_seed(seed)
    teacher = build_teacher(config["teacher"], teacher_source, config["max_seq_length"], _device())
    if config["setting"] == "domain":
        freeze_embeddings(teacher.module)
    train_teacher(teacher, gold, config["score_max"], config["teacher_epochs"], config["teacher_batch_size"],
                  config["teacher_lr"], seed)
    dev = read_scored_pairs(config["dev_file"], config.get("eval_format", "stsb"), "dev")
    metrics = {"teacher_sts_dev": teacher_spearman(teacher, dev)}

    silver_scores = teacher.predict([prompted[i] for i, _ in pairs], [prompted[j] for _, j in pairs]) if pairs else []
    if config["sampling"] == "kde":
        kept = iterative_kde([s / config["score_max"] for s in gold.scores], silver_scores, rng)
        pairs, silver_scores = [pairs[k] for k in kept], [silver_scores[k] for k in kept]
    student_texts = prompted if topics and config["topic_prompt"] == "shown" else sentences
    silver = [(student_texts[i], student_texts[j], float(score)) for (i, j), score in zip(pairs, silver_scores)]
    gold_labels = (teacher.predict(gold.sentences1, gold.sentences2) if config["reannotate_gold"]
                   else [s / config["score_max"] for s in gold.scores])
    gold_examples = [(a, b, float(y)) for a, b, y in zip(gold.sentences1, gold.sentences2, gold_labels)]
    examples = (gold_examples if config["setting"] == "semi" else []) + silver
    del teacher
    student_source = teacher_source if config["student_init"] == "domain" else config["model"]
    torch.manual_seed(seed)
    model = load_sentence_model(student_source, config["pooling"], config["max_seq_length"], device=_device())
    metrics |= {"silver_pairs": len(silver), "gold_pairs": len(gold_examples) if config["setting"] == "semi" else 0}
    return cosine_similarity_setup(model, examples, metrics)


BUILDERS = {"sbert": build_sbert, "augsbert": build_augsbert}


def train_supervised(config: dict, session=None) -> None:
    """Ray Tune function trainable of `sbert` and `augsbert` (see the module docstring)."""
    run_trial(with_supervised_defaults(config), BUILDERS[config["method"]], session)

