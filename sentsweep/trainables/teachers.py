"""Training of the pair-scoring teachers (cross-encoder, Cross-Bi-Encoder) and their domain adaptation.

Reiml (2023), section 5.1: AdamW, lr 2e-5, weight decay 0.01, linear warm-up over 10% of the steps then linear
decay, batch size 16; gold scores are divided by their maximum (5 for STS) to lie in [0, 1]; "After each
epoch, we evaluate our models and take the model with the best Spearman": with dev pairs, the teacher is
scored on them after every epoch and the best epoch's weights are the ones kept.
Tables 6.1-6.3 report a teacher's test Spearman and Pearson and its Spearman with the bi-encoder's scores.
Section 4.3.1: domain adaptation continues MLM pre-training on the pairs to be annotated, formatted as the
teacher reads them ("[CLS] x1 [SEP] [CLS] x2 [SEP]"), then freezes the word embeddings for fine-tuning.
A trained teacher is kept in the preparation cache as its model folder and its fit (`save_teacher`,
`load_teacher`); one trained in the trial and one loaded from the cache are both put in fresh memory
(`in_fresh_memory`), so that they score alike to the last bit.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from sentsweep.data import ScoredPairs
from sentsweep.encoding import spearman
from sentsweep.errors import InputError
from sentsweep.models import check_model_source, quiet_transformers
from sentsweep.pair_models import CrossBiEncoder, build_teacher

MODEL_FOLDER, FIT_FILE = "model", "fit.json"  # a cached teacher's entry


@dataclass
class TeacherFit:
    """What fitting a teacher measured: the loss of every step, the dev Spearman (x 100) after each epoch
    (empty without dev pairs) and the epoch (from 1) whose weights the teacher keeps."""

    losses: list[float] = field(default_factory=list)
    dev_scores: list[float] = field(default_factory=list)
    best_epoch: int = 0


def train_teacher(teacher, pairs: ScoredPairs, score_max: float, epochs: int, batch_size: int, lr: float,
                  seed: int, warmup_ratio: float = 0.1, weight_decay: float = 0.01,
                  dev: ScoredPairs | None = None) -> TeacherFit:
    """Fit `teacher` to the gold pairs (labels = score / score_max). With `dev`, the teacher is scored on it
    after each epoch and ends with the weights of the epoch of best Spearman (the first of equals); without,
    with the last epoch's."""
    from transformers import get_linear_schedule_with_warmup

    if epochs < 1 or batch_size < 1 or not len(pairs):
        raise InputError(f"a teacher needs epochs >= 1 ({epochs}), batch_size >= 1 ({batch_size}) and gold "
                         f"pairs ({len(pairs)} in {pairs.source})")

    module = teacher.module
    module.train()
    parameters = [p for p in module.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(parameters, lr=lr, weight_decay=weight_decay)
    steps_per_epoch = -(-len(pairs) // batch_size)
    total = epochs * steps_per_epoch
    schedule = get_linear_schedule_with_warmup(optimizer, int(warmup_ratio * total), total)
    labels = torch.tensor(pairs.scores, dtype=torch.float32) / score_max
    rng = random.Random(seed)
    fit = TeacherFit(best_epoch=epochs)
    best_weights = None
    for epoch in range(1, epochs + 1):
        order = list(range(len(pairs)))
        rng.shuffle(order)
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            loss = teacher.loss([pairs.sentences1[i] for i in batch], [pairs.sentences2[i] for i in batch],
                                labels[batch])
            loss.backward()
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
            fit.losses.append(loss.item())
        if dev is not None:
            fit.dev_scores.append(teacher_spearman(teacher, dev))
            if fit.dev_scores[-1] > max(fit.dev_scores[:-1], default=-np.inf):
                fit.best_epoch = epoch
                if epoch < epochs:  # the last epoch's weights are in the module already
                    best_weights = {key: value.detach().to("cpu", copy=True)
                                    for key, value in module.state_dict().items()}
                else:
                    best_weights = None
    if best_weights is not None:
        module.load_state_dict(best_weights)
    return fit


def pearson(predicted, gold) -> float:
    """Pearson's r: the covariance of the two score lists over the product of their standard deviations."""
    predicted, gold = np.asarray(predicted, np.float64), np.asarray(gold, np.float64)
    predicted, gold = predicted - predicted.mean(), gold - gold.mean()
    return float((predicted @ gold) / np.sqrt((predicted @ predicted) * (gold @ gold)))


def teacher_spearman(teacher, pairs: ScoredPairs) -> float:
    """100 x Spearman of the teacher's pair scores against gold."""
    return 100.0 * spearman(teacher.predict(pairs.sentences1, pairs.sentences2), np.asarray(pairs.scores))


def teacher_correlations(teacher, pairs: ScoredPairs) -> tuple[np.ndarray, float, float]:
    """(the teacher's scores of the pairs, 100 x Spearman and 100 x Pearson of them against gold)."""
    scores = teacher.predict(pairs.sentences1, pairs.sentences2)
    return (scores, *correlations(scores, pairs))


def correlations(scores, pairs: ScoredPairs) -> tuple[float, float]:
    """100 x Spearman and 100 x Pearson of `scores` against the pairs' gold scores."""
    scores, gold = np.asarray(scores, np.float64), np.asarray(pairs.scores, np.float64)
    return 100.0 * spearman(scores, gold), 100.0 * pearson(scores, gold)


def in_fresh_memory(teacher) -> None:
    """Copy every weight and buffer of the teacher into memory of its own. A model loaded from a file keeps its
    tensors where the file's layout puts them, which may be 4-byte aligned only, and CPU matrix kernels round
    differently with the alignment of their operands: a trained teacher and its copy loaded from the cache, both
    in fresh memory, score bit for bit alike."""
    with torch.no_grad():
        for tensor in [*teacher.module.parameters(), *teacher.module.buffers()]:
            tensor.data = tensor.data.clone()


def save_teacher(trained: tuple, folder: Path) -> None:
    """A (teacher, TeacherFit) as a cache entry: the teacher's model folder (weights, configuration, tokenizer)
    and the fit as JSON."""
    teacher, fit = trained
    if isinstance(teacher, CrossBiEncoder):
        teacher.encoder.save_pretrained(folder / MODEL_FOLDER)
        teacher.tokenizer.save_pretrained(folder / MODEL_FOLDER)
    else:
        teacher.model.save_pretrained(str(folder / MODEL_FOLDER))
    (folder / FIT_FILE).write_text(json.dumps(asdict(fit)), encoding="utf-8")


def load_teacher(kind: str, folder: Path, max_length: int, device: str, activation: str = "sigmoid") -> tuple:
    """The (teacher, TeacherFit) of a cache entry written by `save_teacher`: a teacher of `kind` ('ce' or 'cbe')
    with the saved weights."""
    teacher = build_teacher(kind, str(folder / MODEL_FOLDER), max_length, device, activation)
    in_fresh_memory(teacher)
    return teacher, TeacherFit(**json.loads((folder / FIT_FILE).read_text(encoding="utf-8")))


def pair_text(tokenizer, first: str, second: str) -> str:
    """The pair as one text the tokenizer turns into "[CLS] x1 [SEP] [CLS] x2 [SEP]"."""
    return f"{first} {tokenizer.sep_token} {tokenizer.cls_token} {second}"


def domain_adapt(source: str, texts1: list[str], texts2: list[str], steps: int, batch_size: int, lr: float,
                 seed: int, folder: str, max_length: int = 128, protect_prefix: str | None = None) -> str:
    """MLM pre-training of `source` on the pairs for `steps` steps of `batch_size` pairs at a constant `lr`
    (Reiml (2023) §5.4.3: 12.5K steps, batch 64, lr 3e-5); saves the adapted model into `folder` and returns it
    (embeddings frozen there by the teacher's fine-tuning, see `freeze_embeddings`). With `protect_prefix`
    (a topic delimiter), tokens up to and including each delimiter are never masked, so topic prompts are
    read, not predicted."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer, DataCollatorForLanguageModeling

    quiet_transformers()
    source = check_model_source(source)
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModelForMaskedLM.from_pretrained(source)
    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)
    texts = [pair_text(tokenizer, a, b) for a, b in zip(texts1, texts2)]
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    rng = random.Random(seed)
    torch.manual_seed(seed)
    model.train()
    for _ in range(steps):
        batch = rng.sample(texts, min(batch_size, len(texts)))
        encoded = tokenizer(batch, truncation=True, max_length=max_length)
        examples = [{"input_ids": ids} for ids in encoded["input_ids"]]
        if protect_prefix is not None:
            delimiter = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(protect_prefix))
            for example in examples:
                example["special_tokens_mask"] = protected_mask(example["input_ids"], delimiter,
                                                                tokenizer.cls_token_id, tokenizer.all_special_ids)
        features = collator(examples)
        loss = model(**{k: v for k, v in features.items() if k != "special_tokens_mask"}).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def protected_mask(input_ids: list[int], delimiter: list[int], cls_id: int, special_ids: list[int]) -> list[int]:
    """1 for special tokens and for every topic-prompt token: from each [CLS] through the next delimiter."""
    mask = [int(token in special_ids) for token in input_ids]
    inside = False
    for position, token in enumerate(input_ids):
        if token == cls_id:
            inside = True
        elif inside:
            mask[position] = 1
            inside = input_ids[max(0, position - len(delimiter) + 1): position + 1] != delimiter
    return mask


def freeze_embeddings(module: torch.nn.Module) -> None:
    """No gradient for the word, position and token-type embeddings (after domain-adaptive pre-training)."""
    for name, parameter in module.named_parameters():
        if ".embeddings." in f".{name}":
            parameter.requires_grad_(False)
