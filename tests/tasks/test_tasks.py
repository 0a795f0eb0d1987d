"""Evaluation tasks on small files written in each public release's format: metrics computed by hand (or by
scikit-learn / scipy), the paper's averaging and splits, and malformed files named with file and line."""

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import average_precision_score

from sentsweep.errors import InputError
from sentsweep.scorers import EmbeddingScorer, TfidfScorer
from sentsweep.tasks import build_task, build_tasks, evaluate_tasks, parse_task_specs
from sentsweep.tasks.distractors import sentence_spans
from sentsweep.tasks.sts import SENTEVAL_STS_SUBSETS


class TableScorer:
    """Similarities looked up in a table {(text1, text2): score}; pairs not in it score 0."""

    def __init__(self, table: dict) -> None:
        self.table = table

    def pair_similarities(self, texts1, texts2):
        return np.array([self.table.get((a, b), 0.0) for a, b in zip(texts1, texts2)])

    def candidate_similarities(self, queries, candidate_lists):
        return [np.array([self.table.get((q, c), 0.0) for c in candidates])
                for q, candidates in zip(queries, candidate_lists)]

    def top_k(self, queries, documents, k):
        full = np.array([[self.table.get((q, d), 0.0) for d in documents] for q in queries])
        indices = np.argsort(-full, axis=1, kind="stable")[:, :k]
        return np.take_along_axis(full, indices, axis=1), indices


def write(path, text, encoding="utf-8"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding))
    return path


# --- AskUbuntu ---------------------------------------------------------------------------------------------

def askubuntu_folder(tmp_path):
    folder = tmp_path / "askubuntu"
    titles = {"q1": "query one", "q2": "query two", "a": "alpha", "b": "beta", "c": "gamma", "d": "delta"}
    write(folder / "text_tokenized.txt", "".join(f"{k}\t{v}\tbody of {k}\n" for k, v in titles.items()))
    # q1: gold b and c; BM25 order a, b, c. q2: gold d; candidates d, a. q3-like line without gold is skipped.
    write(folder / "dev.txt", "q1\tb c\ta b c\t3 2 1\nq2\td\ta d\t5 4\nq1\t\ta b\t1 1\n")
    write(folder / "test.txt", "q2\td\ta d\t5 4\n")
    return folder


def test_askubuntu_map_by_hand(tmp_path):
    task = build_task("askubuntu", str(askubuntu_folder(tmp_path)))
    # q1 ranks a (0.9), c (0.5), b (0.5: tie with c, BM25 order puts b first) -> b, c after a.
    scorer = TableScorer({("query one", "alpha"): 0.9, ("query one", "beta"): 0.5, ("query one", "gamma"): 0.5,
                          ("query two", "delta"): 0.8, ("query two", "alpha"): 0.1})
    result = task.evaluate(scorer, "dev")
    ap_q1 = (1 / 2 + 2 / 3) / 2  # ranking a, b, c: hits at ranks 2 and 3
    assert result.metrics["askubuntu_map"] == pytest.approx(100 * (ap_q1 + 1.0) / 2)
    assert result.metrics["askubuntu_p_at_1"] == pytest.approx(100 * (0 + 1) / 2)
    assert result.metrics["askubuntu_mrr"] == pytest.approx(100 * (1 / 2 + 1) / 2)
    assert result.per_query["askubuntu_ap"] == pytest.approx([ap_q1, 1.0])
    assert task.evaluate(scorer, "test").metrics["askubuntu_map"] == pytest.approx(100.0)


# --- CQADupStack ---------------------------------------------------------------------------------------------

def test_cqadupstack_map_at_100_and_ndcg_per_forum_then_averaged(tmp_path):
    folder = tmp_path / "cqadupstack"
    corpus = {"tex": {"1": "t query", "2": "t dup", "3": "t other", "4": "t far"},
              "unix": {"5": "u query", "6": "u dup", "7": "u other"}}
    split = {"valid": {"tex": {"1": ["2"]}, "unix": {"5": ["6"]}},
             "test": {"tex": {"1": ["2", "4"]}, "unix": {"5": ["6"]}}}
    write(folder / "corpus.json", json.dumps(corpus))
    write(folder / "retrieval_split.json", json.dumps(split))
    task = build_task("cqadupstack", str(folder))
    scorer = TableScorer({("t query", "t other"): 0.9, ("t query", "t dup"): 0.8, ("t query", "t far"): 0.1,
                          ("u query", "u dup"): 0.7, ("u query", "u other"): 0.2})
    result = task.evaluate(scorer, "test")
    # tex ranks 3, 2, 4 (the query itself is not in the pool): hits at 2 and 3
    tex_ap = (1 / 2 + 2 / 3) / 2
    tex_ndcg = (1 / np.log2(3) + 1 / np.log2(4)) / (1 + 1 / np.log2(3))
    assert result.metrics["cqadupstack_tex_map_at_100"] == pytest.approx(100 * tex_ap)
    assert result.metrics["cqadupstack_tex_ndcg_at_10"] == pytest.approx(100 * tex_ndcg)
    assert result.metrics["cqadupstack_map_at_100"] == pytest.approx(100 * (tex_ap + 1) / 2)
    assert result.metrics["cqadupstack_ndcg_at_10"] == pytest.approx(100 * (tex_ndcg + 1) / 2)
    assert task.evaluate(scorer, "dev").metrics["cqadupstack_tex_map_at_100"] == pytest.approx(100 / 2)


