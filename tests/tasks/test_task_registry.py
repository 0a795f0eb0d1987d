"""The task registry: every task registered once where it is defined, with its main metric, splits and cited
reference; unknown names suggest the closest; the tasks package imports without a package <-> module cycle."""

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import sentsweep.tasks
from sentsweep.errors import InputError
from sentsweep.references import Reference
from sentsweep.scorers import Bm25Scorer, EmbeddingScorer, FeatureScorer, Scorer, TfidfScorer
from sentsweep.tasks import TASKS, Task, build_task, main_metric, task_names
from sentsweep.tasks.base import register
from sentsweep.tasks.transfer import TRANSFER_TASKS
from sentsweep.tasks.useb import AskUbuntuTask

TASKS_FOLDER = Path(sentsweep.tasks.__file__).parent
EXPECTED_NAMES = {"stsb", "sickr", "sts12", "sts13", "sts14", "sts15", "sts16", "askubuntu", "cqadupstack",
                  "twitterpara", "scidocs", "quora", "beir-cqadupstack", "squad", "distractors", *TRANSFER_TASKS,
                  "pos_askubuntu", "pos_cqadupstack", "pos_twitterpara", "pos_scidocs"}


def test_every_task_of_the_seeds_is_registered_and_beir_folders_are_named():
    assert set(TASKS.names()) == EXPECTED_NAMES
    assert "topics" in TASKS
    assert task_names()[-1] == "beir-<dataset>"


def test_registering_a_name_twice_is_refused_naming_both_origins():
    class MyAskUbuntu(AskUbuntuTask):
        pass

    with pytest.raises(ValueError, match=r"evaluation task 'askubuntu' of .*tests/tasks/test_task_registry.py \(module "
                       r"tests.tasks.test_task_registry\) collides with the evaluation task 'askubuntu' of sentsweep "
                       r"\(built-in, sentsweep.tasks.useb\)"):
        register("askubuntu")(MyAskUbuntu)
    assert TASKS.get("askubuntu") is AskUbuntuTask


@pytest.mark.parametrize("typo, closest", [("askubunt", "askubuntu"), ("scidoc", "scidocs"), ("qoura", "quora")])
def test_an_unknown_name_names_itself_and_suggests_the_closest(tmp_path, typo, closest):
    with pytest.raises(InputError, match=rf"unknown evaluation task '{typo}'; did you mean '{closest}'\?") as error:
        build_task(typo, str(tmp_path))
    assert "beir-<dataset>" in str(error.value)
    with pytest.raises(InputError, match=rf"did you mean '{closest}'"):
        main_metric(typo)


def test_a_name_like_none_suggests_nothing(tmp_path):
    with pytest.raises(InputError, match=r"unknown evaluation task 'zzzz' \(known: askubuntu, ") as error:
        build_task("zzzz", str(tmp_path))
    assert "did you mean" not in str(error.value)


@pytest.mark.parametrize("name, metric", [
    ("askubuntu", "askubuntu_map"), ("cqadupstack", "cqadupstack_map_at_100"), ("twitterpara", "twitterpara_ap"),
    ("scidocs", "scidocs_map"), ("quora", "quora_ndcg_at_10"), ("beir-fiqa", "beir-fiqa_ndcg_at_10"),
    ("beir-cqadupstack", "beir-cqadupstack_ndcg_at_10"), ("stsb", "stsb_spearman"), ("sickr", "sickr_spearman"),
    ("sts14", "sts14_wmean_spearman"), ("squad", "squad_top1"),
    ("distractors", "distractors_top1"), ("mr", "mr_accuracy"), ("sst2", "sst2_accuracy"),
    ("topics", "topics_f1_macro"), ("topics_prompted", "topics_prompted_f1_macro"), ("pos_scidocs", "pos_scidocs_NN"),
])
def test_main_metric_is_the_task_name_and_its_class_main_metric(name, metric):
    assert main_metric(name) == metric


def _surname(authors: str) -> str:
    return authors.split(",")[0].removesuffix(" et al.").split()[-1]


@pytest.mark.parametrize("name", sorted(EXPECTED_NAMES))
def test_every_task_class_states_metric_splits_and_a_reference_its_module_cites(name):
    task_class = TASKS.get(name)
    assert issubclass(task_class, Task)
    assert isinstance(task_class.main_metric, str) and task_class.main_metric
    assert task_class.splits and set(task_class.splits) <= {"train", "dev", "test"}
    reference = task_class.reference
    assert isinstance(reference, Reference)
    module_doc = " ".join(sys.modules[task_class.__module__].__doc__.split())
    assert reference.title in module_doc
    assert _surname(reference.authors) in module_doc and str(reference.year) in module_doc
    assert not re.search(r"(?<![\d,.])00\d(?!\d)", module_doc), "cite a seed by authors, title and year, not number"


def test_a_built_task_keys_its_main_metric_with_its_name(tmp_path):
    pools = tmp_path / "pools.jsonl"
    pools.write_text(json.dumps({"query": "q", "candidates": ["a", "b"], "positive": 1}) + "\n", encoding="utf-8")
    task = build_task("distractors", str(pools))
    assert task.main_metric_key == main_metric("distractors") == "distractors_top1"
    assert repr(task) == f"DistractorPoolsTask('distractors', {str(pools)!r})"


def test_the_scorers_implement_the_protocol_that_tasks_call():
    for scorer in (EmbeddingScorer(model=None), TfidfScorer(), Bm25Scorer()):
        assert isinstance(scorer, Scorer)
    assert isinstance(EmbeddingScorer(model=None), FeatureScorer) and isinstance(TfidfScorer(), FeatureScorer)
    assert not isinstance(Bm25Scorer(), FeatureScorer)


def _imports(tree: ast.AST) -> list[str]:
    return [node.module if isinstance(node, ast.ImportFrom) else alias.name
            for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names]


def test_task_modules_never_import_the_package_and_the_package_imports_them_at_top():
    for module in sorted(TASKS_FOLDER.glob("*.py")):
        if module.name != "__init__.py":
            assert "sentsweep.tasks" not in _imports(ast.parse(module.read_text(encoding="utf-8"))), module.name
    package = ast.parse((TASKS_FOLDER / "__init__.py").read_text(encoding="utf-8"))
    functions = [node for node in ast.walk(package) if isinstance(node, ast.FunctionDef)]
    assert not [name for function in functions for name in _imports(function)]


@pytest.mark.parametrize("module", ["sentsweep.tasks.sts", "sentsweep.tasks.base"])
def test_a_task_module_imports_first_in_a_fresh_interpreter(module):
    code = f"import {module}; import sentsweep.tasks; print(sentsweep.tasks.main_metric('askubuntu'))"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "askubuntu_map"
