"""Query generation for GPL (the TSDAE + GPL report draft): a seq2seq model (any T5, local folder or hub
name) writes queries for a passage by nucleus sampling (top-p 0.95), several per passage, as GPL does."""

from __future__ import annotations

import torch

from sentsweep.errors import InputError
from sentsweep.models import check_model_source, quiet_transformers

HOW_TO_GIVE_A_LOCAL_MODEL = (
    "give a local folder of a seq2seq model instead, for example one downloaded elsewhere with "
    "`huggingface-cli download BeIR/query-gen-msmarco-t5-base-v1 --local-dir t5-query-gen` and copied here, "
    "then --set generator=/path/to/t5-query-gen"
)


def load_query_generator(name_or_path: str):
    """(model, tokenizer) of a seq2seq generator; an `InputError` naming the model and how to give a local one."""
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer


    quiet_transformers()
    try:
        source = check_model_source(name_or_path)
        return AutoModelForSeq2SeqLM.from_pretrained(source), AutoTokenizer.from_pretrained(source)
    except Exception as error:  # noqa: BLE001 - hub, file and config errors all mean "cannot use this model"
        raise _unusable(name_or_path, error) from None


def _unusable(name_or_path: str, error: Exception) -> InputError:
    reason = str(error).splitlines()[0] if str(error) else type(error).__name__
    return InputError(f"cannot load the query-generation model {name_or_path!r}: {reason}; {HOW_TO_GIVE_A_LOCAL_MODEL}")


def check_query_generator(name_or_path: str) -> None:
    """Fail before any training if the generator's configuration cannot be read."""
    from transformers import AutoConfig


    try:
        AutoConfig.from_pretrained(check_model_source(name_or_path))
    except Exception as error:  # noqa: BLE001
        raise _unusable(name_or_path, error) from None


def generate_queries(model, tokenizer, passages: list[str], per_passage: int, seed: int, max_length: int = 64,
                     batch_size: int = 16) -> list[list[str]]:
    """`per_passage` sampled queries for each passage, reproducible for a seed."""
    torch.manual_seed(seed)
    model.eval()
    queries = []
    with torch.inference_mode():
        for start in range(0, len(passages), batch_size):
            batch = tokenizer(passages[start:start + batch_size], truncation=True, max_length=256, padding=True,
                              return_tensors="pt", return_token_type_ids=False).to(model.device)
            outputs = model.generate(**batch, do_sample=True, top_p=0.95, max_length=max_length,
                                     num_return_sequences=per_passage)
            texts = tokenizer.batch_decode(outputs, skip_special_tokens=True)
            queries.extend(texts[i:i + per_passage] for i in range(0, len(texts), per_passage))
    return queries
