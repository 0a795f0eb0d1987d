"""Models named on the hub, resolved on the driver before launch (sentsweep.hub): refused at once, in one line,
where they cannot be had; loaded by every trial from the cache's local folder, with the hub unreachable."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sentsweep.errors import InputError
from sentsweep.hub import hub_model_folder, is_hub_name
from tests.helpers.cluster_helpers import sqlite_store

ROOT = Path(__file__).resolve().parents[1]
UNREACHABLE_HUB = "http://127.0.0.1:9"  # the discard port: connections are refused at once
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def put_in_hub_cache(cache: Path, name: str, model_folder: Path) -> Path:
    """A snapshot of `model_folder` as the hub client stores one: models--<org>--<name>/refs/main naming a commit,
    snapshots/<commit>/ holding the files."""
    repository = cache / ("models--" + name.replace("/", "--"))
    (repository / "refs").mkdir(parents=True)
    (repository / "refs" / "main").write_text(COMMIT)
    snapshot = repository / "snapshots" / COMMIT
    shutil.copytree(model_folder, snapshot)
    return snapshot


def without_hub(**extra) -> dict:
    """The environment of a machine whose hub is unreachable, with the hub client left online (it tries)."""
    environment = {key: value for key, value in os.environ.items() if key != "HF_HUB_OFFLINE"}
    return environment | {"HF_ENDPOINT": UNREACHABLE_HUB, "RAY_USAGE_STATS_ENABLED": "0"} | extra


def test_hub_names_and_paths_are_told_apart(tmp_path):
    assert is_hub_name("bert-base-uncased") and is_hub_name("sentence-transformers/all-MiniLM-L6-v2")
    assert not is_hub_name(str(tmp_path)) and not is_hub_name("./model") and not is_hub_name("a/b/c")


def test_a_cached_model_resolves_to_its_snapshot_folder_without_the_hub(tmp_path, tiny_model_dir, monkeypatch):
    snapshot = put_in_hub_cache(tmp_path, "lab/tiny-bert", tiny_model_dir)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert Path(hub_model_folder("lab/tiny-bert", str(tmp_path))) == snapshot
    with pytest.raises(InputError, match="model 'lab/other' is not in the hub cache .* and HF_HUB_OFFLINE is set"):
        hub_model_folder("lab/other", str(tmp_path))


def test_a_hub_model_that_cannot_be_had_fails_before_ray_starts_in_one_line(tmp_path):
    """No hub (HF_ENDPOINT on a closed port) and an empty cache: exit 2 with one line naming the model, no traceback,
    and nothing started (no Ray session, no MLflow store)."""
    started = time.monotonic()
    completed = subprocess.run(
        [sys.executable, "sweeps/tsdae_deletion.py", "--model", "bert-base-uncasd", "--max-steps", "1",
         "--corpus", "sentsweep/demo_data/corpus.txt", "--sts-dir", "sentsweep/demo_data",  # data, named: a real run
         "--output-dir", str(tmp_path / "out"), "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}"],
        cwd=ROOT, env=without_hub(HF_HUB_CACHE=str(tmp_path / "hub")), capture_output=True, text=True, timeout=300)
    elapsed = time.monotonic() - started
    assert completed.returncode == 2, completed.stderr
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: model 'bert-base-uncasd' cannot be fetched: the Hugging "
                                                   "Face hub is unreachable"), completed.stderr
    assert "Traceback" not in completed.stderr + completed.stdout
    assert not (tmp_path / "out" / "ray").exists()
    print(f"refused in {elapsed:.1f} s")  # the imports before the check, then one refused connection


@pytest.mark.slow
def test_every_trial_loads_a_cached_hub_model_with_the_hub_unreachable(tmp_path, tiny_model_dir):
    cache = tmp_path / "hub"
    snapshot = put_in_hub_cache(cache, "lab/tiny-bert", tiny_model_dir)
    uri = sqlite_store(tmp_path)
    completed = subprocess.run(
        [sys.executable, "sweeps/tsdae_deletion.py", "--quick", "--model", "lab/tiny-bert", "--seeds", "2",
         "--ratios", "0.6", "--poolings", "mean", "--output-dir", str(tmp_path / "out"), "--tracking-uri", uri],
        cwd=ROOT, env=without_hub(HF_HUB_CACHE=str(cache)), capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, completed.stderr[-3000:]
    from sentsweep.analysis.runs import fetch_trial_runs

    runs = fetch_trial_runs(uri, "tsdae_deletion")
    assert len(runs) == 2 and set(runs["status"]) == {"FINISHED"}
    assert set(runs["params.model"]) == {str(snapshot)}
