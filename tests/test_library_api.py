"""sentsweep as a library: `import sentsweep` gives the public API (light, documented), `sentsweep.run` takes the
command line's options as keywords (checked as the command line checks them, bad ones an `InputError` before
anything runs) and returns a `SweepResult` read from the sweep's MLflow record; examples and docs import public
names only."""

from __future__ import annotations

import ast
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import textwrap
from contextlib import redirect_stderr
from pathlib import Path

import pytest

import sentsweep
from sentsweep.keyword_options import keyword_argv
from sentsweep.sweep.config.options import SweepOptions, parse_options
from tests.helpers.cluster_helpers import driver_environment, sqlite_store

ROOT = Path(__file__).resolve().parents[1]
QUICK = dict(quick=True, ratios=[0.6], poolings=["mean"], seeds=2, max_steps=4, eval_steps=2, keep_models="best")


# --- the options as keywords -----------------------------------------------------------------------------------

def test_keywords_are_the_command_lines_flags():
    argv = keyword_argv(sentsweep.get_experiment("tsdae_deletion").options, {
        "quick": True, "dry_run": False, "ratios": [0.6, 0.3], "poolings": "mean", "seeds": 2, "max_steps": 4,
        "set": {"lr": 1e-5, "tie_decoder": False}, "eval_task": ["mr=a", "cr=b"], "model": None})
    assert argv == ["--quick", "--ratios", "0.6", "0.3", "--poolings", "mean", "--seeds=2", "--max-steps=4",
                    "--set", "lr=1e-05", "tie_decoder=false", "--eval-task", "mr=a", "--eval-task", "cr=b"]


@pytest.mark.parametrize(("given", "message"), [
    ({"ratio": [0.6]}, "unknown option ratio=[0.6]; did you mean 'ratios'? (the options are the command line's, "
                       "dashes as underscores: max_steps for --max-steps)"),
    ({"quick": 1}, "quick=1: takes True or False"),
    ({"max_steps": [4, 5]}, "max_steps=[4, 5]: takes one value"),
    ({"max_steps": "four"}, "argument --max-steps: invalid int value: 'four'"),
    ({"scheduler": "hyperband"}, "argument --scheduler: invalid choice: 'hyperband' (choose from 'fifo', 'asha', "
                                 "'median')"),
    ({"sts_dir": "a", "sick_file": "b"}, "argument --sick-file: not allowed with argument --sts-dir"),
    ({"race_alpha": 2.0}, "--race-alpha 2.0: must be in (0, 1)"),
])
def test_bad_options_are_input_errors_before_anything_runs(given, message, tmp_path):
    with pytest.raises(sentsweep.InputError) as raised:
        sentsweep.run("tsdae_deletion", output_dir=str(tmp_path / "out"), **given)
    assert str(raised.value) == message
    assert not (tmp_path / "out").exists()


def test_the_command_line_prints_the_line_sentsweep_run_raises(tmp_path):
    """A ratio of -1 and a missing STS folder: `sentsweep.run` raises the InputError whose message the command line
    prints as its one line, exit code 2; nothing is written (no store, no output folder)."""
    store, out = tmp_path / "mlflow.db", tmp_path / "out"
    cases = [({"ratios": [-1]}, ["--ratios", "-1"], "setting noise_ratio=-1.0 is out of range: must be >= 0"),
             ({"sts_dir": str(tmp_path / "missing")}, ["--sts-dir", str(tmp_path / "missing")],
              f"STS folder not found: {tmp_path / 'missing'}")]
    for keywords, flags, message in cases:
        with pytest.raises(sentsweep.InputError) as raised:
            sentsweep.run("tsdae_deletion", quick=True, tracking_uri=f"sqlite:///{store}", output_dir=str(out),
                          **keywords)
        assert str(raised.value) == message
        printed = io.StringIO()
        with redirect_stderr(printed):
            code = sentsweep.run_sweep(sentsweep.get_experiment("tsdae_deletion"),
                                       ["--quick", *flags, "--tracking-uri", f"sqlite:///{store}", "--output-dir",
                                        str(out)])
        assert (code, printed.getvalue()) == (2, f"error: {message}\n")
    assert not store.exists() and not out.exists()


def test_every_option_has_a_keyword():
    names = [spec.name for spec in SweepOptions.__dataclass_fields__.values()]
    argv = keyword_argv(SweepOptions, {name if name != "assignments" else "set": None for name in names})
    assert argv == []


# --- the public API ---------------------------------------------------------------------------------------------

def test_import_sentsweep_loads_neither_torch_nor_ray():
    script = "import sys, sentsweep; print(sorted(m for m in ('torch', 'ray', 'mlflow') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                            cwd=ROOT, env=os.environ | {"PYTHONPATH": str(ROOT)})
    assert (result.returncode, result.stdout) == (0, "[]\n"), result.stderr


