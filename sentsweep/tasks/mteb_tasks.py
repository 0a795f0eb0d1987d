"""MTEB's tasks as evaluation tasks of any sweep: `--eval-task mteb:STSBenchmark=FOLDER`, scored by MTEB's own
evaluator (`mteb.evaluate`) on the trial's selected checkpoint, with the data read offline.

Muennighoff, Tazi, Magne and Reimers (2023), "MTEB: Massive Text Embedding Benchmark" (EACL 2023); the `mteb`
package (the `mteb` extra), imported only where an MTEB task is asked for. `mteb:<TaskName>` is any task of
`mteb.get_task`, `mteb:<Benchmark>` every task of `mteb.get_benchmark`'s benchmark. The data each reads, its splits,
its metrics (`mteb_<Task>_main_score` and every other score, x 100), the per-item outcomes for paired tests and what
a run records: docs/evaluation.md, "MTEB tasks, offline". `published_main_scores` reads a model's published results
from a local copy of MTEB's results repository.

    python sweeps/tsdae_deletion.py --eval-task mteb:STSBenchmark=/shared/mteb/STSBenchmark \\
        --select-on mteb:STSBenchmark
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import tempfile
import warnings
from contextlib import contextmanager
from difflib import get_close_matches
from pathlib import Path

import numpy as np
from scipy.stats import rankdata

from sentsweep.errors import InputError
from sentsweep.models import load_sentence_model
from sentsweep.references import MTEB
from sentsweep.scorers import EmbeddingScorer, Scorer
from sentsweep.tasks.base import Task, TaskResult
from sentsweep.tasks.common import check_split
from sentsweep.tasks.mteb_data import TaskData, resolve_task_data

MTEB_PREFIX = "mteb:"
METRIC_PREFIX = "mteb_"
ITEMS_SUFFIX = "_items"  # mteb_<Task>_main_score_items: the main score's per-item outcomes
DEV_SPLITS = ("validation", "dev")
# the project's evaluation batch size (sentsweep.scorers.EmbeddingScorer), without MTEB's progress bars
ENCODE_KWARGS = {"batch_size": 64, "show_progress_bar": False}
RESULTS_ARTIFACT = "mteb/results"  # a downloaded `mteb` artifact folder is an MTEB result cache
PROVENANCE_ARTIFACT = "mteb/data"  # <Task>.json: the data a run's MTEB scores come from (`MtebTask.provenance`)
PUBLISHED_TOLERANCE = 0.01  # points (x 100): the project's choice; an evaluation is deterministic up to float noise
# MTEB's retrieval metric names -> pytrec_eval's per-query measures (mteb._evaluators.retrieval_metrics)
PER_QUERY_MEASURES = {"ndcg_at_": "ndcg_cut_", "map_at_": "map_cut_", "recall_at_": "recall_",
                      "precision_at_": "P_", "hit_rate_at_": "success_"}


def is_mteb_name(name: str) -> bool:
    return name.startswith(MTEB_PREFIX)


# `import mteb` creates its result cache folder (MTEB_CACHE, else ~/.cache/mteb), which sentsweep never uses
# (`mteb.evaluate(cache=None)`): wherever this process imports mteb, the folder is a temporary one unless set.
os.environ.setdefault("MTEB_CACHE", str(Path(tempfile.gettempdir()) / f"sentsweep-mteb-cache-{os.getuid()}"))


def import_mteb():
    """The `mteb` module (its result cache folder: see MTEB_CACHE above); an `InputError` when the `mteb` extra is
    not installed."""
    try:
        import mteb
    except ImportError:
        raise InputError("MTEB tasks need the mteb extra: pip install 'sentsweep[mteb]' (with -c constraints.txt)") \
            from None
    return mteb


def metric_prefix(task_name: str) -> str:
    """The prefix of an MTEB task's metrics: 'mteb_STSBenchmark' (characters MLflow refuses in a name become _)."""
    return METRIC_PREFIX + re.sub(r"[^\w.\-/ ]", "_", task_name)


def main_metric_of(name: str) -> str:
    """The main metric of the task named `name` ('mteb:STSBenchmark' -> 'mteb_STSBenchmark_main_score')."""
    return f"{metric_prefix(name.removeprefix(MTEB_PREFIX))}_{MtebTask.main_metric}"


def mteb_task(task_name: str, label: str):
    """MTEB's task object of `task_name`; an `InputError` naming `label` (with the closest names) when unknown."""
    mteb = import_mteb()
    try:
        return mteb.get_task(task_name)
    except KeyError:
        pass
    names = [task.metadata.name for task in mteb.get_tasks()]
    close = get_close_matches(task_name, names, n=3)
    raise InputError(f"unknown MTEB task or benchmark {label!r}" + (
        f"; did you mean {', '.join(MTEB_PREFIX + name for name in close)}?" if close else ""))


