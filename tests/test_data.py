"""Readers of the corpus, STS benchmark and SICK formats, and their errors on malformed files."""

import pytest

from sentsweep.data import (
    read_corpus,
    read_sick_file,
    read_sts_benchmark_file,
    sick_splits,
    sts_benchmark_files,
)
from sentsweep.demo_data import DEMO_DIR, generate
from sentsweep.errors import InputError


def test_sts_benchmark_row_takes_score_from_column_5_and_sentences_from_6_and_7(tmp_path):
    path = tmp_path / "sts.csv"
    # The public file has extra trailing columns on some rows, and quotes that are not CSV quoting.
    path.write_text(
        'main-captions\tMSRvid\t2012test\t0024\t2.500\tA girl is "styling" her hair.\tA girl is brushing her hair.\n'
        "main-news\theadlines\t2013\t0001\t0.8\tOne.\tTwo.\tsource-a\tsource-b\n",
        encoding="utf-8",
    )
    pairs = read_sts_benchmark_file(path)
    assert pairs.scores == [2.5, 0.8]
    assert pairs.sentences1 == ['A girl is "styling" her hair.', "One."]
    assert pairs.sentences2 == ["A girl is brushing her hair.", "Two."]


SICK_FULL_HEADER = ("pair_ID\tsentence_A\tsentence_B\tentailment_label\trelatedness_score\tentailment_AB\t"
                    "entailment_BA\tsentence_A_original\tsentence_B_original\tsentence_A_dataset\t"
                    "sentence_B_dataset\tSemEval_set\n")
SEMEVAL_HEADER = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"


def test_sick_full_release_reads_its_12_columns_by_header_and_selects_split(tmp_path):
    path = tmp_path / "SICK.txt"
    path.write_text(
        SICK_FULL_HEADER
        + "1\tA dog runs.\tA dog is running.\tENTAILMENT\t4.9\tA_entails_B\tB_entails_A\tA dog runs!\t"
          "A dog runs.\tFLICKR\tFLICKR\tTRAIN\n"
          "2\tA man sings.\tA cat sleeps.\tNEUTRAL\t1.2\tA_neutral_B\tB_neutral_A\tA man sings.\t"
          "A cat sleeps.\tSEMEVAL\tSEMEVAL\tTEST\n"
          "3\tKids play.\tChildren play.\tENTAILMENT\t4.5\tA_entails_B\tB_entails_A\tKids play.\t"
          "Children play.\tFLICKR\tFLICKR\tTRIAL\n",
        encoding="utf-8",
    )
    assert read_sick_file(path).scores == [4.9, 1.2, 4.5]
    test = read_sick_file(path, "test")
    assert (test.sentences1, test.sentences2, test.scores) == (["A man sings."], ["A cat sleeps."], [1.2])
    assert read_sick_file(path, "dev").scores == [4.5]
    assert read_sick_file(path, "train").sentences2 == ["A dog is running."]
    assert sick_splits(path) == ("train", "dev", "test")
    with pytest.raises(InputError, match=r"unknown SICK split 'validation'; expected one of \['dev', 'test', "):
        read_sick_file(path, "validation")


def write_semeval_folder(folder):
    """SemEval 2014 task 1's three files, as SentEval's data/downstream/SICK holds them."""
    folder.mkdir()
    (folder / "SICK_train.txt").write_text(SEMEVAL_HEADER + "1\tA dog runs.\tA dog is running.\t4.9\tENTAILMENT\n"
                                           "4\tA boy eats.\tA boy is eating.\t4.7\tENTAILMENT\n", encoding="utf-8")
    (folder / "SICK_trial.txt").write_text(SEMEVAL_HEADER + "3\tKids play.\tChildren play.\t4.5\tENTAILMENT\n",
                                           encoding="utf-8")
    (folder / "SICK_test_annotated.txt").write_text(SEMEVAL_HEADER + "2\tA man sings.\tA cat sleeps.\t1.2\tNEUTRAL\n",
                                                    encoding="utf-8")
    return folder


