"""A record a reviewer can trust: every setting a trial resolved to is an MLflow param of its run (each method
family: a built-in objective, a sentence-transformers loss, an objective of one's own, a trainer script), every run
names the code and environment that ran it, no demo file stands in for data a real run was not given, a loss is
fed as it expects, and a bad input is one line and exit code 2 in every entry point.

The params are checked against the typed trial's settings objects (`dataclasses.fields` of each group), not
against a list written here."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import subprocess
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
from mlflow.tracking import MlflowClient

from sentsweep.demo_data import DEMO_DIR
from sentsweep.errors import InputError
from sentsweep.plugins import code_digest, load_user_file
from sentsweep.references import Reference
from sentsweep.registry import Registry
from sentsweep.settings import Settings, project_choice, setting
from sentsweep.sweep import run_sweep
from sentsweep.sweep.compute.ray_connection import check_ray_cluster, version_skew
from sentsweep.tracking.callback import SweepTracker, trial_params
from sentsweep.trainables.catalog import METHODS, resolve_trial
from sentsweep.trainables.objectives import OBJECTIVES, objective
from sentsweep.version import read_code_version
from tests.conftest import SHARED_INPUTS
from tests.helpers.cluster_helpers import PROJECT, RAY_ENV, free_port, run_driver, sqlite_store

TRAIN_FILE = str(DEMO_DIR / "sts-train.csv")
RECIPE_A = PROJECT / "examples" / "own_objective.py"
RECIPE_B = PROJECT / "examples" / "st_losses.py"
RECIPE_E = PROJECT / "examples" / "trainer_script.py"
PROBE = Reference("probe", "the tests", "a probe objective", 2026, "tests/trainables/test_trial_record.py")


def as_param(value) -> str:
    """A value as MLflow keeps a param: JSON for a list, tuple or mapping, text otherwise."""
    return json.dumps(value) if isinstance(value, (list, tuple, dict)) else str(value)


def every_setting(trial, groups=None) -> dict:
    """{field: value} of every field of the trial's settings groups (the given ones, else all), read from the typed
    settings objects; a one-objective method's w (none: nothing to weigh) is not among them."""
    groups = groups if groups is not None else [trial.evaluation, trial.training, trial.settings,
                                                *trial.objectives.values()]
    values = {field.name: getattr(group, field.name) for group in groups if group is not None
              for field in dataclasses.fields(group)}
    if len(trial.objectives) == 1:
        values.pop("w", None)
    return values


@pytest.fixture()
def own_registries(monkeypatch):
    """The registries as they are, restored after the test: the objectives and methods a test registers (a user
    file it loads) are gone for the next test, and no later sweep of this process sends that file to its workers."""
    for registry in (OBJECTIVES, METHODS):
        monkeypatch.setattr(registry, "_entries", dict(registry._entries))
        monkeypatch.setattr(registry, "_origins", dict(registry._origins))
    monkeypatch.setattr(Registry, "instances", list(Registry.instances))
    modules = set(sys.modules)
    yield
    for name in set(sys.modules) - modules:
        if name in ("own_objective", "trainer_script"):
            del sys.modules[name]


@pytest.fixture(scope="module")
def tracker(tmp_path_factory):
    """A sweep's tracker on a SQLite store of its own (no Ray: its callbacks are called as Ray Tune calls them)."""
    folder = tmp_path_factory.mktemp("record")
    return SweepTracker(sqlite_store(folder), "record", "record", folder / "out")


def logged_run(tracker, trial_id: str, config: dict, results: list[dict] = ()):
    """The MLflow run of a trial `config` whose start (and `results`) the tracker logged."""
    trial = SimpleNamespace(trial_id=trial_id, config=config, error_file=None, last_result={})
    tracker.on_trial_start(0, [], trial)
    for result in results:
        tracker.on_trial_result(0, [], trial, result)
    assert tracker.writer.flush()
    client = MlflowClient(tracker.writer.tracking_uri)
    found = client.search_runs([tracker.writer.experiment_id], f"tags.ray_trial_id = '{trial_id}'")
    return client.get_run(found[0].info.run_id)