def expand_spec(name: str, path: str) -> dict[str, str]:
    """{task name: path} of one `mteb:<Task or Benchmark>=PATH`: a task as it is; a benchmark as its tasks, each
    reading PATH/<TaskName> where that folder exists, else PATH (a hub cache holding them all)."""
    mteb = import_mteb()
    wanted = name.removeprefix(MTEB_PREFIX)
    try:
        mteb.get_task(wanted)
        return {name: path}
    except KeyError:
        pass
    try:
        benchmark = mteb.get_benchmark(wanted)
    except (KeyError, ValueError):
        mteb_task(wanted, name)  # raises, naming the closest task names
        raise
    return {MTEB_PREFIX + task.metadata.name: str(Path(path, task.metadata.name))
            if Path(path, task.metadata.name).is_dir() else path for task in benchmark.tasks}


_DATASETS_FOLDER: list[Path] = []
_LOADED: dict[tuple, tuple] = {}  # (task, folder, revision, digest) -> (MTEB's task with its data, splits)


@contextmanager
def datasets_in_temporary_cache():
    """`datasets` preparing its Arrow files (and locks) in a temporary folder of this process, removed at exit, so
    that loading a task writes nothing to the user's ~/.cache."""
    import datasets

    if not _DATASETS_FOLDER:
        folder = Path(tempfile.mkdtemp(prefix="sentsweep-mteb-datasets-"))
        atexit.register(shutil.rmtree, folder, True)
        _DATASETS_FOLDER.append(folder)
    cache = datasets.config.HF_DATASETS_CACHE
    datasets.config.HF_DATASETS_CACHE = _DATASETS_FOLDER[0]
    try:
        yield
    finally:
        datasets.config.HF_DATASETS_CACHE = cache


def _split_names(task, folder: Path) -> list[str]:
    """The splits of the task's data in `folder`, read as MTEB's loader reads them (for a retrieval task, those of
    its qrels: the config "default", else "qrels")."""
    from datasets import get_dataset_config_names, get_dataset_split_names

    config = task.metadata.dataset.get("name")
    if task.metadata.is_multilingual:
        config = task.hf_subsets[0]
    if _is_retrieval(task):
        configs = get_dataset_config_names(str(folder))
        config = f"{config}-qrels" if task.metadata.is_multilingual else (
            "default" if "default" in configs else "qrels")
    return list(get_dataset_split_names(str(folder), config_name=config))


def _is_retrieval(task) -> bool:
    from mteb.abstasks import AbsTaskRetrieval

    return isinstance(task, AbsTaskRetrieval)


def _is_classification(task) -> bool:
    from mteb.abstasks import AbsTaskClassification

    return isinstance(task, AbsTaskClassification)


def _is_sts(task) -> bool:
    from mteb.abstasks import AbsTaskSTS

    return isinstance(task, AbsTaskSTS)


