"""Readers for the data formats the sweeps consume.

- plain-text corpus: one sentence per line;
- STS benchmark format (tab-separated: genre, file, year, id, score, sentence1, sentence2[, extra...]);
- SICK format (tab-separated with a header naming sentence_A, sentence_B, relatedness_score[, SemEval_set]):
  the full release SICK.txt, SemEval 2014's SICK_train.txt / SICK_trial.txt / SICK_test_annotated.txt, or a
  folder of either;
- any Hugging Face `datasets` source (hub name or local path) with sentence1 / sentence2 / score columns;
- NLI pairs (SNLI + MultiNLI) as sentence-transformers' AllNLI.tsv.gz: tab-separated with a header naming
  split, sentence1, sentence2 and label (entailment / neutral / contradiction), gzipped or not.

Every reader fails with an `InputError` naming the file, the line and the problem: a score that is no finite
number (`nan`, `inf` are refused: one would turn every Spearman correlation it enters into nan), a score outside
its benchmark's declared scale (`ScoreScale`: the STS benchmark's and STS12-16's 0-5, SICK's 1-5; a Hugging Face
data set declares none), or an empty sentence (blank lines of a corpus are skipped: a corpus has no line structure
to keep). A dev or test split whose scores are all equal is refused too (`check_rankable`): Spearman's rho, the
score every STS evaluation reports, is undefined on it.
"""

from __future__ import annotations

import csv
import gzip
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sentsweep.errors import InputError
from sentsweep.references import SEMEVAL_STS, SICK, STS_BENCHMARK, Reference

STS_BENCHMARK_SPLIT_FILES = {"train": "sts-train.csv", "dev": "sts-dev.csv", "test": "sts-test.csv"}
SICK_SPLIT_NAMES = {"train": "TRAIN", "dev": "TRIAL", "test": "TEST"}  # split: SICK.txt's SemEval_set label
SICK_FULL_FILE = "SICK.txt"
SICK_SEMEVAL_FILES = {"train": "SICK_train.txt", "dev": "SICK_trial.txt", "test": "SICK_test_annotated.txt"}
NLI_COLUMNS = ("split", "sentence1", "sentence2", "label")
NLI_LABELS = ("entailment", "neutral", "contradiction")


@dataclass(frozen=True)
class ScoredPairs:
    """Sentence pairs with a gold similarity score each, and where they came from."""

    sentences1: list[str]
    sentences2: list[str]
    scores: list[float]
    source: str

    def __len__(self) -> int:
        return len(self.scores)


@dataclass(frozen=True)
class ScoreScale:
    """The gold scores a benchmark's pairs take, from `low` to `high`, as `where` in `reference` says."""

    low: float
    high: float
    reference: Reference
    where: str

    def describe(self) -> str:
        return f"{self.reference.label}'s {self.low:g}-{self.high:g} scale ({self.reference.label} {self.where})"


# Cer et al. (2017), Table 1: the STS benchmark's pairs are scored from 0 (on different topics) to 5 (completely
# equivalent), the scale of the SemEval STS tasks of 2012-2016 it is drawn from; SICK's relatedness score is the
# mean of ten ratings on a 1-5 scale (Marelli et al. 2014).
STS_BENCHMARK_SCALE = ScoreScale(0.0, 5.0, STS_BENCHMARK, "Table 1: 0, different topics, to 5, equivalent")
SEMEVAL_STS_SCALE = ScoreScale(0.0, 5.0, SEMEVAL_STS, "similarity scale")
SICK_RELATEDNESS_SCALE = ScoreScale(1.0, 5.0, SICK, "relatedness, the mean of ten 1-5 ratings")
EVALUATION_SPLITS = ("dev", "test")


@dataclass(frozen=True)
class NliPremises:
    """The premises of an NLI split, each with its entailed and its contradicting hypotheses (neutral ones are
    not kept), in the file's order, and where they came from."""

    entailments: dict[str, list[str]]
    contradictions: dict[str, list[str]]
    source: str