# --- TwitterPara ---------------------------------------------------------------------------------------------

def test_twitterpara_ap_leaves_out_label_3_and_matches_scikit_learn(tmp_path):
    rng = np.random.default_rng(0)
    folder = tmp_path / "twitterpara"
    url = [(f"url a{i}", f"url b{i}", int(rng.integers(0, 7))) for i in range(40)]
    pit = [(f"pit a{i}", f"pit b{i}", int(rng.integers(0, 6))) for i in range(40)]
    write(folder / "Twitter_URL_Corpus_test.txt", "".join(f"{a}\t{b}\t({n}, 6)\turl\n" for a, b, n in url))
    write(folder / "test.data", "".join(f"{i}\ttopic\t{a}\t{b}\t{n}\ttags\ttags\n" for i, (a, b, n) in enumerate(pit)))
    table = {(a, b): float(rng.normal()) for a, b, _ in url + pit}
    result = build_task("twitterpara", str(folder)).evaluate(TableScorer(table), "test")
    expected = {}
    for corpus, rows in (("twitterurl", url), ("pit", pit)):
        kept = [(table[(a, b)], int(n > 3)) for a, b, n in rows if n != 3]
        expected[corpus] = 100 * average_precision_score([y for _, y in kept], [s for s, _ in kept])
        assert result.metrics[f"twitterpara_{corpus}_ap"] == pytest.approx(expected[corpus])
        assert result.metrics[f"twitterpara_{corpus}_spearman"] == pytest.approx(
            100 * spearmanr([table[(a, b)] for a, b, _ in rows], [n for _, _, n in rows]).statistic)
    assert result.metrics["twitterpara_ap"] == pytest.approx((expected["twitterurl"] + expected["pit"]) / 2)
    with pytest.raises(InputError, match="no 'dev' split"):
        build_task("twitterpara", str(folder)).evaluate(TableScorer(table), "dev")


# --- SciDocs -------------------------------------------------------------------------------------------------

def test_scidocs_map_counts_relevant_papers_without_title_as_trec_eval_does(tmp_path):
    corpus = {"q": {"title": "query paper"}, "r1": {"title": "relevant one"}, "r2": {"title": None},
              "n1": {"title": "negative one"}}
    qrels = {"q": {"r1": 1, "r2": 1, "n1": 0}}
    data = {"corpus": corpus, "valid": {s: qrels for s in ("cite", "cocite", "coread", "coview")},
            "test": {"cite": qrels, "cocite": qrels, "coread": qrels, "coview": {"q": {"r1": 1, "n1": 0}}}}
    write(tmp_path / "scidocs" / "data.json", json.dumps(data))
    task = build_task("scidocs", str(tmp_path / "scidocs"))
    scorer = TableScorer({("query paper", "negative one"): 0.9, ("query paper", "relevant one"): 0.1})
    result = task.evaluate(scorer, "test")
    assert result.metrics["scidocs_cite_map"] == pytest.approx(100 * (1 / 2) / 2)  # r1 at rank 2, r2 unrankable
    assert result.metrics["scidocs_coview_map"] == pytest.approx(100 * (1 / 2))
    assert result.metrics["scidocs_map"] == pytest.approx(100 * (0.25 * 3 + 0.5) / 4)


# --- STS12-16 (SentEval) -------------------------------------------------------------------------------------

# The subsets of SentEval's STS1x-en-test folders, as senteval/sts.py and get_transfer_data.bash name them.
SENTEVAL_FOLDERS = {
    "sts12": ("STS12-en-test", ["MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"]),
    "sts13": ("STS13-en-test", ["FNWN", "headlines", "OnWN"]),
    "sts14": ("STS14-en-test", ["deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"]),
    "sts15": ("STS15-en-test", ["answers-forums", "answers-students", "belief", "headlines", "images"]),
    "sts16": ("STS16-en-test", ["answer-answer", "headlines", "plagiarism", "postediting", "question-question"]),
}
WORDS = "a man woman dog cat plays runs guitar piano park street eats food red blue car".split()