class MtebTask(Task):
    """An MTEB task on its dataset in a local folder, scored by `mteb.evaluate` (see the module docstring)."""

    main_metric = "main_score"
    splits = ("dev", "test")
    reference = MTEB

    def __init__(self, name: str, path: str) -> None:
        super().__init__(name, path)
        self.task_name = name.removeprefix(MTEB_PREFIX)
        self.task = mteb_task(self.task_name, name)
        dataset = self.task.metadata.dataset
        self.data: TaskData = resolve_task_data(name, dataset["path"], dataset["revision"], path)
        key = (self.task_name, self.data.folder, self.data.revision, self.data.digest)
        if key not in _LOADED:  # a process builds a task once per folder content (the launcher checks, then scores)
            _LOADED[key] = (self.task, self._load())
        self.task, self.hub_splits = _LOADED[key]
        self.splits = tuple(self.hub_splits)

    def _load(self) -> dict[str, str]:
        """Load the data with MTEB's own loader from the local folder; {our split: the hub's split name}."""
        task, folder = self.task, self.data.folder
        task.metadata = task.metadata.model_copy(update={"dataset": dict(task.metadata.dataset, path=str(folder))})
        with datasets_in_temporary_cache():
            try:
                found = _split_names(task, folder)
            except Exception as error:  # datasets' own message names what it could not read
                raise InputError(f"{self.name}: {folder} is not {self.data.repository}'s layout: "
                                 f"{_one_line(error)}") from None
            splits = self._splits(found)
            task.filter_eval_splits(list(splits.values()))
            try:
                task.load_data()
            except Exception as error:
                raise InputError(f"{self.name}: MTEB cannot read {folder} as {self.data.repository} "
                                 f"({type(error).__name__}: {_one_line(error)})") from None
        return splits

    def _splits(self, found: list[str]) -> dict[str, str]:
        """{our split: the hub's} of the splits `found` in the folder (see the module docstring)."""
        task, folder = self.task, self.data.folder
        reported = [split for split in task.metadata.eval_splits if split in found]
        test = "test" if "test" in reported else (reported[0] if reported else None)
        if test is None:
            raise InputError(f"{self.name}: {folder} has no {' or '.join(task.metadata.eval_splits)} split, which "
                             f"MTEB reports for {self.task_name} (it has {', '.join(found) or 'none'})")
        if _is_classification(task) and task.train_split not in found:
            raise InputError(f"{self.name}: {folder} has no {task.train_split!r} split, on which MTEB fits the "
                             f"classifier (it has {', '.join(found)})")
        dev = next((split for split in DEV_SPLITS if split in found and split != test), None)
        return {"dev": dev, "test": test} if dev else {"test": test}

    def metric_key(self, metric: str) -> str:
        return f"{metric_prefix(self.task_name)}_{metric}"

    @property
    def provenance(self) -> dict:
        """What the scores were computed on: the hub repository, its revision, the local folder and its digest, and
        the MTEB version."""
        from importlib.metadata import version

        return {"task": self.task_name, "repository": self.data.repository, "revision": self.data.revision,
                "folder": str(self.data.folder), "source": self.data.source, "digest": self.data.digest,
                "mteb_version": version("mteb")}

    def evaluate(self, scorer: Scorer, split: str) -> TaskResult:
        check_split(self.name, split, self.splits)
        mteb = import_mteb()
        model = _sentence_model(scorer, self.name)
        hub_split = self.hub_splits[split]
        self.task.filter_eval_splits([hub_split])
        captured: dict = {}
        if _is_retrieval(self.task):
            self.task.task_specific_scores = _capturing(type(self.task).task_specific_scores, self.task, captured)
        with tempfile.TemporaryDirectory() as predictions, warnings.catch_warnings():
            # MTEB's notes on superseded tasks and renamed sentence-transformers methods: not the researcher's to act on
            warnings.filterwarnings("ignore", category=UserWarning, module=r"mteb(\.|$)")
            warnings.filterwarnings("ignore", category=FutureWarning, module=r"mteb(\.|$)")
            try:
                outcome = mteb.evaluate(model, self.task, cache=None, encode_kwargs=dict(ENCODE_KWARGS),
                                        prediction_folder=predictions, show_progress_bar=False, co2_tracker=False,
                                        overwrite_strategy="always")
            finally:
                self.task.__dict__.pop("task_specific_scores", None)
            file = Path(predictions) / self.task.prediction_file_name
            predicted = json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}
        (result,) = outcome.task_results
        metrics = self._metrics(result, hub_split)
        items = self._items(result, hub_split, predicted, captured)
        return TaskResult(metrics, {self.metric_key(self.main_metric) + ITEMS_SUFFIX: items} if items else {},
                          self._result_artifacts(result, model))

    def _metrics(self, result, hub_split: str) -> dict[str, float]:
        """MTEB's scalar scores of `hub_split` x 100 (thresholds as they are), and the main score of the task."""
        subsets = result.scores[hub_split]
        metrics = {}
        for scores in subsets:
            prefix = "" if len(subsets) == 1 else f"{scores['hf_subset']}_"
            for key, value in scores.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value):
                    metrics[self.metric_key(prefix + key)] = float(value) * (1.0 if "threshold" in key else 100.0)
        metrics[self.metric_key(self.main_metric)] = 100.0 * float(result.get_score(splits=[hub_split]))
        return metrics

    def _items(self, result, hub_split: str, predicted: dict, captured: dict) -> list[float] | None:
        """The main score's outcome per item (see the module docstring), or None where it is no mean over items."""
        main = self.task.metadata.main_score
        if len(result.scores[hub_split]) != 1:
            return None
        subset = result.scores[hub_split][0]["hf_subset"]
        if _is_retrieval(self.task) and (hub_split, subset) in captured:
            return per_query_outcomes(main, *captured[(hub_split, subset)], self.task.skip_first_result)
        split_data = self._split_data(hub_split, subset)
        if _is_sts(self.task) and main.endswith(("spearman", "pearson")):
            scores = (predicted.get(subset) or {}).get(hub_split) or {}
            similarities = scores.get("cosine_scores") if main.startswith("cosine") or \
                scores.get("similarity_scores") is None else scores["similarity_scores"]
            if similarities is None:
                return None
            return correlation_terms(similarities, split_data["score"], ranked=main.endswith("spearman"))
        if _is_classification(self.task) and main == "accuracy" and not self.task.is_cross_validation:
            experiments = (predicted.get(subset) or {}).get(hub_split)
            if not experiments:
                return None
            gold = np.asarray(split_data[self.task.label_column_name])
            return np.mean([np.asarray(labels) == gold for labels in experiments], axis=0).astype(float).tolist()
        return None

    def _split_data(self, hub_split: str, subset: str):
        dataset = self.task.dataset
        return dataset[hub_split] if subset not in dataset and subset == "default" else dataset[subset][hub_split]

    def _result_artifacts(self, result, model) -> dict:
        """{artifact path: JSON} of MTEB's result and model meta, in the layout of MTEB's result cache, and of the
        data's provenance (repository, revision, folder, content digest, MTEB version)."""
        from mteb.models.model_meta import ModelMeta

        with warnings.catch_warnings():  # mteb 2.26's own call passes its deprecated fill_missing (False) on
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.filterwarnings("ignore", category=FutureWarning, module=r"mteb(\.|$)")
            meta = ModelMeta.from_sentence_transformer_model(model, fetch_from_hf=False) \
                if type(model).__name__ == "SentenceTransformer" else ModelMeta.create_empty()
        folder = f"{RESULTS_ARTIFACT}/{meta.model_name_as_path()}/{meta.revision or 'no_revision_available'}"
        with tempfile.TemporaryDirectory() as written:  # the JSON MTEB itself writes (`TaskResult.to_disk`)
            result.to_disk(Path(written) / "result.json")
            content = json.loads((Path(written) / "result.json").read_text(encoding="utf-8"))
        return {f"{folder}/{self.task_name}.json": content,
                f"{folder}/model_meta.json": json.loads(json.dumps(meta.to_dict(), default=str)),
                f"{PROVENANCE_ARTIFACT}/{self.task_name}.json": self.provenance}