def read_lines(path: str | Path) -> list[str]:
    """Return the file's lines decoded as UTF-8 (a `.gz` file decompressed first), or fail naming the file and the
    first undecodable line."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"data file not found: {path}")
    raw = path.read_bytes()
    if path.suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as error:
            raise InputError(f"{path}: not a readable gzip file ({error})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line_number = raw[: error.start].count(b"\n") + 1
        raise InputError(
            f"{path}, line {line_number}: not valid UTF-8 (byte {raw[error.start]:#04x} at offset {error.start})"
        ) from None
    return text.splitlines()


def read_corpus(path: str | Path) -> list[str]:
    """Sentences of a one-sentence-per-line text file, blank lines skipped; an empty corpus is an error."""
    sentences = [line.strip() for line in read_lines(path)]
    sentences = [sentence for sentence in sentences if sentence]
    if not sentences:
        raise InputError(f"empty corpus: {path} has no non-blank line")
    return sentences


def parse_score(value: str, path: Path, line_number: int, scale: ScoreScale | None = None) -> float:
    """The score `value` of line `line_number` of `path`, a finite number on `scale` (where given); else an
    `InputError` naming both."""
    try:
        score = float(value)
    except ValueError:
        raise InputError(f"{path}, line {line_number}: score {value!r} is not a number") from None
    if not math.isfinite(score):
        raise InputError(f"{path}, line {line_number}: score {value!r} is not a finite number")
    if scale is not None and not scale.low <= score <= scale.high:
        raise InputError(f"{path}, line {line_number}: score {value} is outside {scale.describe()}")
    return score


def check_rankable(pairs: ScoredPairs) -> ScoredPairs:
    """`pairs` if their gold scores differ; else an `InputError` naming the source: Spearman's rho of scores that
    are all equal is undefined (nothing to rank)."""
    if len(set(pairs.scores)) < 2:
        raise InputError(f"{pairs.source}: every pair's score is {pairs.scores[0]:g}, so Spearman's rho is "
                         "undefined (nothing to rank); an evaluation split needs scores that differ")
    return pairs


def check_sentence(sentence: str, path, line_number: int, which: str) -> str:
    """`sentence` (the `which` sentence of line `line_number` of `path`) if it holds a non-blank character; an
    empty pair member is an `InputError` naming the file and the line."""
    if not sentence.strip():
        raise InputError(f"{path}, line {line_number}: {which} is empty")
    return sentence


def read_sts_benchmark_file(path: str | Path) -> ScoredPairs:
    """Read one STS benchmark file: score in column 5, sentences in columns 6 and 7 (1-based)."""
    path = Path(path)
    sentences1, sentences2, scores = [], [], []
    for line_number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        columns = next(csv.reader([line], delimiter="\t", quoting=csv.QUOTE_NONE))
        if len(columns) < 7:
            raise InputError(
                f"{path}, line {line_number}: expected at least 7 tab-separated columns "
                f"(score in 5, sentences in 6 and 7), found {len(columns)}"
            )
        scores.append(parse_score(columns[4], path, line_number, STS_BENCHMARK_SCALE))
        sentences1.append(check_sentence(columns[5], path, line_number, "sentence 1 (column 6)"))
        sentences2.append(check_sentence(columns[6], path, line_number, "sentence 2 (column 7)"))
    if not scores:
        raise InputError(f"{path}: empty file, no scored pairs")
    return ScoredPairs(sentences1, sentences2, scores, source=str(path))


def tab_separated_rows(lines: list[str], width: int, path) -> Iterator[tuple[int, list[str]]]:
    """(line number, columns) of each non-blank line after a tab-separated file's header; a line of fewer than
    `width` columns is an `InputError` naming the file and line."""
    for line_number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        columns = line.split("\t")
        if len(columns) < width:
            raise InputError(f"{path}, line {line_number}: expected {width} columns, found {len(columns)}")
        yield line_number, columns


def read_nli_file(path: str | Path, split: str = "train") -> NliPremises:
    """Read the rows of `split` of an NLI file in the format of sentence-transformers' AllNLI.tsv.gz (SNLI +
    MultiNLI): tab-separated, columns found by the header line (split, sentence1, sentence2, label; others such
    as dataset and filename are ignored). A missing column, an unknown label, or a split without any premise
    that has both an entailed and a contradicting hypothesis is an `InputError` naming the file."""
    path = Path(path)
    lines = read_lines(path)
    if not lines or not lines[0].strip():
        raise InputError(f"{path}: empty file, expected a header line naming {', '.join(NLI_COLUMNS)}")
    header = lines[0].split("\t")
    missing = [name for name in NLI_COLUMNS if name not in header]
    if missing:
        raise InputError(f"{path}, line 1: NLI header lacks column(s) {', '.join(missing)} (AllNLI.tsv.gz's format: "
                         f"tab-separated {', '.join(NLI_COLUMNS)})")
    index = {name: header.index(name) for name in NLI_COLUMNS}
    entailments: dict[str, list[str]] = {}
    contradictions: dict[str, list[str]] = {}
    for line_number, columns in tab_separated_rows(lines, len(header), path):
        label = columns[index["label"]].strip()
        if label not in NLI_LABELS:
            raise InputError(f"{path}, line {line_number}: label {label!r} is none of {', '.join(NLI_LABELS)}")
        if columns[index["split"]].strip() != split or label == "neutral":
            continue
        premise = check_sentence(columns[index["sentence1"]], path, line_number, "sentence1").strip()
        hypothesis = check_sentence(columns[index["sentence2"]], path, line_number, "sentence2").strip()
        (entailments if label == "entailment" else contradictions).setdefault(premise, []).append(hypothesis)
    if not any(premise in contradictions for premise in entailments):
        raise InputError(f"{path}: no premise of split {split!r} has both an entailment and a contradiction")
    return NliPremises(entailments, contradictions, source=f"{path}[{split}]")


def _sick_header(path: Path, lines: list[str]) -> list[str]:
    if not lines or not lines[0].strip():
        raise InputError(f"{path}: empty file, expected a SICK header line")
    header = lines[0].split("\t")
    missing = [name for name in ("sentence_A", "sentence_B", "relatedness_score") if name not in header]
    if missing:
        hint = (" (SemEval 2014's unannotated test file; the scores are in SICK_test_annotated.txt)"
                if path.name == "SICK_test.txt" else "")
        raise InputError(f"{path}, line 1: SICK header lacks column(s) {', '.join(missing)}{hint}")
    return header


def _check_sick_split(split: str | None) -> None:
    if split is not None and split not in SICK_SPLIT_NAMES:
        raise InputError(f"unknown SICK split {split!r}; expected one of {sorted(SICK_SPLIT_NAMES)}")


def _sick_folder_files(folder: Path) -> dict[str, Path]:
    """{split: file} of SemEval 2014's files in `folder` (SentEval's data/downstream/SICK)."""
    files = {split: folder / name for split, name in SICK_SEMEVAL_FILES.items() if (folder / name).is_file()}
    if not files:
        raise InputError(f"SICK folder {folder} holds neither {SICK_FULL_FILE} nor any of SemEval 2014's "
                         f"{', '.join(SICK_SEMEVAL_FILES.values())}")
    return files


def sick_splits(path: str | Path) -> tuple[str, ...]:
    """The splits (train, dev, test, in that order) that a SICK file or folder holds; see `read_sick_file`."""
    path = Path(path)
    if path.is_dir():
        if (path / SICK_FULL_FILE).is_file():
            return sick_splits(path / SICK_FULL_FILE)
        return tuple(_sick_folder_files(path))
    lines = read_lines(path)
    header = _sick_header(path, lines)
    if "SemEval_set" in header:
        column = header.index("SemEval_set")
        present = {line.split("\t")[column].strip() for line in lines[1:]
                   if line.strip() and len(line.split("\t")) > column}
        return tuple(split for split, label in SICK_SPLIT_NAMES.items() if label in present)
    return tuple(split for split, name in SICK_SEMEVAL_FILES.items() if path.name == name)


def read_sick_file(path: str | Path, split: str | None = None) -> ScoredPairs:
    """Read SICK's relatedness pairs from either release, columns found by the header line.

    - the full release, `SICK.txt` (12 columns: pair_ID, sentence_A, sentence_B, entailment_label,
      relatedness_score, entailment_AB, entailment_BA, sentence_A_original, sentence_B_original,
      sentence_A_dataset, sentence_B_dataset, SemEval_set): `split` (train/dev/test) keeps the rows whose
      SemEval_set is TRAIN/TRIAL/TEST;
    - SemEval 2014 task 1's files, one per split (pair_ID, sentence_A, sentence_B, relatedness_score,
      entailment_judgment): `SICK_train.txt`, `SICK_trial.txt` (dev), `SICK_test_annotated.txt` (test); a
      file under its release name is that split, so asking it for another split is refused;
    - a folder holding SICK.txt, or SemEval's files (SentEval's data/downstream/SICK): the file of `split`.

    Without `split`, every pair of the file or folder. A file with neither a SemEval_set column nor a
    SemEval file name cannot be split, and asking it for a split is refused.
    """
    path = Path(path)
    _check_sick_split(split)
    if path.is_dir():
        if (path / SICK_FULL_FILE).is_file():
            return read_sick_file(path / SICK_FULL_FILE, split)
        files = _sick_folder_files(path)
        if split is not None:
            if split not in files:
                raise InputError(f"SICK folder {path} lacks {SICK_SEMEVAL_FILES[split]}, its {split!r} split")
            return read_sick_file(files[split], split)
        parts = [read_sick_file(file, name) for name, file in files.items()]
        return ScoredPairs([s for part in parts for s in part.sentences1],
                           [s for part in parts for s in part.sentences2],
                           [score for part in parts for score in part.scores], source=str(path))
    lines = read_lines(path)
    header = _sick_header(path, lines)
    select_rows = split is not None and "SemEval_set" in header
    if split is not None and not select_rows:
        file_split = next((name for name, file in SICK_SEMEVAL_FILES.items() if path.name == file), None)
        if file_split is None:
            raise InputError(
                f"{path}, line 1: no SemEval_set column, so split {split!r} cannot be selected (the full "
                f"release {SICK_FULL_FILE} has one; SemEval 2014's files are named "
                f"{', '.join(SICK_SEMEVAL_FILES.values())}, one per split)")
        if file_split != split:
            raise InputError(f"{path} is SemEval 2014's {file_split!r} file; it holds no {split!r} pairs "
                             f"(those are in {SICK_SEMEVAL_FILES[split]})")
    index = {name: header.index(name) for name in header}
    sentences1, sentences2, scores = [], [], []
    for line_number, columns in tab_separated_rows(lines, len(header), path):
        if select_rows and columns[index["SemEval_set"]].strip() != SICK_SPLIT_NAMES[split]:
            continue
        scores.append(parse_score(columns[index["relatedness_score"]], path, line_number, SICK_RELATEDNESS_SCALE))
        sentences1.append(check_sentence(columns[index["sentence_A"]], path, line_number, "sentence_A"))
        sentences2.append(check_sentence(columns[index["sentence_B"]], path, line_number, "sentence_B"))
    if not scores:
        raise InputError(f"{path}: no scored pairs" + (f" in split {split!r}" if split else ""))
    return ScoredPairs(sentences1, sentences2, scores, source=f"{path}" + (f"[{split}]" if split else ""))


def sts_benchmark_files(sts_dir: str | Path) -> dict[str, Path]:
    """Paths of the train/dev/test files of an STS benchmark folder; a missing file is an error."""
    sts_dir = Path(sts_dir)
    if not sts_dir.is_dir():
        raise InputError(f"STS folder not found: {sts_dir}")
    files = {split: sts_dir / name for split, name in STS_BENCHMARK_SPLIT_FILES.items()}
    for split in ("dev", "test"):
        if not files[split].is_file():
            raise InputError(f"STS folder {sts_dir} lacks its {split} file {files[split].name}")
    return files


def load_hf_scored_pairs(name_or_path: str, split: str) -> ScoredPairs:
    """Scored pairs from a `datasets` source: a hub name, a local dataset script/folder or a saved dataset."""
    import datasets

    path = Path(name_or_path)
    try:
        if (path / "dataset_info.json").is_file() or (path / "dataset_dict.json").is_file():
            dataset = datasets.load_from_disk(str(path))
            dataset = dataset[split] if isinstance(dataset, datasets.DatasetDict) else dataset
        else:
            dataset = datasets.load_dataset(name_or_path, split=split)
    except Exception as error:  # datasets raises many types; the user needs the name and the cause
        raise InputError(f"cannot load dataset {name_or_path!r} split {split!r}: {error}") from error
    score_column = "score" if "score" in dataset.column_names else "label"
    missing = [c for c in ("sentence1", "sentence2", score_column) if c not in dataset.column_names]
    if missing:
        raise InputError(
            f"dataset {name_or_path!r} lacks column(s) {', '.join(missing)}; has {dataset.column_names}"
        )
    source = f"{name_or_path}[{split}]"
    sentences1, sentences2, scores = list(dataset["sentence1"]), list(dataset["sentence2"]), []
    for row, (first, second, score) in enumerate(zip(sentences1, sentences2, dataset[score_column])):
        if not isinstance(score, (int, float)) or not math.isfinite(score):
            raise InputError(f"dataset {source}, row {row}: {score_column} {score!r} is not a finite number")
        for column, sentence in (("sentence1", first), ("sentence2", second)):
            if not isinstance(sentence, str) or not sentence.strip():
                raise InputError(f"dataset {source}, row {row}: {column} is empty")
        scores.append(float(score))
    return ScoredPairs(sentences1, sentences2, scores, source=source)


def is_useb_training_folder(path: str | Path) -> bool:
    folder = Path(path)
    return folder.is_dir() and any((folder / name).is_file() for name in ("train.org", "train.s1"))


def read_useb_training_pairs(folder: str | Path) -> ScoredPairs:
    """USEB's labelled training pairs (https://github.com/UKPLab/useb, data-train/<task>/supervised): `train.org`
    and `train.para`, aligned lines of relevant pairs (AskUbuntu, CQADupStack, SciDocs; score 1 each, for
    MultipleNegativesRankingLoss), or `train.s1`, `train.s2` and `train.lbl`, pairs with a float label
    (TwitterPara). Files of different lengths, or a label that is no number, are an `InputError`."""
    folder = Path(folder)
    if (folder / "train.s1").is_file():
        first, second, labels = (read_lines(folder / f"train.{part}") for part in ("s1", "s2", "lbl"))
        scores = [parse_score(label, folder / "train.lbl", number) for number, label in enumerate(labels, start=1)]
    else:
        first, second = (read_lines(folder / f"train.{part}") for part in ("org", "para"))
        scores = [1.0] * len(first)
    if not len(first) == len(second) == len(scores) or not first:
        raise InputError(f"{folder}: the USEB training files must hold the same number of lines, and some "
                         f"({len(first)}, {len(second)}, {len(scores)})")
    names = ("s1", "s2") if (folder / "train.s1").is_file() else ("org", "para")
    for part, sentences in zip(names, (first, second)):
        for line_number, sentence in enumerate(sentences, start=1):
            check_sentence(sentence, folder / f"train.{part}", line_number, "the sentence")
    return ScoredPairs(first, second, scores, str(folder))


def read_scored_pairs(path: str | Path, data_format: str = "stsb", split: str | None = None) -> ScoredPairs:
    r"""The scored sentence pairs of `path` in `data_format`: 'stsb' (STS benchmark), 'sick' or 'hf' (a `datasets`
    source); a USEB training folder (`read_useb_training_pairs`) whatever the format, since it holds training pairs
    only. A dev or test split's scores must rank (`check_rankable`). A malformed file is an `InputError` naming its
    line.

    Examples:
        >>> from pathlib import Path
        >>> _ = Path("sts-dev.csv").write_text(
        ...     "main\tforum\t2012\t0001\t4.2\tA man plays a guitar.\tA man is playing a guitar.\n"
        ...     "main\tforum\t2012\t0002\t0.4\tA dog runs.\tIt is raining.\n")
        >>> pairs = sentsweep.read_scored_pairs("sts-dev.csv", "stsb", "dev")
        >>> len(pairs), pairs.scores, pairs.sentences2[1]
        (2, [4.2, 0.4], 'It is raining.')
    """
    if is_useb_training_folder(path):
        return read_useb_training_pairs(path)
    if data_format == "stsb":
        pairs = read_sts_benchmark_file(path)
    elif data_format == "sick":
        pairs = read_sick_file(path, split)
    elif data_format == "hf":
        pairs = load_hf_scored_pairs(str(path), split or "test")
    else:
        raise InputError(f"unknown data format {data_format!r}; expected one of stsb, sick, hf")
    return check_rankable(pairs) if split in EVALUATION_SPLITS else pairs
