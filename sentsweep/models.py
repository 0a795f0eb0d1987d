"""Sentence-encoder loading (hub name or local path) with a chosen pooling, and a tiny random BERT for tests.

A model is a sentence-transformers `SentenceTransformer` made of a Transformer module and a Pooling module
(and, for "cls_linear" pooling, a Dense module after it; for the poolings of `LAYER_POOLING`, a
`HiddenLayerPooling` module in place of the Pooling module).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from sentsweep.errors import InputError
from sentsweep.hub import is_hub_name
from sentsweep.noise import split_words

# "cls_linear": the [CLS] token's vector through a trainable linear layer with tanh (hidden -> hidden), the pooling
# of SimCSE's official code ("a linear layer on the CLS token embedding as the pooling method", TSDAE paper
# (Wang et al., 2021) App. B). See `load_sentence_model`.
#
# Malmberg (2021), §3.3.1: BERT's sentence vector is its [CLS] token's, or "averaging the sentence's token
# embeddings excluding [CLS] and [SEP] embeddings", and "the embeddings were extracted from the second last
# layer" (bert-as-service's default layer). name: (token vectors pooled, hidden layer (-1: the last, -2: the one
# below it), without [CLS] and [SEP]). Malmberg 2021's own BERT rows are `cls_second_last` and
# `mean_no_special_second_last`; `mean_second_last` is bert-as-service's default mean, which keeps [CLS] and [SEP].
LAYER_POOLING = {
    "mean_no_special": ("mean", -1, True),
    "cls_second_last": ("cls", -2, False),
    "mean_second_last": ("mean", -2, False),
    "mean_no_special_second_last": ("mean", -2, True),
}
POOLING_MODES = ("cls", "mean", "max", "cls_linear", *LAYER_POOLING)
SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def check_pooling(pooling: str) -> str:
    """Return `pooling` if it is one of POOLING_MODES; otherwise raise an `InputError` naming it."""
    if pooling not in POOLING_MODES:
        raise InputError(f"unknown pooling {pooling!r}; expected one of {', '.join(POOLING_MODES)}")
    return pooling


def check_model_source(name_or_path: str) -> str:
    """Return a usable model source: an existing local folder (made absolute) or a hub name.

    A local-looking path that does not exist, or a folder without a `config.json`, is an `InputError`.
    """
    path = Path(name_or_path).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise InputError(f"model folder {name_or_path!r} has no config.json (not a transformers model)")
        return str(path.resolve())
    if not is_hub_name(name_or_path):
        raise InputError(f"model path {name_or_path!r} does not exist")
    return name_or_path


def quiet_transformers() -> None:
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


def load_sentence_model(
    name_or_path: str,
    pooling: str | None = "cls",
    max_seq_length: int = 128,
    device: str | None = None,
    dropout: float | None = None,
):
    """A SentenceTransformer for `name_or_path` with `pooling` over the last layer.

    `pooling=None` keeps the model's own sentence-transformers configuration (its pooling and any
    normalisation), which is how a published model is evaluated as released. A sentence-transformers model
    whose own pooling is `pooling` (see `saved_pooling`: a released model such as all-MiniLM-L6-v2, mean pooling
    then Normalize; a sweep's exported model, trained linear layer included) is loaded as it is, every module
    kept, so it trains as released and the next stage of a chain starts from exactly the model the last one
    selected. Any other pooling replaces the modules after the Transformer (`replaced_modules` says which).
    The poolings of `LAYER_POOLING` (Malmberg 2021) pool hidden layer -1 or -2 with a `HiddenLayerPooling` module; a
    model saved with one reloads with `SentenceTransformer(folder, trust_remote_code=True)`, since the module's
    class is this package's.
    `dropout` sets the transformer's dropout probabilities, of its hidden layers and of its attention
    (`hidden_dropout_prob` and `attention_probs_dropout_prob`: BERT's names); None keeps the checkpoint's own.
    0 trains without the encoder's dropout (ConSERT).

    `pooling="cls_linear"` is [CLS] pooling followed by a Dense layer (hidden -> hidden, tanh), the MLP pooler of
    SimCSE's official code, which the TSDAE paper (Wang et al., 2021, App. B) describes as "a linear layer on
    the CLS token embedding as the pooling method". The layer is a module of the SentenceTransformer, so it is
    trained, saved and used at evaluation with the encoder (SimCSE's unsupervised recipe drops it at
    evaluation; here it stays). It starts as the checkpoint's own linear layers did: weights drawn from
    N(0, initializer_range), bias 0.
    """
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Transformer
    from sentence_transformers.sentence_transformer.modules import Dense, Pooling

    quiet_transformers()
    source = check_model_source(name_or_path)
    if pooling is not None:
        check_pooling(pooling)
    dropouts = {} if dropout is None else {"hidden_dropout_prob": dropout, "attention_probs_dropout_prob": dropout}
    if pooling is None or saved_pooling(source) == pooling:
        model = SentenceTransformer(source, device=device or "cpu", config_kwargs=dropouts or None)
        model.max_seq_length = max_seq_length
        return named_for_records(model, name_or_path)
    if pooling in LAYER_POOLING:
        mode, layer, no_special = LAYER_POOLING[pooling]
        hidden_states = {"output_hidden_states": True} if layer != -1 else {}
        transformer = Transformer(source, max_seq_length=max_seq_length, config_kwargs=dropouts | hidden_states)
        excluded = cls_and_sep_ids(transformer.tokenizer, name_or_path, pooling) if no_special else []
        pooler = _hidden_layer_pooling_class()(transformer.get_embedding_dimension(), mode, layer, excluded)
        return named_for_records(SentenceTransformer(modules=[transformer, pooler], device=device or "cpu"),
                                 name_or_path)
    transformer = Transformer(source, max_seq_length=max_seq_length, config_kwargs=dropouts)
    dimension = transformer.get_embedding_dimension()
    modules = [transformer, Pooling(dimension, pooling_mode="cls" if pooling == "cls_linear" else pooling)]
    if pooling == "cls_linear":
        std = getattr(transformer.auto_model.config, "initializer_range", 0.02)
        modules.append(Dense(dimension, dimension, activation_function=torch.nn.Tanh(),
                             init_weight=torch.empty(dimension, dimension).normal_(0.0, std),
                             init_bias=torch.zeros(dimension)))
    return named_for_records(SentenceTransformer(modules=modules, device=device or "cpu"), name_or_path)


def record_name(name_or_path: str) -> str:
    """The name a model's records file it under (its `model_card_data.model_name`, which MTEB's `ModelMeta` reads
    and which names the folder of its result files; MTEB takes only "organization/name"): a hub model's own name
    ("sentence-transformers/all-MiniLM-L6-v2"; one without an organization as "hub/bert-base-uncased"), a local
    folder's "local/<the folder's name>"."""
    if Path(name_or_path).expanduser().exists():
        return f"local/{Path(name_or_path).expanduser().resolve().name}"
    return name_or_path if "/" in name_or_path else f"hub/{name_or_path}"


def named_for_records(model, name_or_path: str):
    """`model` with `model_card_data.model_name` set to the `record_name` of `name_or_path` (where its card has
    none of its own: a released model keeps its name); returns it."""
    card = getattr(model, "model_card_data", None)
    if card is not None and not card.model_name:
        card.model_name = record_name(name_or_path)
    return model


def saved_pooling(source: str) -> str | None:
    """The pooling of a sentence-transformers model (a local folder, or a hub name as `SentenceTransformer` finds
    it) as `load_sentence_model` names it, when its modules start with a Transformer and a Pooling module of mode
    cls, mean or max: "cls_linear" for exactly a Transformer, a CLS Pooling module and a Dense layer (what
    `load_sentence_model` builds for it); otherwise the Pooling module's mode, whatever modules follow it (a
    released model's Normalize or Dense). None for anything else (a bare transformers model, other poolings)."""
    modules = saved_modules(source)
    if modules is None or [kind for kind, _ in modules[:2]] != ["Transformer", "Pooling"]:
        return None
    mode = _pooling_mode(source, modules[1][1])
    if mode not in ("cls", "mean", "max"):
        return None
    if [kind for kind, _ in modules[2:]] == ["Dense"] and mode == "cls":
        return "cls_linear"
    return mode


def saved_modules(source: str) -> list[tuple[str, str]] | None:
    """[(module class name, its folder)] of a sentence-transformers model's modules.json; None where it has none."""
    import json

    modules_file = _model_file(source, "modules.json")
    if modules_file is None:
        return None
    modules = json.loads(modules_file.read_text(encoding="utf-8"))
    return [(entry["type"].rsplit(".", 1)[-1], entry["path"]) for entry in modules]


def replaced_modules(source: str, pooling: str) -> str | None:
    """What `load_sentence_model(source, pooling)` puts in place of the model's own modules after its
    Transformer, in words ("Pooling(mean), Normalize replaced by Pooling(cls)"); None where it keeps them or the
    model has none of its own (a bare transformers checkpoint)."""
    modules = saved_modules(source)
    if modules is None or saved_pooling(source) == pooling:
        return None
    own = [f"{kind}({_pooling_mode(source, folder)})" if kind == "Pooling" else kind
           for kind, folder in modules[1:]]
    if pooling in LAYER_POOLING:
        built = f"HiddenLayerPooling({pooling})"
    else:
        built = "Pooling(cls), Dense(tanh)" if pooling == "cls_linear" else f"Pooling({pooling})"
    return f"{', '.join(own)} replaced by {built}"


# sentence-transformers' Pooling config before its single pooling_mode key: one flag per mode
LEGACY_POOLING_FLAGS = {"pooling_mode_cls_token": "cls", "pooling_mode_mean_tokens": "mean",
                        "pooling_mode_max_tokens": "max"}


def _pooling_mode(source: str, folder: str) -> str | None:
    """The mode of the Pooling module saved in `folder` of the model: its pooling_mode, or the one legacy flag
    set (None when several are, or another mode)."""
    import json

    config_file = _model_file(source, f"{folder}/config.json" if folder else "config.json")
    if config_file is None:
        return None
    config = json.loads(config_file.read_text(encoding="utf-8"))
    if "pooling_mode" in config:
        return config["pooling_mode"] if isinstance(config["pooling_mode"], str) else None
    flags = [key for key, value in config.items() if key.startswith("pooling_mode_") and value]
    return LEGACY_POOLING_FLAGS.get(flags[0]) if len(flags) == 1 else None


def _model_file(source: str, relative: str) -> Path | None:
    """A file of the model: in its local folder, or of a hub model (from the Hugging Face cache, downloaded if it
    is not there yet, as loading the model would); None where the model has no such file."""
    path = Path(source)
    if path.is_dir():
        return path / relative if (path / relative).is_file() else None
    from huggingface_hub import hf_hub_download

    try:
        return Path(hf_hub_download(source, relative))
    except Exception:  # no such file, repository or cached snapshot: the model has none of its own to keep
        return None


def cls_and_sep_ids(tokenizer, name_or_path: str, pooling: str) -> list[int]:
    """The ids of the tokenizer's [CLS] and [SEP] tokens (its sequence start and end tokens: <s> and </s> for
    RoBERTa); an `InputError` naming the model when it has neither."""
    ids = {token_id for token_id in (tokenizer.cls_token_id, tokenizer.sep_token_id) if token_id is not None}
    if not ids:
        raise InputError(f"pooling {pooling!r} leaves out [CLS] and [SEP], but the tokenizer of {name_or_path!r} "
                         f"has neither")
    return sorted(ids)


@functools.cache
def _hidden_layer_pooling_class():
    """`HiddenLayerPooling`, defined on first use so that importing this module does not import
    sentence-transformers (nor torch)."""
    import torch
    from sentence_transformers.base.modules.module import Module

    class HiddenLayerPooling(Module):
        """Pools one hidden layer of the transformer into the sentence vector (Malmberg (2021), §3.3.1).

        With H = the token vectors of hidden layer `layer` (-1: the last, the transformer's `token_embeddings`;
        -2: the second to last, from its `all_layer_embeddings`, so the transformer must output hidden states)
        and M_i = 1 for the tokens that count (attention mask 1, and, with `excluded_token_ids` ([CLS], [SEP]),
        input id not one of those):

            mode "cls":  s = H_first, the first token that is not padding
            mode "mean": s = sum_i M_i H_i / max(sum_i M_i, 1e-9)
        """

        config_keys = ["embedding_dimension", "mode", "layer", "excluded_token_ids"]

        def __init__(self, embedding_dimension: int, mode: str = "mean", layer: int = -1,
                     excluded_token_ids: list[int] | None = None) -> None:
            super().__init__()
            if mode not in ("cls", "mean"):
                raise ValueError(f"HiddenLayerPooling mode {mode!r}: expected 'cls' or 'mean'")
            self.embedding_dimension = embedding_dimension
            self.mode = mode
            self.layer = layer
            self.excluded_token_ids = list(excluded_token_ids or [])

        def forward(self, features: dict, **kwargs) -> dict:
            if self.layer == -1:
                tokens = features["token_embeddings"]
            elif "all_layer_embeddings" in features:
                tokens = features["all_layer_embeddings"][self.layer]
            else:
                raise RuntimeError(f"pooling layer {self.layer} needs the transformer's hidden states: load it with "
                                   f"config output_hidden_states=True")
            attention = features["attention_mask"]
            if self.mode == "cls":
                first = attention.to(torch.int).argmax(dim=1)
                features["sentence_embedding"] = tokens[torch.arange(len(tokens), device=tokens.device), first]
                return features
            mask = attention.bool()
            if self.excluded_token_ids:
                excluded = torch.tensor(self.excluded_token_ids, device=tokens.device)
                mask = mask & ~torch.isin(features["input_ids"], excluded)
            dtype = torch.float32 if tokens.dtype in (torch.float16, torch.bfloat16) else tokens.dtype
            weights = mask.unsqueeze(-1).to(dtype)
            total = (tokens.to(dtype) * weights).sum(dim=1)
            features["sentence_embedding"] = (total / weights.sum(dim=1).clamp(min=1e-9)).to(tokens.dtype)
            return features

        def get_embedding_dimension(self) -> int:
            return self.embedding_dimension

        def save(self, output_path: str, *args, **kwargs) -> None:
            self.save_config(output_path)

    HiddenLayerPooling.__module__ = __name__
    HiddenLayerPooling.__qualname__ = "HiddenLayerPooling"
    return HiddenLayerPooling


def __getattr__(name: str):
    """`sentsweep.models.HiddenLayerPooling` (PEP 562), also for sentence-transformers reloading a saved model."""
    if name == "HiddenLayerPooling":
        return _hidden_layer_pooling_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def preprocess_on_device(model, texts: list[str]) -> dict:
    """The model's tokenized features of `texts`, tensors on the model's device (other entries as they are).

    Examples:
        >>> features = sentsweep.preprocess_on_device(model, ["A man is playing a guitar.", "A dog runs."])
        >>> features["input_ids"].shape[0], features["input_ids"].device == model.device
        (2, True)
    """
    import torch

    features = model.preprocess(texts)
    return {key: value.to(model.device) if torch.is_tensor(value) else value for key, value in features.items()}


def build_tiny_model(
    output_dir: str | Path,
    sentences: list[str],
    hidden_size: int = 32,
    num_layers: int = 2,
    num_heads: int = 2,
    seed: int = 0,
) -> Path:
    """Write a tiny randomly initialised BERT (with its MLM head) and a word-level tokenizer to `output_dir`.

    The vocabulary is every lower-cased word of `sentences` plus single characters as word pieces, so any
    text tokenizes without [UNK] for the characters seen. No network access is needed.
    """
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    quiet_transformers()
    output_dir = Path(output_dir)
    words = sorted({word.lower() for sentence in sentences for word in split_words(sentence)})
    characters = sorted({character for word in words for character in word})
    pieces = SPECIAL_TOKENS + words + [c for c in characters if c not in words] + [f"##{c}" for c in characters]
    vocabulary = {token: index for index, token in enumerate(dict.fromkeys(pieces))}
    tokenizer = BertTokenizerFast(vocab=vocabulary, do_lower_case=True)
    config = BertConfig(
        vocab_size=len(vocabulary),
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        intermediate_size=2 * hidden_size,
        max_position_embeddings=128,
        pad_token_id=vocabulary["[PAD]"],
    )
    torch.manual_seed(seed)
    BertForMaskedLM(config).save_pretrained(output_dir)
    tokenizer.save_pretrained(output_dir)
    return output_dir


def build_tiny_seq2seq(output_dir: str | Path, tokenizer_dir: str | Path, hidden_size: int = 32, seed: int = 0) -> Path:
    """Write a tiny randomly initialised T5 that uses the tokenizer in `tokenizer_dir` (a query generator for
    tests: it generates well-formed token sequences, not sensible queries)."""
    import torch
    from transformers import AutoTokenizer, T5Config, T5ForConditionalGeneration

    quiet_transformers()
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    config = T5Config(
        vocab_size=len(tokenizer), d_model=hidden_size, d_kv=hidden_size // 2, d_ff=2 * hidden_size, num_layers=2,
        num_heads=2, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.sep_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    T5ForConditionalGeneration(config).save_pretrained(output_dir)
    tokenizer.save_pretrained(output_dir)
    return Path(output_dir)


def reinitialise(module) -> None:
    """Every transformers model inside `module` (the outermost ones) given fresh random weights of its own
    architecture: its class built anew from its config (the library's initialisation, drawn from torch's current
    random state) and its weights loaded into the model in place, so that weights the model shares with another
    module stay shared. A model trained "from scratch" (TSDAE paper, §8, Table 4)."""
    from transformers import PreTrainedModel

    outermost = []
    for name, child in module.named_modules():
        inside = any(outer == "" or name.startswith(f"{outer}.") for outer, _ in outermost)
        if isinstance(child, PreTrainedModel) and not inside:
            outermost.append((name, child))
    for _, model in outermost:
        fresh = type(model)(model.config)
        model.load_state_dict(fresh.state_dict())


def build_tiny_encoder_decoder(output_dir: str | Path, tokenizer_dir: str | Path, kind: str, hidden_size: int = 32,
                               seed: int = 0) -> Path:
    """Write a tiny randomly initialised BART (`kind` "bart") or T5 ("t5") that uses the tokenizer in
    `tokenizer_dir` (the tiny BERT's: [CLS] starts a sentence, [SEP] ends it) to `output_dir`, for tests and
    --quick runs of TSDAE on an encoder-decoder. The tokenizer is saved to give only token ids and their mask, the
    inputs of BART's and T5's encoders."""
    import torch
    from transformers import (
        AutoTokenizer,
        BartConfig,
        BartForConditionalGeneration,
        T5Config,
        T5ForConditionalGeneration,
    )

    quiet_transformers()
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir), model_input_names=["input_ids", "attention_mask"])
    special = dict(pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.cls_token_id,
                   eos_token_id=tokenizer.sep_token_id)
    torch.manual_seed(seed)
    if kind == "bart":
        config = BartConfig(vocab_size=len(tokenizer), d_model=hidden_size, encoder_layers=2, decoder_layers=2,
                            encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=2 * hidden_size,
                            decoder_ffn_dim=2 * hidden_size, max_position_embeddings=128, forced_eos_token_id=None,
                            decoder_start_token_id=tokenizer.sep_token_id, **special)
        model = BartForConditionalGeneration(config)
    elif kind == "t5":
        config = T5Config(vocab_size=len(tokenizer), d_model=hidden_size, d_kv=hidden_size // 2, d_ff=2 * hidden_size,
                          num_layers=2, num_heads=2, decoder_start_token_id=tokenizer.pad_token_id, **special)
        model = T5ForConditionalGeneration(config)
    else:
        raise ValueError(f"kind {kind!r}: expected 'bart' or 't5'")
    model.save_pretrained(output_dir)
    tokenizer.save_pretrained(output_dir)
    return Path(output_dir)


def is_encoder_decoder_folder(name_or_path: str) -> bool:
    """Whether `name_or_path` is a local model folder whose config.json says it is an encoder-decoder (False for a
    hub name or anything else that is no such folder)."""
    config = Path(name_or_path).expanduser() / "config.json"
    return config.is_file() and bool(json.loads(config.read_text(encoding="utf-8")).get("is_encoder_decoder"))