def _capturing(method, task, captured: dict):
    """MTEB's `task_specific_scores` of `task`, also keeping its arguments (pytrec_eval's per-query scores, the
    qrels, the retrieved results) by (split, subset)."""

    def capture(scores, qrels, results, hf_split: str, hf_subset: str):
        captured[(hf_split, hf_subset)] = (scores, qrels, results)
        return method(task, scores, qrels, results, hf_split=hf_split, hf_subset=hf_subset)

    return capture


def per_query_outcomes(main_score: str, scores: dict, qrels: dict, results: dict,
                       skip_first_result: bool = False) -> list[float] | None:
    """The retrieval main score's value per query, in sorted query-id order: pytrec_eval's per-query measure as
    MTEB computed it, or MTEB's reciprocal rank (`mrr`) for mrr_at_k; None for another main score."""
    for name, measure in PER_QUERY_MEASURES.items():
        if main_score.startswith(name) and main_score[len(name):].isdigit():
            key = measure + main_score[len(name):]
            return [float(scores[query][key]) for query in sorted(scores)]
    if main_score.startswith("mrr_at_") and main_score[len("mrr_at_"):].isdigit():
        from mteb._evaluators.retrieval_metrics import mrr

        if skip_first_result:
            results = {query: dict(sorted(documents.items(), key=lambda item: item[1], reverse=True)[1:])
                       for query, documents in results.items()}
        k = int(main_score[len("mrr_at_"):])
        by_query = dict(zip(results, mrr(qrels, results, [k])[f"MRR@{k}"]))
        return [float(by_query[query]) for query in sorted(by_query)]
    return None


def correlation_terms(similarities, gold, ranked: bool) -> list[float]:
    """Per pair, z(a_i) z(b_i) of the similarities and the gold scores (of their average ranks when `ranked`),
    standardised with the population standard deviation: their mean is Pearson's r (Spearman's rho when ranked)."""
    values = [np.asarray(v, dtype=np.float64) for v in (similarities, gold)]
    if ranked:
        values = [rankdata(v) for v in values]
    a, b = ((v - v.mean()) / v.std() for v in values)
    return (a * b).tolist()


def _sentence_model(scorer: Scorer, label: str):
    """The sentence-transformers model a scorer scores with; an `InputError` for a method without one."""
    model = getattr(scorer, "model", None)
    if model is None or not hasattr(model, "encode"):
        raise InputError(f"{label}: MTEB scores a sentence embedding model, and {type(scorer).__name__} has none")
    return model


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())[:400]