def test_every_public_name_resolves_with_a_docstring_and_is_declared_for_the_reference():
    """Each name of `__all__` is its module's object, documented; the TYPE_CHECKING imports (what the API
    reference and type checkers read) name the same objects."""
    tree = ast.parse((ROOT / "sentsweep" / "__init__.py").read_text(encoding="utf-8"))
    declared = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            declared.update({alias.asname or alias.name: (node.module, alias.name) for alias in node.names})
    declared.pop("annotations"), declared.pop("TYPE_CHECKING")
    assert declared == sentsweep._PUBLIC and sentsweep.__all__ == list(sentsweep._PUBLIC)
    undocumented = [name for name in sentsweep.__all__ if not (getattr(sentsweep, name).__doc__ or "").strip()]
    assert not undocumented
    assert sentsweep.run.__module__ == "sentsweep.api" and sentsweep.task.__name__ == "register"
    with pytest.raises(AttributeError, match="no attribute 'runn'"):
        sentsweep.runn  # noqa: B018


PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


IMPORT_LINE = re.compile(r"^\s*(?:from|import)\s+(sentsweep\.[\w.]+)", re.M)


def private_imports(source: str) -> list[str]:
    """The `sentsweep.x...` modules a piece of Python imports (only `sentsweep` itself is public); of a sketch that
    does not parse (`...` for arguments), its import lines."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return IMPORT_LINE.findall(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sentsweep."):
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.startswith("sentsweep.")]
    return found


def test_the_private_import_check_finds_one():
    assert private_imports("import sentsweep\nfrom sentsweep import run\n") == []
    assert private_imports("from sentsweep.sweep import run_sweep\nimport sentsweep.data as d\n") == [
        "sentsweep.sweep", "sentsweep.data"]
    assert private_imports("from sentsweep.sweep import run_sweep\nrun_sweep(a=1, ...)\n") == ["sentsweep.sweep"]


def test_examples_and_docs_snippets_import_public_names_only():
    sources = {path: path.read_text(encoding="utf-8") for path in sorted((ROOT / "examples").glob("*.py"))}
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for number, block in enumerate(PYTHON_BLOCK.findall(page.read_text(encoding="utf-8")), 1):
            sources[f"{page.name}, Python block {number}"] = block
    assert len(sources) > 5
    found = {str(where): modules for where, source in sources.items() if (modules := private_imports(source))}
    assert not found, f"private modules imported (use `import sentsweep` and its public names): {found}"


# --- notebook progress ------------------------------------------------------------------------------------------

class FakeShell:
    config = {"IPKernelApp": {"connection_file": "kernel.json"}}


class FakeTrial:
    def __init__(self, trial_id: str, status: str, result: dict | None = None) -> None:
        self.trial_id, self.status, self.config, self.last_result = trial_id, status, {"pooling": "mean"}, result


def test_in_a_notebook_each_stage_shows_one_notebook_bar(monkeypatch):
    from sentsweep.sweep.execution.notebook_progress import NotebookProgress, SweepProgress, in_notebook, stage_progress

    assert not in_notebook()
    assert type(stage_progress("s", ["pooling"], "best_sts_dev", 30.0)) is SweepProgress
    monkeypatch.setitem(sys.modules, "IPython", type(sys)("IPython"))
    sys.modules["IPython"].get_ipython = FakeShell
    assert in_notebook()
    progress = stage_progress("tsdae_deletion", ["pooling"], "best_sts_dev", 30.0)
    assert isinstance(progress, NotebookProgress)
    progress.setup(total_num_samples=2)
    trials = [FakeTrial("a", "TERMINATED", {"done": True}), FakeTrial("b", "RUNNING")]
    progress.on_trial_result(0, trials, trials[0], {"best_sts_dev": 57.5})
    progress.on_step_end(0, trials)
    bar = progress._bar
    assert (bar.n, bar.total) == (1, 2)
    assert bar.postfix == ("1 finished, 1 running, 0 pending, 0 failed; best best_sts_dev 57.50 (mean of 1): "
                           "pooling=mean")
    progress.on_experiment_end(trials)
    assert progress._bar is None


# --- a sweep from Python ----------------------------------------------------------------------------------------

INTERRUPTED_DRIVER = textwrap.dedent("""
    import json, sys, sentsweep
    result = sentsweep.run("tsdae_deletion", **json.loads(sys.argv[1]))
    print("STATUS:", json.dumps(result.status.__dict__))