def assert_every_setting_logged(run, settings: dict) -> None:
    params = run.data.params
    missing = sorted(set(settings) - set(params))
    assert not missing, f"settings that are no param of the run: {missing}"
    wrong = {name: (params[name], as_param(value)) for name, value in settings.items()
             if params[name] != as_param(value)}
    assert not wrong, f"params whose value is not the trial's: {wrong}"


def test_a_built_in_objective_logs_every_resolved_setting_defaults_included(tracker, tiny_model_dir, tmp_path):
    config = SHARED_INPUTS | {"method": "tsdae", "model": str(tiny_model_dir), "pooling": "cls", "noise_ratio": 0.3}
    trial = resolve_trial(config)
    run = logged_run(tracker, "builtin", config)
    settings = every_setting(trial)
    assert {"precision", "dropout", "group_by_length", "warmup_ratio", "epochs", "validation_size",
            "tie_decoder"} <= set(settings)  # defaults the config did not name: among the fields
    assert_every_setting_logged(run, settings)
    whole = MlflowClient(tracker.writer.tracking_uri).download_artifacts(run.info.run_id, "config.json", str(tmp_path))
    assert set(settings) <= set(json.loads(Path(whole).read_text()))  # the whole config, beside the params


def test_a_sentence_transformers_loss_logs_its_arguments_its_input_kind_and_no_corpus(tracker, tiny_model_dir):
    config = SHARED_INPUTS | {"method": "st:MultipleNegativesRankingLoss", "model": str(tiny_model_dir),
                              "train_file": TRAIN_FILE}  # a sweep's config names the corpus; a pair loss reads none
    trial = resolve_trial(config)
    run = logged_run(tracker, "st-loss", config)
    assert_every_setting_logged(run, every_setting(trial))
    params = run.data.params
    assert params["st_inputs"] == "pairs" and params["positive_threshold"] == "0.8" and params["scale"] == "20.0"
    assert params["corpus"] == "None"
    inputs = {item.dataset.name for item in run.inputs.dataset_inputs}
    assert inputs == {"sts-train.csv", "sts-dev.csv", "sts-test.csv"}  # what the trial reads, no corpus.txt


def test_a_method_that_has_no_corpus_setting_records_no_corpus():
    from sentsweep.tracking.datasets import trial_datasets

    params = trial_params(SHARED_INPUTS | {"method": "bm25"})  # a sweep's config names the corpus; BM25 reads none
    assert "corpus" not in params and params["bm25_variant"] == "okapi"
    assert {dataset.name for dataset, _ in trial_datasets(params)} == {"sts-dev.csv", "sts-test.csv"}


def test_an_objective_of_one_s_own_logs_its_settings_and_a_changed_default_shows(tracker, tiny_model_dir,
                                                                                  own_registries):
    load_user_file(RECIPE_A)
    config = SHARED_INPUTS | {"method": "align_uniform", "model": str(tiny_model_dir), "pooling": "cls"}
    trial = resolve_trial(config)
    run = logged_run(tracker, "own-objective", config)
    settings = every_setting(trial)
    assert {"uniformity_weight", "uniformity_t"} <= set(settings)
    assert_every_setting_logged(run, settings)

    # the same config, run once with a default and once after the researcher changed it in their file
    @dataclass(frozen=True)
    class Before(Settings):
        sharpness: float = setting(1.0, "a probe setting", project_choice("before the edit"), gt=0)

    @dataclass(frozen=True)
    class After(Settings):
        sharpness: float = setting(2.0, "a probe setting", project_choice("after the edit"), gt=0)

    build = OBJECTIVES.get("align_uniform").build
    objective("record_probe", Before, PROBE)(build)
    probe = config | {"method": "record_probe"}
    before = trial_params(probe)
    OBJECTIVES._entries["record_probe"] = dataclasses.replace(OBJECTIVES.get("record_probe"), settings=After)
    after = trial_params(probe)
    assert {key for key in before | after if before.get(key) != after.get(key)} == {"sharpness"}
    assert (before["sharpness"], after["sharpness"]) == (1.0, 2.0)