def senteval_sts_folder(tmp_path, task, sizes=None, seed=1):
    """A SentEval STS1x-en-test folder with the real file names: {subset: (pairs, gold)} of the kept pairs.

    Sentences are random word strings (so TF-IDF similarities vary); each subset ends with a pair whose gold
    line is blank, which SentEval drops."""
    rng = np.random.default_rng(seed)
    folder_name, subsets = SENTEVAL_FOLDERS[task]
    folder, kept = tmp_path / folder_name, {}
    write(folder / "00-readme.txt", "STS test data\n")
    for index, subset in enumerate(subsets):
        n_pairs = (sizes or {}).get(subset, 6 + 3 * index)
        pairs = [(" ".join(rng.choice(WORDS, 5)) + f" {subset}{i}", " ".join(rng.choice(WORDS, 5)))
                 for i in range(n_pairs)]
        gold = [round(float(rng.uniform(0, 5)), 2) for _ in pairs]
        write(folder / f"STS.input.{subset}.txt", "".join(f"{a}\t{b}\n" for a, b in pairs) + "x\ty\n")
        write(folder / f"STS.gs.{subset}.txt", "".join(f"{g}\n" for g in gold) + "\n")
        kept[subset] = (pairs, gold)
    return folder, kept


def test_sts13_reads_senteval_folder_and_scores_subsets_means_and_pooled_by_hand(tmp_path):
    folder, kept = senteval_sts_folder(tmp_path, "sts13", {"FNWN": 5, "headlines": 8, "OnWN": 12})
    assert sorted(f.name for f in folder.glob("STS.*.txt")) == [
        "STS.gs.FNWN.txt", "STS.gs.OnWN.txt", "STS.gs.headlines.txt",
        "STS.input.FNWN.txt", "STS.input.OnWN.txt", "STS.input.headlines.txt"]
    rng = np.random.default_rng(2)
    # each subset's similarities on its own scale, so ranking them together differs from averaging per subset
    table = {pair: float(rng.normal(shift, 1)) for shift, (pairs, _) in zip((0, 3, -2), kept.values())
             for pair in pairs}
    result = build_task("sts13", str(folder)).evaluate(TableScorer(table), "test")
    expected = {subset: 100 * spearmanr([table[p] for p in pairs], gold).statistic
                for subset, (pairs, gold) in kept.items()}
    sizes = {subset: len(gold) for subset, (_, gold) in kept.items()}
    assert sizes == {"FNWN": 5, "headlines": 8, "OnWN": 12}  # the blank-gold pair of each subset is dropped
    for subset, value in expected.items():
        assert result.metrics[f"sts13_{subset}_spearman"] == pytest.approx(value)
    assert result.metrics["sts13_mean_spearman"] == pytest.approx(np.mean(list(expected.values())))
    wmean = sum(expected[s] * sizes[s] for s in expected) / sum(sizes.values())
    assert result.metrics["sts13_wmean_spearman"] == pytest.approx(wmean)
    # MTEB's definition: one Spearman over all the year's pairs, concatenated
    all_pairs = [p for pairs, _ in kept.values() for p in pairs]
    all_gold = [g for _, gold in kept.values() for g in gold]
    pooled = 100 * spearmanr([table[p] for p in all_pairs], all_gold).statistic
    assert result.metrics["sts13_pooled_spearman"] == pytest.approx(pooled)
    assert abs(pooled - wmean) > 1  # the two aggregations are different numbers
    assert set(result.metrics) == {f"sts13_{s}_spearman" for s in kept} | {
        "sts13_mean_spearman", "sts13_wmean_spearman", "sts13_pooled_spearman"}
    assert build_task("sts13", str(folder)).main_metric_key == "sts13_wmean_spearman"


@pytest.mark.parametrize("task", sorted(SENTEVAL_FOLDERS))
def test_every_year_reads_senteval_real_file_names(tmp_path, task):
    folder, kept = senteval_sts_folder(tmp_path, task)
    table = {pair: float(i) for i, pair in enumerate(p for pairs, _ in kept.values() for p in pairs)}
    metrics = build_task(task, str(folder)).evaluate(TableScorer(table), "test").metrics
    for subset, (pairs, gold) in kept.items():
        assert metrics[f"{task}_{subset}_spearman"] == pytest.approx(
            100 * spearmanr([table[p] for p in pairs], gold).statistic)


