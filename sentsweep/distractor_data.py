"""The STS-B distractor pools of Malmberg (2021), §3.2.1 and §3.4.4, built from a masked LM.

    sentsweep build-distractors --model bert-large-uncased --sts-dir data/stsbenchmark --output-dir distractors

For every scored pair of an STS benchmark file one sentence is perturbed (`perturb`: a random one of the two
by default) and the other is the query. A perturbation masks one word, feeds the masked sentence to the masked
LM and puts in the word's place the token at rank `rank` (100: "the 100th best argument of the softmax layer
for the masked token") of the LM's prediction there. `negatives` (5) such sentences are made per pair, each
from its own chain of changes: the chain's k-th sentence has k words changed, the (k+1)-th masks one more word
of it ("the synthetic sentences can be masked and fed to the BERT network to change yet another token"), up to
`max_tokens_changed` (5). A pool is the query, the original partner (the positive, at a random place) and the
chains' k-th sentences: "the original sentence pair, as well as 5 synthetically created sentences".

The pools are written once per bucket of pairs and number of changed words k, 3 x 5 = 15 files per split
(§3.4.4): `<output>/<split>/<bucket>_<k>.jsonl`, bucket `all`, `ge3` (gold score >= 3) and `le3` (<= 3), each
line {"query", "candidates", "positive"} as the `distractors` evaluation task reads it
(`--eval-task distractors=<file>`), with the gold score, the pair's line and, per candidate, the words
changed ([word index, original, replacement]) for inspection. `<output>/manifest.json` records the
settings, the model and the counts.

What Malmberg 2021 leaves open and the project's choices are in docs/methods.md, "Distractor pools".
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from sentsweep.data import STS_BENCHMARK_SPLIT_FILES, ScoredPairs, read_sts_benchmark_file
from sentsweep.errors import InputError
from sentsweep.models import check_model_source, quiet_transformers
from sentsweep.references import THESIS_MALMBERG_2021
from sentsweep.settings import Settings, cited, project_choice, required_input, setting

_WORD = re.compile(r"(\w+)")


@dataclass(frozen=True)
class DistractorSettings(Settings):
    """How the pools are made (see the module docstring)."""

    model: str = setting(help="the masked LM, hub name or local folder (Malmberg 2021: BERT-large, checkpoint not "
                              "named)",
                         source=required_input())
    rank: int = setting(
        100, "the replacement is the token at this rank of the masked LM's prediction (1: the best)",
        cited(THESIS_MALMBERG_2021, "§3.2.1", '"the output was instead chosen to be the 100th best argument of the '
              'softmax layer for the masked token"'), ge=1)
    negatives: int = setting(
        5, "perturbed sentences per pool",
        cited(THESIS_MALMBERG_2021, "§3.2.1", '"This procedure is repeated 5 times to create a context consisting of '
              '5 sentences"'), ge=1)
    max_tokens_changed: int = setting(
        5, "files are written for 1 ... this many words changed per perturbed sentence",
        cited(THESIS_MALMBERG_2021, "§3.4.4", '"with tokens changed per sentence ranging from 1 to 5"'), ge=1)
    perturb: Literal["random", "first", "second"] = setting(
        "random", "which sentence of a pair is perturbed (the other is the query)",
        cited(THESIS_MALMBERG_2021, "§3.2.1", '"one random word belonging to one of the sentences was masked"; the '
              "worked example perturbs the second"))
    threshold: float = setting(
        3.0, "the buckets: all pairs, gold score >= threshold, gold score <= threshold",
        cited(THESIS_MALMBERG_2021, "§3.4.4", '"greater or equal to 3" and "less or equal to 3" (the captions of '
              'Figs. 4.2-4.3 say "greater than 3" and "less than 3")'))
    seed: int = setting(0, "draws the perturbed sentence, the masked words and the positive's place",
                        project_choice("Malmberg 2021 gives no seed"), ge=0)

    def buckets(self) -> dict[str, object]:
        """{bucket name: keeps(score)}."""
        label = f"{self.threshold:g}".replace(".", "p").replace("-", "m")
        return {"all": lambda score: True, f"ge{label}": lambda score: score >= self.threshold,
                f"le{label}": lambda score: score <= self.threshold}


def word_slots(text: str) -> list[str]:
    """`text` split into [gap, word, gap, word, ..., gap]: the words (\\w+) at the odd indices, joined back
    unchanged."""
    return _WORD.split(text)


class MaskedLm:
    """A masked LM and its tokenizer, asked for the token at a given rank of its prediction at one mask."""

    def __init__(self, name_or_path: str, device: str | None = None, batch_size: int = 64) -> None:
        import torch
        from transformers import AutoModelForMaskedLM, AutoTokenizer

        quiet_transformers()
        source = check_model_source(name_or_path)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(source)
            self.model = AutoModelForMaskedLM.from_pretrained(source)
        except (OSError, ValueError) as error:
            raise InputError(f"cannot load {name_or_path!r} as a masked LM: {error}") from error
        if self.tokenizer.mask_token is None:
            raise InputError(f"the tokenizer of {name_or_path!r} has no mask token: not a masked LM")
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device).eval()
        self.batch_size = batch_size
        limits = [self.tokenizer.model_max_length, getattr(self.model.config, "max_position_embeddings", 512), 512]
        self.max_length = int(min(limit for limit in limits if limit))
        tokens = self.tokenizer.convert_ids_to_tokens(list(range(len(self.tokenizer))))
        special = set(self.tokenizer.all_special_ids)
        self.token_texts = [self.tokenizer.convert_tokens_to_string([token]).strip() for token in tokens]
        self.eligible = np.array([
            index not in special and not token.startswith("##") and re.fullmatch(r"\w+", text) is not None
            for index, (token, text) in enumerate(zip(tokens, self.token_texts))
        ])
        self.ids_of_text: dict[str, list[int]] = {}
        for index in np.flatnonzero(self.eligible):
            self.ids_of_text.setdefault(self.token_texts[index].lower(), []).append(int(index))

    @property
    def eligible_count(self) -> int:
        return int(self.eligible.sum())

    def replacements(self, masked_texts: list[str], originals: list[str], rank: int) -> list[str]:
        """For each text holding one mask token: the text of the eligible token at `rank` of the prediction at
        the mask, the original word's own token(s) left out (see the module docstring)."""
        import torch

        eligible = torch.tensor(self.eligible, device=self.device)
        mask_id = self.tokenizer.mask_token_id
        chosen = []
        for start in range(0, len(masked_texts), self.batch_size):
            texts = masked_texts[start:start + self.batch_size]
            encoded = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length,
                                     return_tensors="pt").to(self.device)
            counts = (encoded["input_ids"] == mask_id).sum(dim=1).tolist()
            for text, count in zip(texts, counts):
                if count != 1:
                    raise InputError(f"sentence {text!r} holds {count} mask tokens after tokenization (1 expected; "
                                     f"longer than {self.max_length} tokens?)")
            with torch.no_grad():
                logits = self.model(**encoded).logits
            rows, positions = (encoded["input_ids"] == mask_id).nonzero(as_tuple=True)
            predictions = logits[rows, positions].float().masked_fill(~eligible, float("-inf"))
            for prediction, original in zip(predictions, originals[start:start + self.batch_size]):
                left_out = self.ids_of_text.get(original.lower(), [])
                if left_out:
                    prediction[left_out] = float("-inf")
                values, ids = torch.topk(prediction, rank)
                values, ids = values.cpu().numpy(), ids.cpu().numpy()
                pick = np.lexsort((ids, -values))[rank - 1]  # equal logits: the lower id first
                if not np.isfinite(values[pick]):
                    raise InputError(f"rank={rank}: fewer word tokens than that can replace {original!r}")
                chosen.append(self.token_texts[int(ids[pick])])
        return chosen


