"""Training of the pair-scoring teachers (cross-encoder, Cross-Bi-Encoder) and their domain adaptation.

Reiml (2023), section 5.1: AdamW, lr 2e-5, weight decay 0.01, linear warm-up over 10% of the steps then linear
decay, batch size 16; gold scores are divided by their maximum (5 for STS) to lie in [0, 1].
Section 4.3.1: domain adaptation continues MLM pre-training on the pairs to be annotated, formatted as the
teacher reads them ("[CLS] x1 [SEP] [CLS] x2 [SEP]"), then freezes the word embeddings for fine-tuning.
"""

from __future__ import annotations

import random
import tempfile

import torch

from sentsweep.data import ScoredPairs
from sentsweep.encoding import spearman
from sentsweep.models import check_model_source, quiet_transformers


def train_teacher(teacher, pairs: ScoredPairs, score_max: float, epochs: int, batch_size: int, lr: float,
                  seed: int, warmup_ratio: float = 0.1, weight_decay: float = 0.01) -> list[float]:
    """Fit `teacher` to the gold pairs (labels = score / score_max); returns the loss of every step."""
    from transformers import get_linear_schedule_with_warmup

    module = teacher.module
    module.train()
    parameters = [p for p in module.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(parameters, lr=lr, weight_decay=weight_decay)
    steps_per_epoch = -(-len(pairs) // batch_size)
    total = epochs * steps_per_epoch
    schedule = get_linear_schedule_with_warmup(optimizer, int(warmup_ratio * total), total)
    labels = torch.tensor(pairs.scores, dtype=torch.float32) / score_max
    rng = random.Random(seed)
    losses = []
    for _ in range(epochs):
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
            losses.append(loss.item())
    return losses


def teacher_spearman(teacher, pairs: ScoredPairs) -> float:
    """100 x Spearman of the teacher's pair scores against gold."""
    import numpy as np

    return 100.0 * spearman(teacher.predict(pairs.sentences1, pairs.sentences2), np.asarray(pairs.scores))


def pair_text(tokenizer, first: str, second: str) -> str:
    """The pair as one text the tokenizer turns into "[CLS] x1 [SEP] [CLS] x2 [SEP]"."""
    return f"{first} {tokenizer.sep_token} {tokenizer.cls_token} {second}"


def domain_adapt(source: str, texts1: list[str], texts2: list[str], steps: int, batch_size: int, lr: float,
                 seed: int, max_length: int = 128, protect_prefix: str | None = None) -> str:
    """MLM pre-training of `source` on the pairs; returns a folder with the adapted model (embeddings frozen
    there by the teacher's fine-tuning, see `freeze_embeddings`). With `protect_prefix` (a topic delimiter),
    tokens up to and including each delimiter are never masked, so topic prompts are read, not predicted."""
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
    folder = tempfile.mkdtemp(prefix="sentsweep-domain-")
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