def run_recipe_e_trial(tiny_model_dir, tmp_path, session):
    """One trial of recipe (e)'s trainer script on the tiny model: 10 steps, evaluated every 5."""
    from sentsweep.trainables.catalog import get_method

    load_user_file(RECIPE_E)
    config = SHARED_INPUTS | {"method": "cosent_script", "model": str(tiny_model_dir), "train_file": TRAIN_FILE,
                              "scale": 20.0, "max_steps": 10, "eval_steps": 5, "max_seq_length": 32}
    get_method("cosent_script").run(resolve_trial(config), session)
    return config


@pytest.mark.slow  # a real training run
def test_a_trainer_script_logs_what_its_trainer_used_its_loss_by_step_and_its_timing(tracker, tiny_model_dir,
                                                                                   tmp_path, own_registries,
                                                                                   monkeypatch):
    from sentence_transformers import SentenceTransformer

    from sentsweep.tasks.sts import StsEvaluator
    from sentsweep.trainables.session import LocalSession
    from sentsweep.trainables.trainer_script import NOT_READ

    scored = []
    score = StsEvaluator.__call__
    monkeypatch.setattr(StsEvaluator, "__call__", lambda self, model: scored.append(self.pairs.source) or score(
        self, model))
    session = LocalSession()
    config = run_recipe_e_trial(tiny_model_dir, tmp_path, session)
    reports = session.reports
    # step 0, the trainer's two evaluations (each scoring dev once: run.evaluator is the sweep's dev scoring)
    assert [report["step"] for report in reports] == [0, 5, 10, 10]
    assert sum(source.endswith("sts-dev.csv") for source in scored) == 3

    trial = resolve_trial(config)
    run = logged_run(tracker, "trainer-script", config, reports)
    # the sweep logs the evaluation's and the script's own settings; the trial reports the training settings
    assert_every_setting_logged(run, every_setting(trial, [trial.evaluation, trial.settings]))
    params = run.data.params
    assert set(dataclasses.asdict(trial.training)) <= set(params)
    true_length = SentenceTransformer(str(tiny_model_dir), device="cpu").max_seq_length
    assert true_length != 32 and params["max_seq_length"] == str(true_length)  # the model's, not the protocol's
    assert params["lr"] == str(config["lr"]) and params["trainer.learning_rate"] == str(config["lr"])
    assert params["corpus"] == NOT_READ and params["trainer.seed"] == "0"
    client = MlflowClient(tracker.writer.tracking_uri)
    assert [m.step for m in client.get_metric_history(run.info.run_id, "loss")] == [5, 10]  # its logging_steps
    metrics = run.data.metrics
    for name in ("preparation_seconds", "seconds_per_step", "evaluation_seconds", "checkpoint_seconds"):
        assert metrics[f"system/{name}"] >= 0, name  # bookkeeping, under system/ (sentsweep.tracking.names)
        assert name not in metrics