def test_senteval_sts_with_a_missing_subset_names_it(tmp_path):
    folder = tmp_path / "STS13-en-test"
    write(folder / "STS.input.FNWN.txt", "a\tb\n")
    write(folder / "STS.gs.FNWN.txt", "1\n")
    write(folder / "STS.input.HDL.txt", "a\tb\n")
    with pytest.raises(InputError, match=r"subset\(s\) headlines, OnWN .*found: STS.input.FNWN.txt, STS.input.HDL.txt"):
        build_task("sts13", str(folder))


@pytest.mark.slow  # a real training run of seconds or more
def test_evaluate_command_scores_sts13_from_senteval_folder(tmp_path):
    """`python -m sentsweep.evaluate --task sts13=<SentEval folder>` prints every STS13 metric, as computed here."""
    folder, _ = senteval_sts_folder(tmp_path, "sts13")
    command = [sys.executable, "-m", "sentsweep.evaluate", "--lexical", "tfidf", "--task", f"sts13={folder}"]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    printed = dict(line.split(": ") for line in completed.stdout.strip().splitlines())
    expected = build_task("sts13", str(folder)).evaluate(TfidfScorer(), "test").metrics
    assert printed == {name: f"{value:.2f}" for name, value in expected.items()}
    assert "sts13_headlines_spearman" in printed and "sts13_pooled_spearman" in printed

    gold_file = folder / "STS.gs.headlines.txt"
    write(gold_file, "high\n" + gold_file.read_text(encoding="utf-8").split("\n", 1)[1])
    completed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 2
    assert f"{gold_file}, line 1: score 'high' is not a number" in completed.stderr


# --- SICK-R -------------------------------------------------------------------------------------------------

SICK_FULL_HEADER = ("pair_ID\tsentence_A\tsentence_B\tentailment_label\trelatedness_score\tentailment_AB\t"
                    "entailment_BA\tsentence_A_original\tsentence_B_original\tsentence_A_dataset\t"
                    "sentence_B_dataset\tSemEval_set\n")
SEMEVAL_HEADER = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"


def sick_rows(seed=3, counts=(("TRAIN", 9), ("TRIAL", 4), ("TEST", 7))):
    """(pair id, sentence A, sentence B, relatedness, SemEval_set) rows of a fake SICK release."""
    rng = np.random.default_rng(seed)
    rows, pair_id = [], 1
    for label, count in counts:
        for _ in range(count):
            rows.append((pair_id, f"a man plays {pair_id}", f"someone plays {pair_id}",
                         round(float(rng.uniform(1, 5)), 1), label))
            pair_id += 1
    return rows


def write_sick_full(path, rows):
    """SICK.txt, the full release: 12 tab-separated columns."""
    return write(path, SICK_FULL_HEADER + "".join(
        f"{i}\t{a}\t{b}\tNEUTRAL\t{score}\tA_neutral_B\tB_neutral_A\t{a}.\t{b}.\tFLICKR\tFLICKR\t{label}\n"
        for i, a, b, score, label in rows))


def write_sick_semeval(folder, rows):
    """SemEval 2014 task 1's files (SentEval's data/downstream/SICK): one file per split, 5 columns."""
    for label, name in (("TRAIN", "SICK_train.txt"), ("TRIAL", "SICK_trial.txt"), ("TEST", "SICK_test_annotated.txt")):
        write(folder / name, SEMEVAL_HEADER + "".join(
            f"{i}\t{a}\t{b}\t{score}\tNEUTRAL\n" for i, a, b, score, split in rows if split == label))
    return folder


@pytest.mark.parametrize("release", ["SICK.txt", "SemEval folder", "folder with SICK.txt"])
def test_sickr_test_split_and_all_pairs_spearman_by_hand(tmp_path, release):
    rows = sick_rows()
    if release == "SICK.txt":
        path = write_sick_full(tmp_path / "SICK.txt", rows)
    elif release == "folder with SICK.txt":
        path = write_sick_full(tmp_path / "SICK" / "SICK.txt", rows).parent
    else:
        path = write_sick_semeval(tmp_path / "SICK", rows)
    rng = np.random.default_rng(4)
    table = {(a, b): float(rng.normal()) for _, a, b, _, _ in rows}
    task = build_task("sickr", str(path))
    assert task.splits == ("train", "dev", "test")
    metrics = task.evaluate(TableScorer(table), "test").metrics
    test_rows = [r for r in rows if r[4] == "TEST"]
    assert metrics["sickr_spearman"] == pytest.approx(
        100 * spearmanr([table[(a, b)] for _, a, b, _, _ in test_rows], [r[3] for r in test_rows]).statistic)
    # MTEB's SICK-R: every pair of the release, ranked together
    assert metrics["sickr_all_spearman"] == pytest.approx(
        100 * spearmanr([table[(a, b)] for _, a, b, _, _ in rows], [r[3] for r in rows]).statistic)
    dev_rows = [r for r in rows if r[4] == "TRIAL"]
    assert task.evaluate(TableScorer(table), "dev").metrics == {"sickr_spearman": pytest.approx(
        100 * spearmanr([table[(a, b)] for _, a, b, _, _ in dev_rows], [r[3] for r in dev_rows]).statistic)}


