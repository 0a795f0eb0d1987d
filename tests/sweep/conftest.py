"""Fixtures shared by the sweep package's tests."""

import pytest
import ray

from tests.sweep.test_sweep_end_to_end import load_sweep


@pytest.fixture()
def run_quick(tmp_path, monkeypatch, capsys):
    """`run(*extra)`: the quick TSDAE sweep's script run in-process with `extra` options, giving its exit code and
    stderr; on teardown it checks that nothing started or was written (no Ray, no store, no output folder)."""
    monkeypatch.chdir(tmp_path)
    module = load_sweep()

    def run(*extra):
        code = module.run_sweep(module.DEFINITION, ["--quick", "--output-dir", str(tmp_path / "out"), *extra])
        return code, capsys.readouterr().err

    yield run
    assert not ray.is_initialized()
    assert not (tmp_path / "mlflow.db").exists()
    assert not (tmp_path / "out").exists()  # not even the tiny model was built