@dataclass
class _Chain:
    """One perturbed sentence in the making: its word slots, the word indices it changes in order, and the
    changes made so far."""

    slots: list[str]
    order: list[int]
    changes: list[list] = field(default_factory=list)
    levels: list[str] = field(default_factory=list)


@dataclass
class _Pool:
    line: int
    score: float
    perturbed: str
    query: str
    positive_text: str
    positive_at: int
    chains: list[_Chain]


def plan_pools(pairs: ScoredPairs, settings: DistractorSettings) -> tuple[list[_Pool], list[int]]:
    """Every random choice, made before the LM runs: (the pools to fill, the pair indices left out)."""
    rng = np.random.default_rng(settings.seed)
    needed = max(settings.negatives, settings.max_tokens_changed)
    pools, skipped = [], []
    for index, (first, second, score) in enumerate(zip(pairs.sentences1, pairs.sentences2, pairs.scores)):
        side = settings.perturb if settings.perturb != "random" else ("first", "second")[int(rng.integers(2))]
        query, target = (second, first) if side == "first" else (first, second)
        slots = word_slots(target)
        words = len(slots) // 2
        if words < needed:
            skipped.append(index)
            continue
        starts = rng.choice(words, settings.negatives, replace=False)
        chains = []
        for start in starts:
            others = [int(w) for w in rng.permutation(words) if w != start][: settings.max_tokens_changed - 1]
            chains.append(_Chain(list(slots), [int(start), *others]))
        positive_at = int(rng.integers(settings.negatives + 1))
        pools.append(_Pool(index, score, f"sentence{1 if side == 'first' else 2}", query, target, positive_at,
                           chains))
    return pools, skipped


def fill_pools(pools: list[_Pool], lm: MaskedLm, settings: DistractorSettings) -> None:
    """Runs the chains: at each step every chain masks its next word and takes the LM's rank-th token."""
    chains = [chain for pool in pools for chain in pool.chains]
    for step in range(settings.max_tokens_changed):
        masked, originals = [], []
        for chain in chains:
            slot = 2 * chain.order[step] + 1
            originals.append(chain.slots[slot])
            masked.append("".join(chain.slots[:slot] + [lm.tokenizer.mask_token] + chain.slots[slot + 1:]))
        for chain, original, replacement in zip(chains, originals, lm.replacements(masked, originals, settings.rank)):
            chain.slots[2 * chain.order[step] + 1] = replacement
            chain.changes.append([chain.order[step], original, replacement])
            chain.levels.append("".join(chain.slots))