def test_sickr_from_the_semeval_test_file_alone_has_test_only_and_no_all_pairs_score(tmp_path):
    folder = write_sick_semeval(tmp_path / "SICK", sick_rows())
    task = build_task("sickr", str(folder / "SICK_test_annotated.txt"))
    assert task.splits == ("test",)
    table = {(a, b): float(i) for i, a, b, _, _ in sick_rows()}
    assert set(task.evaluate(TableScorer(table), "test").metrics) == {"sickr_spearman"}
    with pytest.raises(InputError, match="task 'sickr' has no 'dev' split; it has test"):
        task.evaluate(TableScorer(table), "dev")


def test_sickr_refuses_a_file_it_cannot_split_naming_it(tmp_path):
    renamed = write(tmp_path / "sick_relatedness.tsv", SEMEVAL_HEADER + "1\ta\tb\t3.2\tNEUTRAL\n")
    with pytest.raises(InputError, match=r"sickr: .*sick_relatedness.tsv holds no test pairs.*cannot be split"):
        build_task("sickr", str(renamed))
    trial_only = write(tmp_path / "SICK_trial.txt", SEMEVAL_HEADER + "1\ta\tb\t3.2\tNEUTRAL\n")
    with pytest.raises(InputError, match=r"SICK_trial.txt holds no test pairs"):
        build_task("sickr", str(trial_only))


# --- BEIR retrieval (Quora) -----------------------------------------------------------------------------------

def test_beir_retrieval_skips_the_query_itself_and_computes_the_thesis_metrics(tmp_path):
    folder = tmp_path / "quora"
    docs = {"1": "how to cook rice", "2": "cooking rice how", "3": "best rice cooker", "4": "weather today"}
    write(folder / "corpus.jsonl",
          "".join(json.dumps({"_id": k, "title": "", "text": v}) + "\n" for k, v in docs.items()))
    write(folder / "queries.jsonl", json.dumps({"_id": "1", "text": "how to cook rice"}) + "\n")
    write(folder / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\n1\t3\t1\n1\t2\t0\n")
    table = {("how to cook rice", "how to cook rice"): 1.0, ("how to cook rice", "cooking rice how"): 0.9,
             ("how to cook rice", "best rice cooker"): 0.5}
    task = build_task("quora", str(folder))
    assert task.splits == ("test",)
    metrics = task.evaluate(TableScorer(table), "test").metrics
    # ranking without the query's own document: 2, 3, 4; the relevant document 3 is at rank 2
    assert metrics["quora_recall_at_1"] == 0 and metrics["quora_recall_at_3"] == pytest.approx(100)
    assert metrics["quora_precision_at_3"] == pytest.approx(100 / 3)
    assert metrics["quora_mrr_at_10"] == pytest.approx(50)
    assert metrics["quora_ndcg_at_10"] == pytest.approx(100 / np.log2(3))


# --- CQADupStack as BEIR releases it (12 forum folders) -------------------------------------------------------

BEIR_CQADUPSTACK_FORUMS = ["android", "english", "gaming", "gis", "mathematica", "physics", "programmers", "stats",
                           "tex", "unix", "webmasters", "wordpress"]


def beir_cqadupstack_folder(tmp_path):
    """BEIR's cqadupstack/<forum>/{corpus.jsonl, queries.jsonl, qrels/test.tsv}. Queries are corpus questions
    too (same ids). In even-numbered forums the duplicate ranks first, in odd ones second; android has a
    second query whose duplicate ranks third, so the forum average differs from the mean over all queries."""
    folder, table = tmp_path / "cqadupstack", {}
    for index, forum in enumerate(BEIR_CQADUPSTACK_FORUMS):
        docs = {"1": (f"{forum} how do i x", "body one"), "2": (f"{forum} x how", "body two"),
                "3": (f"{forum} unrelated", "body three"), "4": (f"{forum} why y", "body four"),
                "5": (f"{forum} y why", "body five")}
        queries = {"1": docs["1"][0]}
        qrels = [("1", "2")]
        text = {d: f"{title} {body}" for d, (title, body) in docs.items()}
        table[(queries["1"], text["1"])] = 1.0  # the query's own question: not counted as retrieved
        table[(queries["1"], text["2"])] = 0.9 if index % 2 == 0 else 0.4
        table[(queries["1"], text["3"])] = 0.5
        if forum == "android":
            queries["4"] = docs["4"][0]
            qrels.append(("4", "5"))
            table.update({(queries["4"], text["1"]): 0.8, (queries["4"], text["3"]): 0.7,
                          (queries["4"], text["5"]): 0.6})
        write(folder / forum / "corpus.jsonl", "".join(
            json.dumps({"_id": d, "title": title, "text": body}) + "\n" for d, (title, body) in docs.items()))
        write(folder / forum / "queries.jsonl", "".join(
            json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items()))
        write(folder / forum / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\n" + "".join(
            f"{q}\t{d}\t1\n" for q, d in qrels))
    return folder, table