def published_main_scores(folder: str | Path, model: str, task_names: list[str]) -> dict[str, tuple[float, Path]]:
    """{task name: (main score x 100, its file)} of `model`'s results in a local copy of MTEB's results repository
    (https://github.com/embeddings-benchmark/results: `results/<org>__<model>/<revision>/<Task>.json`). `folder` is
    the repository (or its `results/`), one model's folder, or one revision folder; `model` a hub name or a local
    model folder, matched by its last component. The score is MTEB's `TaskResult.get_score` on the task's reported
    splits. A model or revision that cannot be told apart is an `InputError`; a task without a file is left out."""
    mteb = import_mteb()
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise InputError(f"--mteb-results: folder not found: {root}")
    revision = _revision_folder(root, model)
    found = {}
    for name in task_names:
        file = revision / f"{name}.json"
        if file.is_file():
            result = mteb.TaskResult.from_disk(file)
            splits = [split for split in mteb.get_task(name).metadata.eval_splits if split in result.scores]
            found[name] = (100.0 * float(result.get_score(splits=splits)), file)
    return found


def _revision_folder(root: Path, model: str) -> Path:
    """The revision folder of `model`'s results under `root` (see `published_main_scores`)."""
    if any(root.glob("*.json")):
        return root  # a revision folder
    children = [folder for folder in root.iterdir() if folder.is_dir()]
    if children and all(any(child.glob("*.json")) for child in children):
        model_folder = root  # one model's folder, one folder per revision
    else:
        results = root / "results" if (root / "results").is_dir() else root
        models = [folder for folder in results.iterdir() if folder.is_dir()]
        last = Path(model.rstrip("/")).name
        matching = [folder for folder in models if folder.name == model.rstrip("/").replace("/", "__")] or \
            [folder for folder in models if folder.name.split("__")[-1] == last]
        if len(matching) != 1:
            raise InputError(f"--mteb-results: {'no' if not matching else 'more than one'} model folder for {model} "
                             f"in {results}" + (f" ({', '.join(f.name for f in matching)})" if matching else ""))
        model_folder = matching[0]
    revisions = [folder for folder in model_folder.iterdir() if folder.is_dir()]
    if len(revisions) != 1:
        raise InputError(f"--mteb-results: {model_folder} holds {len(revisions)} revisions of the model "
                         f"({', '.join(sorted(f.name for f in revisions))}); give the folder of one")
    return revisions[0]


def untrained_scores(model_folder: str, max_seq_length: int, specs: dict[str, str], model_name: str | None,
                     results_folder: str | None) -> tuple[dict[str, float], list[str]]:
    """The untrained model's MTEB scores, `untrained_<main metric>` for each MTEB task of `specs` (test split), and,
    with `results_folder` (a local copy of MTEB's results repository), the published ones as reproduction targets,
    `published_untrained_<main metric>`; with the lines that say whether each was reproduced (within
    PUBLISHED_TOLERANCE points: the evaluation is deterministic up to floating-point noise)."""
    tasks = {name: MtebTask(name, path) for name, path in specs.items() if is_mteb_name(name)}
    if not tasks:
        return {}, []
    model = load_sentence_model(model_folder, pooling=None, max_seq_length=max_seq_length)
    metrics = {f"untrained_{task.main_metric_key}": task.evaluate(EmbeddingScorer(model), "test").metrics[
        task.main_metric_key] for task in tasks.values()}
    lines = [f"untrained model on {name}: {metrics[f'untrained_{task.main_metric_key}']:.2f} (MTEB main score x 100)"
             for name, task in tasks.items()]
    if results_folder:
        published = published_main_scores(results_folder, model_name or model_folder,
                                          [task.task_name for task in tasks.values()])
        lines = []
        for name, task in tasks.items():
            ours = metrics[f"untrained_{task.main_metric_key}"]
            if task.task_name not in published:
                lines.append(f"untrained model on {name}: {ours:.2f}; no published result in {results_folder}")
                continue
            value, file = published[task.task_name]
            metrics[f"published_untrained_{task.main_metric_key}"] = value
            verdict = "reproduced" if abs(ours - value) <= PUBLISHED_TOLERANCE else "not reproduced"
            lines.append(f"untrained model on {name}: {ours:.2f}, published {value:.2f} ({file}): {verdict} "
                         f"(difference {ours - value:+.3f}, tolerance {PUBLISHED_TOLERANCE})")
    return metrics, lines