def test_sick_semeval_files_are_each_their_split_and_a_folder_of_them_is_the_release(tmp_path):
    folder = write_semeval_folder(tmp_path / "SICK")
    test = read_sick_file(folder / "SICK_test_annotated.txt", "test")
    assert (test.sentences1, test.sentences2, test.scores) == (["A man sings."], ["A cat sleeps."], [1.2])
    assert read_sick_file(folder / "SICK_train.txt", "train").scores == [4.9, 4.7]
    assert read_sick_file(folder / "SICK_trial.txt").scores == [4.5]
    with pytest.raises(InputError, match=r"SICK_trial.txt is SemEval 2014's 'dev' file; it holds no 'test' pairs "
                                         r"\(those are in SICK_test_annotated.txt\)"):
        read_sick_file(folder / "SICK_trial.txt", "test")
    # the folder: each split from its file, and every pair in train, dev, test order without a split
    assert read_sick_file(folder, "dev").scores == [4.5]
    assert read_sick_file(folder, "test").sentences1 == ["A man sings."]
    assert read_sick_file(folder).scores == [4.9, 4.7, 4.5, 1.2]
    assert sick_splits(folder) == ("train", "dev", "test")
    (folder / "SICK_trial.txt").unlink()
    assert sick_splits(folder) == ("train", "test")
    with pytest.raises(InputError, match=r"SICK folder .*SICK lacks SICK_trial.txt, its 'dev' split"):
        read_sick_file(folder, "dev")


