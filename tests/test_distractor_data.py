"""The STS-B distractor pools of Malmberg (2021) (§3.2.1, §3.4.4): every replacement is the masked LM's
rank-th word token, recomputed here from the LM's logits one sentence at a time; chains, buckets and files are
checked against the input pairs, and the `distractors` task reads the files."""

import json
import re

import pytest
import torch
from transformers import AutoModelForMaskedLM, AutoTokenizer

from sentsweep.cli import main as cli
from sentsweep.demo_data import DEMO_DIR
from sentsweep.distractor_data import DistractorSettings, build_distractors
from sentsweep.errors import InputError
from sentsweep.scorers import TfidfScorer
from sentsweep.tasks import build_task

RANK, NEGATIVES, CHANGES = 7, 3, 3
EXTRA = ["demo\tmade\t2026\t9000\t3.00\tA woman is slicing an onion, slowly.\tA man cuts an onion (slowly).",
         "demo\tmade\t2026\t9001\t4.00\tYes.\tNo way."]  # score exactly 3: in both buckets; too few words: left out


@pytest.fixture(scope="module")
def sts_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sts")
    dev = (DEMO_DIR / "sts-dev.csv").read_text(encoding="utf-8").splitlines()[:8] + EXTRA
    (folder / "sts-dev.csv").write_text("\n".join(dev) + "\n", encoding="utf-8")
    test = (DEMO_DIR / "sts-test.csv").read_text(encoding="utf-8").splitlines()[:4]
    (folder / "sts-test.csv").write_text("\n".join(test) + "\n", encoding="utf-8")
    return folder


def settings(model_dir, **changes) -> DistractorSettings:
    return DistractorSettings.from_config({"model": str(model_dir), "rank": RANK, "negatives": NEGATIVES,
                                          "max_tokens_changed": CHANGES, "seed": 0} | changes)


@pytest.fixture(scope="module")
def built(tiny_model_dir, sts_dir, tmp_path_factory):
    output = tmp_path_factory.mktemp("pools")
    manifest = build_distractors(settings(tiny_model_dir), sts_dir, output, batch_size=4)
    return output, manifest


def read_records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def sts_rows(sts_dir, split="dev") -> list[list[str]]:
    return [line.split("\t") for line in (sts_dir / f"sts-{split}.csv").read_text(encoding="utf-8").splitlines()]


class RankedByHand:
    """The masked LM's rank-th word token at the mask of one sentence, from its logits, written out."""

    def __init__(self, model_dir) -> None:
        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
        self.model = AutoModelForMaskedLM.from_pretrained(str(model_dir)).eval()
        self.vocabulary = self.tokenizer.convert_ids_to_tokens(list(range(len(self.tokenizer))))
        special = set(self.tokenizer.all_special_ids)
        self.words = [i for i, token in enumerate(self.vocabulary)
                      if i not in special and not token.startswith("##") and re.fullmatch(r"\w+", token)]

    def __call__(self, masked_text: str, original: str, rank: int) -> str:
        encoded = self.tokenizer(masked_text, return_tensors="pt")
        (position,) = (encoded["input_ids"][0] == self.tokenizer.mask_token_id).nonzero()[0].tolist()
        with torch.no_grad():
            logits = self.model(**encoded).logits[0, position].tolist()
        allowed = [i for i in self.words if self.vocabulary[i].lower() != original.lower()]
        return self.vocabulary[sorted(allowed, key=lambda i: (-logits[i], i))[rank - 1]]


def word_spans(text: str) -> list[tuple[int, int]]:
    return [match.span() for match in re.finditer(r"\w+", text)]


def test_every_replacement_is_the_lms_rank_th_word_and_chains_grow_by_one_word(built, tiny_model_dir, sts_dir):
    output, _ = built
    by_hand = RankedByHand(tiny_model_dir)
    rows = sts_rows(sts_dir)
    deepest = read_records(output / "dev" / f"all_{CHANGES}.jsonl")
    shallower = {k: read_records(output / "dev" / f"all_{k}.jsonl") for k in range(1, CHANGES)}
    assert len(deepest) == 9  # the 10 dev pairs but the one of too few words
    for number, record in enumerate(deepest):
        row = rows[record["line"] - 1]
        perturbed, query = (row[5], row[6]) if record["perturbed"] == "sentence1" else (row[6], row[5])
        assert record["query"] == query and record["score"] == float(row[4])
        assert len(record["candidates"]) == NEGATIVES + 1
        assert record["candidates"][record["positive"]] == perturbed
        assert record["changed_words"][record["positive"]] == []
        negatives = [i for i in range(NEGATIVES + 1) if i != record["positive"]]
        assert len({record["changed_words"][i][0][0] for i in negatives}) == NEGATIVES  # chains start apart
        for i in negatives:
            changes = record["changed_words"][i]
            assert len(changes) == CHANGES and len({word for word, _, _ in changes}) == CHANGES
            text = perturbed
            for step, (word, original, replacement) in enumerate(changes, start=1):
                start, end = word_spans(text)[word]
                assert text[start:end] == original
                assert replacement == by_hand(text[:start] + "[MASK]" + text[end:], original, RANK)
                text = text[:start] + replacement + text[end:]
                if step < CHANGES:  # the file of `step` changes holds the chain's sentence after `step` changes
                    assert shallower[step][number]["candidates"][i] == text
                    assert shallower[step][number]["changed_words"][i] == changes[:step]
            assert record["candidates"][i] == text


