"""A researcher's own method, run as a built-in one: their file registers an objective and declares a sweep; it runs
from a folder outside the repository, on the embedded local Ray and on a multi-node Ray whose worker has neither
the file's folder as working directory nor on its path; their mistakes fail before Ray starts (sentsweep.plugins).
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest
from mlflow.tracking import MlflowClient

from sentsweep.analysis.runs import fetch_trial_runs, latest_sweep_run_id, run_artifact_text
from sentsweep.errors import InputError
from sentsweep.plugins import code_digest, import_user_modules, load_user_file, user_modules
from sentsweep.registry import Registry
from sentsweep.sweep.execution.target_list import TARGET_LIST_ARTIFACT
from sentsweep.tracking.used_values import trial_reported_names
from tests.helpers.cluster_helpers import PROJECT, RayCluster, run_driver, sqlite_store
from tests.helpers.record_levels import assert_every_level_agrees

RECIPE_A = PROJECT / "examples" / "own_objective.py"
RECIPE_E = PROJECT / "examples" / "trainer_script.py"
FEW_STEPS = ["--max-steps", "20", "--eval-steps", "10"]


def test_a_file_with_a_syntax_error_is_refused_naming_its_file_and_line(tmp_path):
    broken = tmp_path / "broken_sweep.py"
    broken.write_text("from sentsweep.sweep import run_sweep\n\ndef loss(x:\n    return x\n")
    with pytest.raises(InputError, match=rf"{broken}, line 3: SyntaxError"):
        load_user_file(broken)
    result = run_driver([sys.executable, "-m", "sentsweep", "run", str(broken), "--quick"], tmp_path, timeout=120)
    assert result.returncode == 2, result.stderr
    assert f"{broken}, line 3: SyntaxError" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "sweep_outputs").exists()  # nothing ran, no Ray session, no store


def test_a_file_that_needs_a_missing_package_is_refused_naming_the_package_and_line(tmp_path):
    broken = tmp_path / "needs_package.py"
    broken.write_text("import math\n\nimport a_package_nobody_installed  # noqa\n")
    with pytest.raises(InputError, match=rf"needs_package.py does not import: {broken}, line 3: "
                                         r"ModuleNotFoundError: No module named 'a_package_nobody_installed'"):
        load_user_file(broken)


def test_a_plugin_whose_name_collides_with_a_built_in_is_refused_before_ray_starts(tmp_path):
    plugin = tmp_path / "my_losses.py"
    plugin.write_text((RECIPE_A.read_text().split("OWN = ")[0]).replace('"align_uniform"', '"simcse"'))
    result = run_driver([sys.executable, str(PROJECT / "sweeps" / "nm_weight.py"), "--quick", "--plugin",
                         str(plugin), "--dry-run"], tmp_path, timeout=120)
    assert result.returncode == 2, result.stderr
    assert (f"objective 'simcse' of {plugin} (module my_losses) collides with the objective 'simcse' of "
            "sentsweep (built-in, sentsweep.trainables.objectives)") in result.stderr


def test_the_user_code_a_driver_sends_is_named_and_digested_and_a_different_copy_is_refused(tmp_path, monkeypatch):
    plugin = tmp_path / "digest_probe.py"
    # an entry in a registry of its own, dropped after the test: a later sweep in this process would otherwise send
    # this module to its workers too
    monkeypatch.setattr(Registry, "instances", list(Registry.instances))
    plugin.write_text("from sentsweep.registry import Registry\n\nRegistry('probe').add('probe', object(), "
                      "origin=__name__)\n")
    try:
        load_user_file(plugin)
        modules = {module.name: module for module in user_modules()}
        assert modules["digest_probe"].path == str(plugin) and modules["digest_probe"].digest == code_digest(plugin)
        import_user_modules([modules["digest_probe"].as_config()])  # the same copy: accepted
        plugin.write_text(plugin.read_text() + "# edited after the driver read it\n")
        assert code_digest(plugin) != modules["digest_probe"].digest  # an edited loss gets another code version
        with pytest.raises(RuntimeError, match="digest_probe.*is not the driver's"):
            import_user_modules([modules["digest_probe"].as_config()])
    finally:
        sys.modules.pop("digest_probe", None)
    monkeypatch.undo()
    assert "digest_probe" not in {module.name for module in user_modules()}


@pytest.mark.slow  # a real training run of seconds or more
def test_an_objective_whose_loss_fails_stops_the_sweep_before_ray_starts_naming_its_line(tmp_path):
    broken = tmp_path / "failing_objective.py"
    source = RECIPE_A.read_text().replace("    return alignment + weight",
                                          "    raise ValueError('a bug in my loss')\n    return alignment + weight")
    broken.write_text(source)
    line = source.splitlines().index("    raise ValueError('a bug in my loss')") + 1
    result = run_driver([sys.executable, str(broken), "--quick"], tmp_path, timeout=300)
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    assert (f"method 'align_uniform' failed its first step on a tiny model at {broken}, line {line}: ValueError: a "
            "bug in my loss") in result.stderr
    assert not list((tmp_path / "sweep_outputs").glob("ray/failing*"))  # no Ray Tune run started
    assert not (tmp_path / "mlflow.db").exists()  # nor a sweep in MLflow


@pytest.mark.slow
def test_recipe_e_a_trainer_script_swept_over_seeds_and_an_argument_reports_each_evaluation(tmp_path, shared_ray):
    script = tmp_path / "trainer_script.py"
    shutil.copy(RECIPE_E, script)
    uri = sqlite_store(tmp_path)
    # on the session's Ray (recipe A's test runs a user's file on a Ray of the driver's own)
    result = run_driver([sys.executable, str(script), "--quick", "--tracking-uri", uri], tmp_path,
                        env={"RAY_ADDRESS": shared_ray})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "| cosent_script | 10.0 |" in result.stdout and "| cosent_script | 20.0 |" in result.stdout
    runs = fetch_trial_runs(uri, "trainer_script", None)
    assert len(runs) == 4 and set(runs["status"]) == {"FINISHED"}  # 2 scales x 2 seeds
    client = MlflowClient(uri)
    for run_id in runs["run_id"]:
        # the untrained model, then each of the trainer's evaluations (eval_steps 10 of 20 steps), and the trainer's
        # own loss at each of its logging steps (5)
        assert [m.step for m in client.get_metric_history(run_id, "sts_dev")] == [0, 10, 20]
        assert [m.step for m in client.get_metric_history(run_id, "loss")] == [5, 10, 15, 20]
        assert client.get_run(run_id).data.params["trainer.logging_steps"] == "5"
    assert set(runs["seed"]) == {"0", "1"}
    # each configuration run carries the settings its trials' trainer used, the sweep's run the values they used
    # (the model's own max_seq_length, not the protocol's), and both the trials' provenance and data
    sweep_run_id = latest_sweep_run_id(uri, "trainer_script")
    sweep, configurations, trials = assert_every_level_agrees(uri, "trainer_script", sweep_run_id)
    assert len(configurations) == 2
    used = {trial.data.params["max_seq_length"] for trial in trials}
    assert len(used) == 1 and sweep.data.params["max_seq_length"] == used.pop()
    assert trial_reported_names({"method": "cosent_script"}, []) <= set(configurations[0].data.params)


@pytest.mark.slow
def test_recipe_a_runs_from_a_folder_outside_the_repository_on_the_embedded_ray(tmp_path):
    sweep_file = tmp_path / "own_objective.py"
    shutil.copy(RECIPE_A, sweep_file)
    card = run_driver([sys.executable, str(sweep_file), "--dry-run"], tmp_path, timeout=120)
    assert card.returncode == 0, card.stderr
    assert ("| align_uniform | uniformity_weight (swept) | 1 | default: project choice (this example's starting "
            "point; swept) |") in card.stdout
    assert "| align_uniform | uniformity_t | 2 | default: project choice (this example's choice) |" in card.stdout
    uri = sqlite_store(tmp_path)
    result = run_driver([sys.executable, str(sweep_file), "--quick", "--tracking-uri", uri, *FEW_STEPS], tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "| align_uniform | 1.0 |" in result.stdout and "| align_uniform | 2.0 |" in result.stdout
    runs = fetch_trial_runs(uri, "own_objective", None)
    assert len(runs) == 6 and set(runs["status"]) == {"FINISHED"}  # SimCSE and two weights, 2 seeds each
    versions = {MlflowClient(uri).get_run(run_id).data.tags["code_version"] for run_id in runs["run_id"]}
    assert all(version.endswith(f" + own_objective.py@{code_digest(sweep_file)}") for version in versions)
    # the sweep's and the configurations' runs name the same own file, with the trials' provenance and data
    sweep_run_id = latest_sweep_run_id(uri, "own_objective")
    sweep, configurations, _ = assert_every_level_agrees(uri, "own_objective", sweep_run_id)
    assert len(configurations) == 3 and {sweep.data.tags["code_version"]} == versions


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                    reason="hiding the file from the worker node takes a mount namespace: root and unshare")
def test_recipe_a_runs_on_a_worker_node_that_has_not_got_the_file(tmp_path):
    user_folder, shared = tmp_path / "researcher", tmp_path / "shared"  # the file; the outputs every node sees
    user_folder.mkdir(), shared.mkdir()
    sweep_file = user_folder / "own_objective.py"
    shutil.copy(RECIPE_A, sweep_file)
    cluster = RayCluster(head_cpus=0)  # every trial runs on the worker node
    try:
        # the worker node sees an empty folder where the driver has the file, as another machine would have none
        cluster.add_worker(cpus=2, hidden=(user_folder,))
        uri = sqlite_store(shared)
        result = run_driver([sys.executable, str(sweep_file), "--quick", "--tracking-uri", uri, "--output-dir",
                             str(shared / "out"), *FEW_STEPS], shared, env={"RAY_ADDRESS": cluster.address})
    finally:
        cluster.stop()
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    runs = fetch_trial_runs(uri, "own_objective", None)
    assert len(runs) == 6 and set(runs["status"]) == {"FINISHED"}
    assert {MlflowClient(uri).get_run(run_id).data.params.get("method") for run_id in runs["run_id"]} == {
        "simcse", "align_uniform"}


@pytest.mark.slow
@pytest.mark.parametrize("recipe, expected, listed", [
    # (c): the task's main metric is a column of the table, for every configuration
    ("own_task.py", ["| noise_ratio | sts_test_at_best_dev | best_sts_dev | faq_rerank_map |"], []),
    # (d): every published cell is checked (the tiny --quick model misses them all): one line under the table, the
    # full list in the sweep run's artifact
    ("published_table.py", ["Reproduction targets: 3 are cells of this stage; 3 measured (0 reproduced, 3 outside)"],
     ["| pooling=mean, noise_type=delete, noise_ratio=0.6, tie_decoder=false | best_sts_dev | 2 |",
      "3 published values: outside 3."]),
])
def test_recipes_c_and_d_run_from_a_folder_of_their_own(tmp_path, shared_ray, recipe, expected, listed):
    shutil.copytree(PROJECT / "examples", tmp_path / "examples")
    uri = sqlite_store(tmp_path)
    result = run_driver([sys.executable, str(tmp_path / "examples" / recipe), "--quick", "--tracking-uri", uri],
                        tmp_path, env={"RAY_ADDRESS": shared_ray})  # on the session's Ray, as recipe E's
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    table = result.stdout[result.stdout.rindex("mean ± std over seeds"):]
    for text in expected:
        assert text in (table if text.startswith("|") else " ".join(table.split())), text  # a line may be wrapped
    if listed:
        listing = run_artifact_text(uri, latest_sweep_run_id(uri, recipe.removesuffix(".py")), TARGET_LIST_ARTIFACT)
        for text in listed:
            assert text in listing, text
    runs = fetch_trial_runs(uri, recipe.removesuffix(".py"), None)
    assert set(runs["status"]) == {"FINISHED"}