def test_sick_file_without_split_column_is_refused_where_a_split_is_needed(tmp_path):
    path = tmp_path / "relatedness.txt"
    path.write_text(SEMEVAL_HEADER + "1\ta\tb\t3.2\tNEUTRAL\n", encoding="utf-8")
    assert read_sick_file(path).scores == [3.2]  # no split asked: every pair
    assert sick_splits(path) == ()
    with pytest.raises(InputError, match=r"relatedness.txt, line 1: no SemEval_set column, so split 'test' cannot "
                                         r"be selected"):
        read_sick_file(path, "test")
    unannotated = tmp_path / "SICK_test.txt"
    unannotated.write_text("pair_ID\tsentence_A\tsentence_B\n1\ta\tb\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"lacks column\(s\) relatedness_score \(SemEval 2014's unannotated test "
                                         r"file; the scores are in SICK_test_annotated.txt\)"):
        read_sick_file(unannotated, "test")
    with pytest.raises(InputError, match=r"SICK folder .* holds neither SICK.txt nor any of SemEval 2014's"):
        read_sick_file(tmp_path, "test")


@pytest.mark.parametrize(
    "content, expected",
    [
        ("g\tf\ty\t1\t3.0\tonly one sentence\n", "line 1: expected at least 7 tab-separated columns"),
        ("g\tf\ty\t1\t3.0\ta\tb\ng\tf\ty\t2\thigh\ta\tb\n", "line 2: score 'high' is not a number"),
        ("", "empty file"),
        ("g\tf\ty\t1\t3.0\ta\tb\ng\tf\ty\t2\tnan\ta\tb\n", "line 2: score 'nan' is not a finite number"),
        ("g\tf\ty\t1\t-inf\ta\tb\n", "line 1: score '-inf' is not a finite number"),
        ("g\tf\ty\t1\t3.0\ta\tb\ng\tf\ty\t2\t1.0\t  \tb\n", "line 2: sentence 1 \\(column 6\\) is empty"),
        ("g\tf\ty\t1\t3.0\ta\t\n", "line 1: sentence 2 \\(column 7\\) is empty"),
    ],
)
def test_malformed_sts_file_names_file_line_and_problem(tmp_path, content, expected):
    path = tmp_path / "bad.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=expected) as error:
        read_sts_benchmark_file(path)
    assert str(path) in str(error.value)


def test_wrong_encoding_names_the_line(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("g\tf\ty\t1\t3.0\ta\tb\ng\tf\ty\t2\t1.0\tcaf\u00e9\tb\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"latin1.csv, line 2: not valid UTF-8"):
        read_sts_benchmark_file(path)


def test_sick_nan_score_and_empty_sentence_name_file_and_line(tmp_path):
    path = tmp_path / "SICK_train.txt"
    header = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"
    path.write_text(header + "1\ta\tb\t4.5\tNEUTRAL\n2\ta\tb\tNaN\tNEUTRAL\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"SICK_train.txt, line 3: score 'NaN' is not a finite number"):
        read_sick_file(path, "train")
    path.write_text(header + "1\ta\tb\t4.5\tNEUTRAL\n2\t\tb\t1.0\tNEUTRAL\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"SICK_train.txt, line 3: sentence_A is empty"):
        read_sick_file(path, "train")


def test_useb_training_pairs_with_an_empty_line_name_the_file_and_line(tmp_path):
    from sentsweep.data import read_useb_training_pairs

    (tmp_path / "train.org").write_text("how do I mount a disk\n\n", encoding="utf-8")
    (tmp_path / "train.para").write_text("mounting a drive\nupgrading ubuntu\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"train.org, line 2: the sentence is empty"):
        read_useb_training_pairs(tmp_path)
    (tmp_path / "train.s1").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "train.s2").write_text("c\nd\n", encoding="utf-8")
    (tmp_path / "train.lbl").write_text("1\ninf\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"train.lbl, line 2: score 'inf' is not a finite number"):
        read_useb_training_pairs(tmp_path)


def test_sick_without_required_column_is_named(tmp_path):
    path = tmp_path / "SICK.txt"
    path.write_text("pair_ID\tsentence_A\tsentence_B\n1\ta\tb\n", encoding="utf-8")
    with pytest.raises(InputError, match="lacks column\\(s\\) relatedness_score"):
        read_sick_file(path)


def test_empty_corpus_and_missing_files_are_errors(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n", encoding="utf-8")
    with pytest.raises(InputError, match="empty corpus: .*empty.txt"):
        read_corpus(empty)
    with pytest.raises(InputError, match="data file not found: .*nope.txt"):
        read_corpus(tmp_path / "nope.txt")
    with pytest.raises(InputError, match="lacks its dev file sts-dev.csv"):
        sts_benchmark_files(tmp_path)


def test_shipped_demo_data_is_what_the_generator_writes():
    for name, text in generate().items():
        assert (DEMO_DIR / name).read_text(encoding="utf-8") == text
    assert len(read_corpus(DEMO_DIR / "corpus.txt")) == 400
    assert len(read_sts_benchmark_file(DEMO_DIR / "sts-test.csv")) == 150


def test_datasets_source_from_a_local_saved_dataset(tmp_path):
    import datasets

    from sentsweep.data import load_hf_scored_pairs

    rows = {"sentence1": ["A dog runs.", "A man sings."], "sentence2": ["A dog is running.", "A cat sleeps."],
            "score": [0.96, 0.1]}
    datasets.DatasetDict({"test": datasets.Dataset.from_dict(rows)}).save_to_disk(tmp_path / "sts")
    pairs = load_hf_scored_pairs(str(tmp_path / "sts"), "test")
    assert (pairs.sentences1, pairs.sentences2, pairs.scores) == (rows["sentence1"], rows["sentence2"], rows["score"])
    datasets.Dataset.from_dict({"text": ["x"]}).save_to_disk(tmp_path / "wrong")
    with pytest.raises(InputError, match="lacks column\\(s\\) sentence1, sentence2"):
        load_hf_scored_pairs(str(tmp_path / "wrong"), "test")
    for column, value, message in (("score", float("nan"), "row 1: score nan is not a finite number"),
                                   ("sentence2", "", "row 1: sentence2 is empty")):
        bad = rows | {column: rows[column][:1] + [value]}
        datasets.DatasetDict({"test": datasets.Dataset.from_dict(bad)}).save_to_disk(tmp_path / column)
        with pytest.raises(InputError, match=f"dataset .*{column}\\[test\\], {message}"):
            load_hf_scored_pairs(str(tmp_path / column), "test")


def test_nli_file_is_read_by_its_header_gzipped_or_not_keeping_the_splits_entailments_and_contradictions(tmp_path):
    """AllNLI.tsv.gz's columns (split, dataset, filename, sentence1, sentence2, label), found by the header."""
    import gzip

    from sentsweep.data import read_nli_file

    text = ("split\tdataset\tfilename\tsentence1\tsentence2\tlabel\n"
            "train\tSNLI\ts.jsonl\tA man runs.\tA man moves.\tentailment\n"
            "train\tSNLI\ts.jsonl\tA man runs.\tA man runs fast.\tneutral\n"
            "train\tSNLI\ts.jsonl\tA man runs.\tA man sleeps.\tcontradiction\n"
            "train\tMultiNLI\tm.jsonl\tA cat eats.\tAn animal eats.\tentailment\n"
            "dev\tSNLI\ts.jsonl\tA man runs.\tA person runs.\tentailment\n")
    plain, packed = tmp_path / "AllNLI.tsv", tmp_path / "AllNLI.tsv.gz"
    plain.write_text(text, encoding="utf-8")
    packed.write_bytes(gzip.compress(text.encode("utf-8")))
    for path in (plain, packed):
        premises = read_nli_file(path)
        assert premises.entailments == {"A man runs.": ["A man moves."], "A cat eats.": ["An animal eats."]}
        assert premises.contradictions == {"A man runs.": ["A man sleeps."]}
    with pytest.raises(InputError, match="no premise of split 'dev' has both an entailment and a contradiction"):
        read_nli_file(plain, "dev")  # its one entailment has no contradiction to be the hard negative