def pool_record(pool: _Pool, changed: int) -> dict:
    """The JSON line of `pool` with `changed` words changed per perturbed sentence."""
    candidates = [chain.levels[changed - 1] for chain in pool.chains]
    changes = [chain.changes[:changed] for chain in pool.chains]
    candidates.insert(pool.positive_at, pool.positive_text)
    changes.insert(pool.positive_at, [])
    return {"query": pool.query, "candidates": candidates, "positive": pool.positive_at, "score": pool.score,
            "line": pool.line + 1, "perturbed": pool.perturbed, "changed_words": changes}


def build_distractors(settings: DistractorSettings, sts_dir: str | Path, output_dir: str | Path,
                      splits: tuple[str, ...] = ("dev", "test"), device: str | None = None,
                      batch_size: int = 64) -> dict:
    """Writes the pools of each split (see the module docstring); returns the manifest it also writes."""
    unknown = [split for split in splits if split not in STS_BENCHMARK_SPLIT_FILES]
    if unknown:
        raise InputError(f"unknown STS benchmark split {unknown[0]!r}; expected one of "
                         f"{', '.join(STS_BENCHMARK_SPLIT_FILES)}")
    files = {split: Path(sts_dir) / STS_BENCHMARK_SPLIT_FILES[split] for split in splits}
    data = {split: read_sts_benchmark_file(path) for split, path in files.items()}  # bad files fail before the LM
    lm = MaskedLm(settings.model, device, batch_size)
    if settings.rank > lm.eligible_count - 1:
        raise InputError(f"rank={settings.rank} is more than the {lm.eligible_count - 1} word tokens of "
                         f"{settings.model!r} that can replace a word")
    output_dir = Path(output_dir)
    manifest = {"settings": settings.to_config(), "sts_dir": str(sts_dir), "splits": {}}
    for split, pairs in data.items():
        pools, skipped = plan_pools(pairs, settings)
        fill_pools(pools, lm, settings)
        folder = output_dir / split
        folder.mkdir(parents=True, exist_ok=True)
        written = {}
        for bucket, keeps in settings.buckets().items():
            kept = [pool for pool in pools if keeps(pool.score)]
            for changed in range(1, settings.max_tokens_changed + 1):
                path = folder / f"{bucket}_{changed}.jsonl"
                with path.open("w", encoding="utf-8") as handle:
                    for pool in kept:
                        handle.write(json.dumps(pool_record(pool, changed), ensure_ascii=False) + "\n")
                written[path.name] = len(kept)
        manifest["splits"][split] = {"file": str(files[split]), "pairs": len(pairs), "pools": len(pools),
                                     "left_out_too_few_words": [index + 1 for index in skipped], "files": written}
    (output_dir / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n",
                                              encoding="utf-8")
    return manifest


def main(argv=None, prog: str = "sentsweep build-distractors") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="the masked LM: Hugging Face name or local folder")
    parser.add_argument("--sts-dir", required=True, help="STS benchmark folder (sts-dev.csv, sts-test.csv)")
    parser.add_argument("--output-dir", required=True, help="where <split>/<bucket>_<k>.jsonl are written")
    parser.add_argument("--splits", nargs="+", default=["dev", "test"], help="STS benchmark splits (default: dev test)")
    defaults = {row.name: row for row in DistractorSettings.describe()}
    for name in ("rank", "negatives", "max_tokens_changed", "seed"):
        parser.add_argument(f"--{name.replace('_', '-')}", type=int, default=defaults[name].default,
                            help=f"{defaults[name].help} (default {defaults[name].default}; {defaults[name].source})")
    parser.add_argument("--perturb", default="random", help=defaults["perturb"].help + " (random, first or second)")
    parser.add_argument("--threshold", type=float, default=3.0, help=defaults["threshold"].help)
    parser.add_argument("--batch-size", type=int, default=64, help="masked sentences per forward pass")
    parser.add_argument("--device", help="torch device (default: cuda if available)")
    args = parser.parse_args(argv)
    try:
        settings = DistractorSettings.from_config({
            "model": args.model, "rank": args.rank, "negatives": args.negatives,
            "max_tokens_changed": args.max_tokens_changed, "perturb": args.perturb, "threshold": args.threshold,
            "seed": args.seed})
        if args.batch_size < 1:
            raise InputError(f"--batch-size {args.batch_size} must be >= 1")
        manifest = build_distractors(settings, args.sts_dir, args.output_dir, tuple(args.splits), args.device,
                                     args.batch_size)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for split, summary in manifest["splits"].items():
        print(f"{split}: {summary['pools']} pools of {summary['pairs']} pairs "
              f"({len(summary['left_out_too_few_words'])} left out: too few words), "
              f"{len(summary['files'])} files in {Path(args.output_dir) / split}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