def test_buckets_split_the_pairs_at_the_threshold_and_the_task_reads_every_file(built, sts_dir):
    output, manifest = built
    for split in ("dev", "test"):
        rows = [row for row in sts_rows(sts_dir, split) if row[5] != "Yes."]
        for bucket, keeps in (("all", lambda s: True), ("ge3", lambda s: s >= 3), ("le3", lambda s: s <= 3)):
            expected = [number for number, row in enumerate(sts_rows(sts_dir, split), start=1)
                        if row in rows and keeps(float(row[4]))]
            for changed in range(1, CHANGES + 1):
                path = output / split / f"{bucket}_{changed}.jsonl"
                assert [record["line"] for record in read_records(path)] == expected, path
                if not expected:
                    continue
                task = build_task("distractors", str(path))
                metrics = task.evaluate(TfidfScorer(), "test").metrics
                assert metrics["distractors_chance"] == pytest.approx(100 / (NEGATIVES + 1))
    assert 9 in [number for number, row in enumerate(sts_rows(sts_dir), start=1) if float(row[4]) == 3.0]
    assert manifest["splits"]["dev"]["left_out_too_few_words"] == [10]
    assert manifest["settings"]["rank"] == RANK
    assert json.loads((output / "manifest.json").read_text()) == manifest


def test_the_seed_decides_every_choice(built, tiny_model_dir, sts_dir, tmp_path):
    output, _ = built
    build_distractors(settings(tiny_model_dir), sts_dir, tmp_path / "same", splits=("dev",), batch_size=3)
    build_distractors(settings(tiny_model_dir, seed=1), sts_dir, tmp_path / "other", splits=("dev",))
    name = f"all_{CHANGES}.jsonl"
    assert (tmp_path / "same" / "dev" / name).read_text() == (output / "dev" / name).read_text()
    assert (tmp_path / "other" / "dev" / name).read_text() != (output / "dev" / name).read_text()


def test_the_command_writes_the_files(tiny_model_dir, sts_dir, tmp_path, capsys):
    code = cli(["build-distractors", "--model", str(tiny_model_dir), "--sts-dir", str(sts_dir), "--output-dir",
                str(tmp_path), "--splits", "test", "--rank", "3", "--negatives", "2", "--max-tokens-changed", "2",
                "--perturb", "second"])
    assert code == 0, capsys.readouterr().err
    assert sorted(path.name for path in (tmp_path / "test").iterdir()) == sorted(
        f"{bucket}_{k}.jsonl" for bucket in ("all", "ge3", "le3") for k in (1, 2))
    records = read_records(tmp_path / "test" / "all_2.jsonl")
    assert [record["perturbed"] for record in records] == ["sentence2"] * 4
    assert "test: 4 pools of 4 pairs" in capsys.readouterr().out


@pytest.mark.parametrize("arguments, message", [
    (["--rank", "0"], "setting rank=0 is out of range: must be >= 1"),
    (["--perturb", "middle"], "setting perturb='middle': expected one of 'random', 'first', 'second'"),
    (["--rank", "100000"], "rank=100000 is more than the"),
    (["--splits", "validation"], "unknown STS benchmark split 'validation'"),
    (["--model", "/no/such/model"], "model path '/no/such/model' does not exist"),
])
def test_bad_input_fails_naming_the_value(tiny_model_dir, sts_dir, tmp_path, capsys, arguments, message):
    base = ["build-distractors", "--model", str(tiny_model_dir), "--sts-dir", str(sts_dir),
            "--output-dir", str(tmp_path / "out")]
    assert cli(base + arguments) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # nothing written


def test_a_missing_sts_file_fails_before_the_model_loads(tmp_path):
    (tmp_path / "sts-dev.csv").write_text("demo\tx\t1\t1\t2.0\tA b c d e.\tF g h i j.\n", encoding="utf-8")
    with pytest.raises(InputError, match="data file not found: .*sts-test.csv"):
        build_distractors(DistractorSettings.from_config({"model": "/no/such/model"}), tmp_path, tmp_path / "out")