@pytest.mark.slow  # a real training step
def test_a_trainer_script_s_check_reads_a_few_examples(tiny_model_dir, tmp_path, own_registries, monkeypatch,
                                                       capsys):
    import sentsweep.data
    from sentsweep.sweep.launch.first_step import CHECK_LINES, check_own_methods_start

    rows = (DEMO_DIR / "sts-train.csv").read_text(encoding="utf-8").splitlines()
    big = tmp_path / "sts-train.csv"
    big.write_text("\n".join(rows * (2000 // len(rows) + 1)) + "\n", encoding="utf-8")
    load_user_file(RECIPE_E)
    read = {}  # every STS-benchmark file read, with its lines: the recipe's training pairs, the sweep's dev and test
    reader = sentsweep.data.read_sts_benchmark_file

    def counting_reader(path):
        read[str(path)] = len(Path(path).read_text(encoding="utf-8").splitlines())
        return reader(path)

    monkeypatch.setattr(sentsweep.data, "read_sts_benchmark_file", counting_reader)
    point = SHARED_INPUTS | {"method": "cosent_script", "train_file": str(big), "scale": 20.0}
    started = time.perf_counter()
    check_own_methods_start({"cosent_script": point}, lambda: tiny_model_dir)
    seconds = time.perf_counter() - started
    assert {Path(path).name for path in read} == {"sts-train.csv", "sts-dev.csv", "sts-test.csv"}
    assert all(lines <= CHECK_LINES for lines in read.values()), read
    with capsys.disabled():
        print(f"\ntrainer script check on the tiny model: {seconds:.1f} s (a 2000-pair train file)")


def test_the_commit_is_read_where_the_package_is_not_where_the_sweep_runs(tmp_path):
    outside = tmp_path / "not-a-checkout" / "sentsweep"
    outside.mkdir(parents=True)
    version = read_code_version(outside)
    assert version.commit is None and version.dirty is None and version.label().endswith("(commit unknown)")

    checkout = tmp_path / "checkout"
    (checkout / "sentsweep").mkdir(parents=True)
    (checkout / "sentsweep" / "code.py").write_text("x = 1\n")
    git = ["git", "-C", str(checkout), "-c", "user.email=t@t", "-c", "user.name=t"]
    for command in (["init", "-q"], ["add", "."], ["commit", "-qm", "one"]):
        subprocess.run(git + command, check=True)
    head = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    clean = read_code_version(checkout / "sentsweep")
    assert (clean.commit, clean.dirty, clean.label()) == (head, False, head[:7])
    (checkout / "sentsweep" / "code.py").write_text("x = 2\n")
    assert read_code_version(checkout / "sentsweep").label() == head[:7] + "-dirty"


SWEEP_OF_ONE_S_OWN = '''"""A sweep of one's own, outside the repository: one objective, one seed, two steps."""
import sys
from dataclasses import dataclass

import torch.nn.functional as F
from torch import nn

from sentsweep.losses.contrastive import encode_views
from sentsweep.models import preprocess_on_device
from sentsweep.references import Reference
from sentsweep.settings import Settings, project_choice, setting
from sentsweep.sweep import Stage, SweepDefinition, run_sweep
from sentsweep.search_spaces.protocol import Protocol, Sourced
from sentsweep.trainables.objectives import Objective, objective

OWN = project_choice("the test's")


@dataclass(frozen=True)
class AlignSettings(Settings):
    align_weight: float = setting(1.0, "weight of the alignment", OWN, gt=0)


@objective("align_only", AlignSettings, Reference("t", "t", "t", 2026, "t"))
def build(model, settings, source, vocabulary):
    def batch_loss(sentences, rng):
        first, second = encode_views(model, preprocess_on_device(model, sentences), 2)
        return settings.align_weight * (F.normalize(first, dim=-1) - F.normalize(second, dim=-1)).norm(dim=1).mean()

    return Objective(nn.Identity(), batch_loss)


PROTOCOL = Protocol(settings={"pooling": Sourced("mean", OWN), "lr": Sourced(1e-3, OWN),
                              "batch_size": Sourced(8, OWN), "max_steps": Sourced(2, OWN),
                              "eval_steps": Sourced(2, OWN), "max_seq_length": Sourced(16, OWN)},
                    seeds=Sourced(1, OWN), grids={}, quick={})
DEFINITION = SweepDefinition(name="own_sweep", description="a sweep of one's own", protocol=PROTOCOL,
                             stages=[Stage("one", lambda options: {"method": ["align_only"]})])

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
'''


@pytest.mark.slow  # two sweeps, on the session's Ray (a user's file on a Ray of the driver's own: test_own_method.py)
def test_a_sweep_outside_the_repository_records_the_code_the_packages_and_the_node(tmp_path, shared_ray):
    import importlib.metadata

    folder = tmp_path / "researcher"
    folder.mkdir()
    sweep_file = folder / "own_sweep.py"
    sweep_file.write_text(SWEEP_OF_ONE_S_OWN)
    uri = sqlite_store(folder)
    commit = subprocess.run(["git", "-C", str(PROJECT), "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()  # the checkout of the installed package, as the sweeps ran
    command = [sys.executable, str(sweep_file), "--quick", "--tracking-uri", uri]
    first = run_driver(command, folder, {"RAY_ADDRESS": shared_ray}, timeout=900)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    sweep_file.write_text(SWEEP_OF_ONE_S_OWN.replace("align_weight: float = setting(1.0",
                                                     "align_weight: float = setting(0.5"))
    second = run_driver(command, folder, {"RAY_ADDRESS": shared_ray}, timeout=900)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]

    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("own_sweep").experiment_id
    trials = client.search_runs([experiment], "tags.ray_trial_id != ''", order_by=["attributes.start_time ASC"])
    assert len(trials) == 2
    for run in trials:
        tags = run.data.tags
        assert tags["sentsweep.commit"] == commit and tags["sentsweep.dirty"] in ("true", "false")
        assert tags["sentsweep.version"] == importlib.metadata.version("sentsweep")
        assert tags["code_version"].startswith(commit[:7])
        assert tags["package.torch"] == importlib.metadata.version("torch")
        assert tags["package.ray"] and tags["package.mlflow"] and tags["package.sentence-transformers"]
        assert tags["node.hostname"] and tags["node.ray_node_id"] and tags["node.cpu"] and tags["node.gpu"]
        gpu = tags["node.gpu"].split(" (")[0]
        assert tags["device"] == ("cpu" if gpu == "none" else f"cuda:0 ({gpu})")
        requirements = client.download_artifacts(run.info.run_id, "environment/requirements.txt", str(tmp_path))
        assert f"mlflow=={importlib.metadata.version('mlflow')}" in Path(requirements).read_text().splitlines()
    digests = [run.data.tags["code_version"].split("own_sweep.py@")[1] for run in trials]
    assert digests[0] != digests[1] and digests[1] == code_digest(sweep_file)
    assert [run.data.params["align_weight"] for run in trials] == ["1.0", "0.5"]  # the changed default, a param
    sweep_runs = client.search_runs([experiment], "tags.role = 'sweep'")
    assert all(run.data.tags["sentsweep.commit"] == commit for run in sweep_runs)  # the driver's own provenance


def quiet_sweep(definition, argv: list[str]) -> tuple[int, str]:
    """Run a sweep in this process; its exit code and what it wrote to stderr."""
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        code = run_sweep(definition, argv)
    return code, err.getvalue()


def test_a_real_run_without_a_corpus_is_refused_before_ray_and_a_pair_loss_needs_none(tiny_model_dir, tmp_path):
    from sentsweep.experiments import get_experiment

    out = tmp_path / "out"
    code, err = quiet_sweep(get_experiment("tsdae_deletion"), [
        "--model", str(tiny_model_dir), "--sts-dir", str(DEMO_DIR), "--output-dir", str(out),
        "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}"])
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith("error: --corpus is required: tsdae trains on a corpus")
    assert not (out / "ray").exists() and not (tmp_path / "mlflow.db").exists()  # nothing started
    # the same with --quick and real evaluation data: the demo corpus stands in for the demo's data only
    code, err = quiet_sweep(get_experiment("tsdae_deletion"), ["--quick", "--sts-dir", str(DEMO_DIR), "--output-dir",
                                                               str(out)])
    assert code == 2 and "--corpus is required" in err and "given evaluation data (--sts-dir)" in err

    losses = load_user_file(RECIPE_B)
    card = io.StringIO()
    with redirect_stdout(card):
        code = run_sweep(losses.DEFINITION, ["--dry-run", "--model", str(tiny_model_dir), "--sts-dir", str(DEMO_DIR),
                                             "--output-dir", str(out)])
    assert code == 0 and "(no corpus)" in card.getvalue() and "Cannot run as given" not in card.getvalue()


def test_mnrl_takes_the_scored_pairs_above_its_threshold_as_positives(tiny_model_dir, tmp_path):
    from sentsweep.trainables.st_losses import build_st_loss

    with open(TRAIN_FILE, encoding="utf-8") as handle:  # STS-B's columns: genre, file, year, id, score, s1, s2
        rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    positives = [(row[5], row[6]) for row in rows if float(row[4]) / 5.0 >= 0.8]
    assert 2 <= len(positives) < len(rows)
    setup = build_st_loss(resolve_trial(SHARED_INPUTS | {"method": "st:MultipleNegativesRankingLoss",
                                                         "model": str(tiny_model_dir), "train_file": TRAIN_FILE}))
    assert setup.metrics == {"gold_pairs": len(rows), "positive_pairs": len(positives)}
    assert [(a, b) for a, b, _ in setup.examples] == positives

    useb = tmp_path / "useb"  # relevant pairs without scores: every one a positive, no threshold
    useb.mkdir()
    (useb / "train.org").write_text("a question\nanother question\n")
    (useb / "train.para").write_text("its duplicate\nanother duplicate\n")
    relevant = SHARED_INPUTS | {"method": "st:MultipleNegativesRankingLoss", "model": "m", "train_file": str(useb)}
    with pytest.raises(InputError, match="holds relevant pairs without scores.*--set positive_threshold=null"):
        resolve_trial(relevant)
    assert resolve_trial(relevant | {"positive_threshold": None}).settings.positive_threshold is None


def test_a_loss_argument_out_of_its_range_is_refused_in_one_line(tmp_path):
    losses = load_user_file(RECIPE_B)
    for assignment, message in (("scale=-1", "setting scale=-1 is out of range: must be > 0"),
                                ("scale=0", "setting scale=0 is out of range: must be > 0"),
                                ("positive_threshold=1.5", "setting positive_threshold=1.5 is out of range")):
        code, err = quiet_sweep(losses.DEFINITION, ["--quick", "--set", assignment, "--output-dir", str(tmp_path)])
        assert code == 2 and err.startswith(f"error: {message}") and err.count("\n") == 1, err
    with pytest.raises(InputError, match="setting mini_batch_size=0 is out of range: must be >= 1"):
        resolve_trial(SHARED_INPUTS | {"method": "st:CachedMultipleNegativesRankingLoss", "model": "m",
                                       "train_file": TRAIN_FILE, "mini_batch_size": 0})


def test_a_colliding_name_is_one_line_and_exit_2_in_every_entry_point(tmp_path):
    colliding = tmp_path / "my_sweep.py"
    colliding.write_text(RECIPE_A.read_text().replace('"align_uniform"', '"simcse"'))
    line = (f"error: objective 'simcse' of {colliding} (module my_sweep) collides with the objective 'simcse' of "
            "sentsweep (built-in, sentsweep.trainables.objectives); give it another name\n")
    nm_weight = str(PROJECT / "sweeps" / "nm_weight.py")
    for command in ([sys.executable, str(colliding), "--dry-run"],
                    [sys.executable, "-m", "sentsweep", "run", str(colliding), "--dry-run"],
                    [sys.executable, nm_weight, "--dry-run", "--plugin", str(colliding)]):
        result = run_driver(command, tmp_path, timeout=300)
        assert (result.returncode, result.stderr) == (2, line), command


@pytest.mark.slow  # each entry point takes the tiny model's first step (`sentsweep run FILE.py` loads the file as
# --plugin does, then runs as `python FILE.py`: the colliding-name test above covers its loading)
@pytest.mark.parametrize("entry", ["python FILE.py", "--plugin FILE.py"])
def test_a_failing_builder_is_one_line_and_exit_2_in_every_entry_point(tmp_path, entry):
    broken = tmp_path / "my_objective.py"
    source = RECIPE_A.read_text().replace("    def batch_loss(sentences, rng):\n        first, second",
                                          "    raise RuntimeError('my builder broke')\n\n"
                                          "    def batch_loss(sentences, rng):\n        first, second", 1)
    broken.write_text(source)
    line = source.splitlines().index("    raise RuntimeError('my builder broke')") + 1
    command = {"python FILE.py": [sys.executable, str(broken), "--quick"],
               "--plugin FILE.py": [sys.executable, str(PROJECT / "sweeps" / "learning_rate.py"), "--quick", "--plugin",
                                    str(broken), "--methods", "align_uniform"]}[entry]
    result = run_driver(command, tmp_path)
    assert result.returncode == 2 and result.stderr == (
        f"error: method 'align_uniform' failed its first step on a tiny model at {broken}, line {line}: RuntimeError: "
        "my builder broke\n"), result.stdout[-2000:] + result.stderr[-2000:]
    assert not list((tmp_path / "sweep_outputs").glob("ray/*"))


def test_a_ray_cluster_that_does_not_answer_or_runs_other_versions_is_one_line(monkeypatch):
    port = free_port()  # nothing listens there
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
    with pytest.raises(InputError, match=rf"the Ray cluster at .*:{port} \(RAY_ADDRESS\) does not answer .*: start "
                                         r"it \(ray start --head\)"):
        check_ray_cluster()
    cluster = {"ray_version": "2.59.0", "python_version": "3.11.7"}  # a head's CLUSTER_METADATA, as Ray writes it
    assert version_skew(cluster, "2.59.0", "3.11.7") is None
    assert version_skew(cluster, "2.60.0", "3.11.7") == ("runs Ray 2.59.0 on Python 3.11.7, this driver Ray 2.60.0 "
                                                         "on Python 3.11.7")
    assert version_skew(cluster, "2.59.0", "3.11.9") is not None
    assert version_skew(cluster, "2.59.0", "3.11.9", match_level="minor") is None


@pytest.mark.slow  # a driver against the session's Ray, a head with token authentication (tests/conftest.py)
def test_a_driver_without_the_cluster_s_token_is_refused_in_one_line(tmp_path, shared_ray):
    no_token = {key: value for key, value in RAY_ENV.items() if not key.startswith("RAY_AUTH")}
    result = subprocess.run(
        [sys.executable, str(PROJECT / "sweeps" / "nm_weight.py"), "--quick", "--output-dir", str(tmp_path / "o"),
         "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}"], cwd=tmp_path, capture_output=True, text=True,
        timeout=600, env=no_token | {"RAY_ADDRESS": shared_ray, "HOME": str(tmp_path)})
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr[-3000:]
    assert "refused this driver: it runs with token authentication, and this driver has no token or another one; " \
           "run the driver with the cluster's token: RAY_AUTH_MODE=token and RAY_AUTH_TOKEN_PATH=" in result.stderr
    assert not (tmp_path / "o" / "ray").exists()


def test_an_environment_becomes_tags_and_a_pinned_requirements_file():
    from sentsweep.tracking.provenance import provenance_tags, requirements_text

    environment = {"sentsweep": {"version": "0.1.0", "commit": "a" * 40, "dirty": True, "commit_source": "git"},
                   "python": "3.11.7 (CPython)", "packages": {"mlflow": "3.17.2", "torch": "2.9.0", "zipp": "3.0"},
                   "node": {"hostname": "gpu-7", "ray_node_id": "n1", "cpu": "AMD EPYC", "cpu_count": 16,
                            "gpus": [{"name": "NVIDIA H100 80GB HBM3", "memory_mib": 81559}],
                            "gpu_driver": "550.54.15", "cuda": "12.4", "device": "cuda:0 (NVIDIA H100 80GB HBM3)"}}
    tags = provenance_tags(environment)
    assert tags["device"] == "cuda:0 (NVIDIA H100 80GB HBM3)"
    assert tags["sentsweep.commit"] == "a" * 40 and tags["sentsweep.dirty"] == "true"
    assert tags["package.torch"] == "2.9.0" and "package.zipp" not in tags
    assert tags["node.gpu"] == "NVIDIA H100 80GB HBM3 (81559 MiB)" and tags["node.gpu_driver"] == "550.54.15"
    assert tags["node.cuda"] == "12.4" and tags["node.ray_node_id"] == "n1"
    assert requirements_text(environment).splitlines()[1:] == ["mlflow==3.17.2", "torch==2.9.0", "zipp==3.0"]