def test_beir_cqadupstack_is_one_task_averaging_the_twelve_forums_by_hand(tmp_path):
    folder, table = beir_cqadupstack_folder(tmp_path)
    task = build_task("beir-cqadupstack", str(folder))
    assert task.splits == ("test",) and task.main_metric_key == "beir-cqadupstack_ndcg_at_10"
    metrics = task.evaluate(TableScorer(table), "test").metrics
    first, second, third = 1.0, 1 / np.log2(3), 1 / np.log2(4)  # nDCG@10 of one relevant doc at rank 1, 2, 3
    per_forum = {forum: (first if i % 2 == 0 else second) for i, forum in enumerate(BEIR_CQADUPSTACK_FORUMS)}
    per_forum["android"] = (first + third) / 2  # its two queries: ranks 1 and 3
    for forum, ndcg in per_forum.items():
        assert metrics[f"beir-cqadupstack_{forum}_ndcg_at_10"] == pytest.approx(100 * ndcg)
    assert metrics["beir-cqadupstack_ndcg_at_10"] == pytest.approx(100 * np.mean(list(per_forum.values())))
    # recall@1 per forum: 1 (even), 0 (odd), android 1/2; averaged over forums, not over the 13 queries
    assert metrics["beir-cqadupstack_android_recall_at_1"] == pytest.approx(50)
    assert metrics["beir-cqadupstack_recall_at_1"] == pytest.approx(100 * (0.5 + 5 * 1 + 6 * 0) / 12)
    assert metrics["beir-cqadupstack_mrr_at_10"] == pytest.approx(100 * ((1 + 1 / 3) / 2 + 5 + 6 / 2) / 12)
    assert metrics["beir-cqadupstack_recall_at_1000"] == pytest.approx(100)
    metric_names = {key.removeprefix("beir-cqadupstack_android_") for key in metrics if "_android_" in key}
    assert len(metric_names) == 14 and {f"beir-cqadupstack_{m}" for m in metric_names} <= set(metrics)
    assert len(metrics) == 13 * 14


def test_beir_cqadupstack_names_missing_forums_and_the_layout_each_name_reads(tmp_path):
    folder, _ = beir_cqadupstack_folder(tmp_path)
    with pytest.raises(InputError, match=r"'cqadupstack' reads USEB's corpus.json .* 'beir-cqadupstack' reads BEIR"):
        build_task("cqadupstack", str(folder))
    with pytest.raises(InputError, match=r"lacks the forum folder\(s\) android, english, .*score it alone as "
                                         r"'beir-gaming'"):
        build_task("beir-cqadupstack", str(folder / "gaming"))
    for forum in ("tex", "wordpress"):
        shutil.rmtree(folder / forum)
    with pytest.raises(InputError, match=r"beir-cqadupstack: .* lacks the forum folder\(s\) tex, wordpress \("):
        build_task("beir-cqadupstack", str(folder))


# --- transfer classification ---------------------------------------------------------------------------------

class WordFeatures:
    """Features: does the sentence contain 'good' / 'bad' (a separable toy problem)."""

    def features(self, texts):
        return np.array([[("good" in t) * 1.0, ("bad" in t) * 1.0] for t in texts])


@pytest.mark.slow  # a real training run of seconds or more
def test_binary_transfer_task_cross_validates_a_separable_problem_to_100(tmp_path):
    folder = tmp_path / "MR"
    write(folder / "rt-polarity.pos", "".join(f"a good film number {i}\n" for i in range(30)), "latin-1")
    write(folder / "rt-polarity.neg", "".join(f"a bad film caf\xe9 {i}\n" for i in range(30)), "latin-1")
    result = build_task("mr", str(folder)).evaluate(WordFeatures(), "test")
    assert result.metrics["mr_accuracy"] == pytest.approx(100.0)
    assert len(result.per_query["mr_accuracy"]) == 60