""")


@pytest.mark.slow  # two sweeps of 2 trials of 4 steps: one stopped by Ctrl-C after its first trial, then resumed
def test_a_sweep_from_python_returns_its_result_and_its_resume_call(tmp_path, shared_ray):
    import ray
    from mlflow.tracking import MlflowClient

    uri = sqlite_store(tmp_path)
    options = QUICK | {"tracking_uri": uri, "output_dir": str(tmp_path / "out")}
    stopped = subprocess.run([sys.executable, "-c", INTERRUPTED_DRIVER, json.dumps(options)], capture_output=True,
                             text=True, timeout=600, cwd=tmp_path, start_new_session=True,
                             env=driver_environment({"RAY_ADDRESS": shared_ray, "SENTSWEEP_FAULT": "trial:0:INT",
                                                     "PYTHONPATH": str(ROOT)}))
    lines = [line for line in stopped.stdout.splitlines() if line.startswith("STATUS:")]
    assert stopped.returncode == 0 and lines, stopped.stdout + stopped.stderr
    status = json.loads(lines[0].removeprefix("STATUS: "))
    assert (status["state"], status["exit_code"]) == ("interrupted", 130)
    assert status["reason"].startswith("interrupted: ") and "resume with:" in status["reason"]
    assert status["resume"] == ("sentsweep.run('tsdae_deletion', " + ", ".join(
        f"{name}={value!r}" for name, value in options.items()) + ", resume=True)")
    assert status["resume_command"].startswith("sentsweep run tsdae_deletion --quick --ratios 0.6 --poolings mean")
    assert status["resume_command"].endswith(" --resume")

    try:  # the resume call, in this process (a notebook's)
        result = sentsweep.run("tsdae_deletion", **options, resume=True)
    finally:
        ray.shutdown()
    assert result.status == sentsweep.SweepStatus("finished", 0)
    client = MlflowClient(tracking_uri=uri)
    sweeps = client.search_runs([client.get_experiment_by_name("tsdae_deletion").experiment_id], "tags.role = 'sweep'")
    assert [run.info.run_id for run in sweeps] == [result.sweep_run_id]
    # the call's command, recorded as a command line's: `sentsweep rerun` finds the experiment and parses the options
    from sentsweep.sweep_rerun import definition_of, recorded_run, with_tracking_uri
    from sentsweep.tracking.command_record import COMMAND_TAG

    argv = keyword_argv(sentsweep.get_experiment("tsdae_deletion").options, options | {"resume": True})
    command = json.loads(sweeps[0].data.tags[COMMAND_TAG])
    assert command == {"argv": ["sentsweep", "run", "tsdae_deletion", *argv], "options_argv": argv,
                       "entry_point": "sentsweep run tsdae_deletion", "script": "", "experiment": "tsdae_deletion",
                       "cwd": os.getcwd()}
    assert recorded_run(uri, result.sweep_run_id)[1] == command
    rerun_options = parse_options(definition_of(command).options, with_tracking_uri(command["options_argv"], uri))
    assert (rerun_options.ratios, rerun_options.seeds, rerun_options.tracking_uri) == ((0.6,), "2", uri)
    trials = client.search_runs([sweeps[0].info.experiment_id], f"tags.sweep_run_id = '{result.sweep_run_id}'")
    assert sorted(result.runs["run_id"]) == sorted(run.info.run_id for run in trials)
    assert len(trials) == 2 and {run.data.tags["seed"] for run in trials} == {"0", "1"}
    table = result.tables["deletion_ratio x pooling"]
    for metric in ("best_sts_dev", "sts_test_at_best_dev"):
        values = [run.data.metrics[metric] for run in trials]
        cell = table[table["metric"] == metric].iloc[0]
        assert (cell["noise_ratio"], cell["pooling"], cell["n"]) == (0.6, "mean", 2)
        assert cell["mean"] == pytest.approx(sum(values) / 2)
        assert cell["std"] == pytest.approx(abs(values[0] - values[1]) / 2 ** 0.5)
        assert result.best.metrics[metric]["mean"] == pytest.approx(sum(values) / 2)
    assert result.best.values == {"noise_ratio": 0.6, "pooling": "mean"}
    assert len(result.models) == 2 and sorted(result.models) == sorted(
        f"runs:/{run.info.run_id}/model" for run in trials if "logged_model_id" in run.data.tags)
    assert result.mlflow_url.endswith(f"/runs/{result.sweep_run_id}?workflowType=machine_learning")
    assert list(result.targets.columns)[:3] == ["cell", "metric", "published"] and len(result.targets) == 11
    assert "mean ± std over seeds" in result.output


# --- the API reference ------------------------------------------------------------------------------------------

def docs_hook():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_docs_build_refuses_a_public_name_without_a_docstring(tmp_path):
    """docs/hooks.py fails the (strict) docs build on a name of `__all__` without a docstring, read as the API
    reference reads it; sentsweep's every public name has one."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent('''
        """A package."""
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from pkg.inner import bare, documented
        __all__ = ["documented", "bare"]
    '''))
    (package / "inner.py").write_text('def documented():\n    """Says what it does."""\n\n\ndef bare():\n    pass\n')
    hook = docs_hook()
    assert hook.undocumented_public_names("pkg", [str(tmp_path)]) == ["bare"]
    assert hook.undocumented_public_names("sentsweep", [str(ROOT)]) == []
    with pytest.raises(hook.PluginError, match=r"the public name\(s\) bare of"):
        hook.refuse_undocumented("pkg", [str(tmp_path)])