def test_trec_reads_coarse_labels_and_scores_its_test_file(tmp_path):
    folder = tmp_path / "TREC"
    write(folder / "train_5500.label",
          "".join(f"{'DESC:def' if i % 2 else 'NUM:count'} q {'good' if i % 2 else 'bad'} {i}\n"
                  for i in range(40)))
    write(folder / "TREC_10.label", "DESC:manner how good\nNUM:date when bad\nNUM:date a good one\n")
    result = build_task("trec", str(folder)).evaluate(WordFeatures(), "test")
    assert result.per_query["trec_accuracy"] == [1.0, 1.0, 0.0]
    write(folder / "TREC_10.label", "no label here\n")
    with pytest.raises(InputError, match=r"TREC_10.label, line 1"):
        build_task("trec", str(folder))


# --- sentence retrieval with distractors -----------------------------------------------------------------------

def test_squad_pools_from_the_answer_sentence_with_chance_baseline(tmp_path):
    context = "Warsaw is a city. The Vistula flows through it. It is long."
    squad = {"data": [{"title": "t", "paragraphs": [
        {"context": context, "qas": [
            {"id": "1", "question": "What flows through Warsaw?", "answers": [{"text": "Vistula", "answer_start": 22}]},
            {"id": "2", "question": "What is Warsaw?", "answers": [{"text": "a city", "answer_start": 10}]}]},
        {"context": "One sentence only.",
         "qas": [{"id": "3", "question": "q", "answers": [{"text": "One", "answer_start": 0}]}]},
    ]}]}
    write(tmp_path / "dev-v1.1.json", json.dumps(squad))
    task = build_task("squad", str(tmp_path / "dev-v1.1.json"))
    assert task.pools.candidates[0] == ["Warsaw is a city.", "The Vistula flows through it.", "It is long."]
    assert task.pools.positives == [1, 0]
    table = {("What flows through Warsaw?", "The Vistula flows through it."): 0.9,
             ("What is Warsaw?", "It is long."): 0.7, ("What is Warsaw?", "Warsaw is a city."): 0.3}
    result = task.evaluate(TableScorer(table), "test")
    assert result.metrics["squad_top1"] == pytest.approx(50.0)
    assert result.metrics["squad_chance"] == pytest.approx(100 / 3)
    assert result.metrics["squad_mrr"] == pytest.approx(100 * (1 + 1 / 2) / 2)
    assert result.per_query["squad_top1"] == [1.0, 0.0]


def test_sentence_spans_cover_the_text():
    text = 'He said "Stop." Then 3 men left! Was it Dr. no? Yes.'
    spans = sentence_spans(text)
    assert "".join(text[a:b] for a, b in spans) == text
    assert [text[a:b].strip() for a, b in spans] == ['He said "Stop."', "Then 3 men left!", "Was it Dr. no?", "Yes."]


# --- malformed files, unknown names, specs ----------------------------------------------------------------------

@pytest.mark.parametrize("name, files, message", [
    ("askubuntu", {"text_tokenized.txt": "q1\tt\tb\n", "dev.txt": "q1\tq1\tq1\n", "test.txt": "q1\tq1\tq1\t1\n"},
     r"dev.txt, line 1: expected 4 tab-separated columns"),
    ("askubuntu", {"text_tokenized.txt": "q1\tt\tb\n", "dev.txt": "q1\tq1\tq1\tx\n", "test.txt": "q1\tq1\tq1\t1\n"},
     r"dev.txt, line 1: BM25 scores 'x' are not numbers"),
    ("askubuntu", {"text_tokenized.txt": "q1\tt\tb\n", "dev.txt": "q1\tq9\tq9\t1\n", "test.txt": ""},
     r"dev.txt, line 1: question id 'q9' is not in text_tokenized.txt"),
    ("cqadupstack", {"corpus.json": '{"tex": {"1": "a"}', "retrieval_split.json": "{}"},
     r"corpus.json, line 1: not valid JSON"),
    ("twitterpara", {"Twitter_URL_Corpus_test.txt": "a\tb\t(x, 6)\n", "test.data": "0\tt\ta\tb\t1\n"},
     r"Twitter_URL_Corpus_test.txt, line 1: label '\(x, 6\)'"),
    ("twitterpara", {"Twitter_URL_Corpus_test.txt": "", "test.data": "0\tt\ta\tb\t1\n"},
     r"Twitter_URL_Corpus_test.txt: empty file"),
    ("sts12", {f"STS.input.{s}.txt": "a\tb\n" for s in SENTEVAL_STS_SUBSETS["sts12"]} |
     {f"STS.gs.{s}.txt": "high\n" for s in SENTEVAL_STS_SUBSETS["sts12"]},
     r"STS.gs.MSRpar.txt, line 1: score 'high' is not a number"),
    ("quora", {"corpus.jsonl": '{"_id": "1"}\n', "queries.jsonl": '{"_id": "1", "text": "q"}\n',
               "qrels/test.tsv": "h\n1\t1\t1\n"}, r"corpus.jsonl, line 1: lacks the key\(s\) text"),
])
def test_malformed_task_files_name_file_line_and_problem(tmp_path, name, files, message):
    for file, content in files.items():
        write(tmp_path / name / file, content)
    with pytest.raises(InputError, match=message):
        build_task(name, str(tmp_path / name))


def test_wrong_encoding_in_a_task_file_names_the_line(tmp_path):
    folder = tmp_path / "askubuntu"
    write(folder / "text_tokenized.txt", "q1\tfine\tb\nq2\tcaf\xe9\tb\n", "latin-1")
    write(folder / "dev.txt", "")
    write(folder / "test.txt", "")
    with pytest.raises(InputError, match=r"text_tokenized.txt, line 2: not valid UTF-8"):
        build_task("askubuntu", str(folder))


def test_unknown_task_and_bad_specs_are_named():
    with pytest.raises(InputError, match="unknown evaluation task 'askubunto'"):
        build_task("askubunto", "x")
    with pytest.raises(InputError, match="expected NAME=PATH"):
        parse_task_specs(["askubuntu"])
    assert parse_task_specs(["mr=/d/MR", "beir-quora=/d/q"]) == {"mr": "/d/MR", "beir-quora": "/d/q"}


# --- real scorers through the tasks ------------------------------------------------------------------------------

def test_embedding_scorer_through_a_task_equals_cosines_computed_directly(tiny_model_dir, tmp_path):
    from sentsweep.encoding import encode
    from sentsweep.models import load_sentence_model

    model = load_sentence_model(str(tiny_model_dir), "mean", 32)
    folder = askubuntu_folder(tmp_path)
    result = build_task("askubuntu", str(folder)).evaluate(EmbeddingScorer(model), "dev")
    texts = ["query one", "alpha", "beta", "gamma", "query two", "delta"]
    e = torch_normalize(encode(model, texts))
    q1 = e[1:4] @ e[0]
    q2 = e[[5, 1]] @ e[4]
    expected = [average_precision_score([0, 1, 1], q1), average_precision_score([1, 0], q2)]
    assert result.per_query["askubuntu_ap"] == pytest.approx(expected, abs=1e-6)


def torch_normalize(embeddings):
    import torch

    return torch.nn.functional.normalize(embeddings.double(), dim=-1).numpy()


def test_sts_average_over_sts_tasks(tmp_path):
    from sentsweep.demo_data import DEMO_DIR

    sick = write_sick_full(tmp_path / "SICK.txt", [(i, f"the cat {i}", f"a cat {i % 3}", 1 + i % 4, "TEST")
                                                   for i in range(12)])
    tasks = build_tasks({"stsb": str(DEMO_DIR), "sickr": str(sick)})
    result = evaluate_tasks(tasks, TfidfScorer(), "test")
    assert result.metrics["sts_avg"] == pytest.approx(
        (result.metrics["stsb_spearman"] + result.metrics["sickr_spearman"]) / 2)


# --- Topic classification on prompted sentences (Reiml (2023) Tables 6.14 / 6.16, "Prompted (F1)") ------------

def test_prompted_topics_classify_the_sentences_with_their_prompts(tmp_path):
    """The classifier sees "prompt ¥ sentence"; a feature that only the prompt carries separates the topics."""
    rows = [("comp.graphics", "comp", f"render number {i}") if i % 2 else ("rec.autos", "rec", f"drive number {i}")
            for i in range(40)]
    for split, part in (("train", rows[:30]), ("test", rows[30:])):
        write(tmp_path / f"{split}.tsv", "".join("\t".join(row) + "\n" for row in part))
    seen = []

    class PromptFeature:
        def features(self, texts):
            seen.extend(texts)
            return np.array([[1.0 if text.startswith("comp ¥ ") else 0.0] for text in texts])

    metrics = build_task("topics_prompted", str(tmp_path)).evaluate(PromptFeature(), "test").metrics
    assert "comp ¥ render number 1" in seen and "rec ¥ drive number 0" in seen
    assert metrics["topics_prompted_f1_macro"] == pytest.approx(100.0)
