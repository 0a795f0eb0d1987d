"""docs/notebook.md runs as written: its Python cells, in order, in one namespace, as a notebook runs them (a tiny
sweep from Python with `sentsweep.run`, its tables, best configuration and runs, a table of one's own)."""

import ast
import re
from pathlib import Path

import pytest
import ray

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "notebook.md"
PYTHON_CELL = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def run_cell(source: str, namespace: dict):
    """Run a cell as a notebook does: its statements, then its last expression's value (what the cell shows)."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, str(PAGE), "exec"), namespace)
    return eval(compile(ast.Expression(last.value), str(PAGE), "eval"), namespace) if last else None


@pytest.mark.slow  # runs a sweep (2 trials of 4 steps)
def test_the_notebook_page_runs_a_sweep_and_reads_its_result(tmp_path, monkeypatch, capsys, shared_ray):
    text = PAGE.read_text(encoding="utf-8")
    cells = PYTHON_CELL.findall(text)
    assert len(cells) == 5
    monkeypatch.chdir(tmp_path)  # the page's sweep_outputs/ goes here
    namespace: dict = {}
    try:
        shown = [run_cell(cell, namespace) for cell in cells]
    finally:
        ray.shutdown()
    status, table, (best_values, best_dev), runs = shown[:4]
    assert (status.state, status.exit_code) == ("finished", 0)
    assert list(table["n"]) == [2, 2] and set(table["metric"]) == {"sts_test_at_best_dev", "best_sts_dev"}
    assert best_values == {"noise_ratio": 0.6, "pooling": "mean"} and best_dev["n"] == 2
    assert len(runs) == 2 and set(runs["status"]) == {"FINISHED"} and set(runs["seed"]) == {"0", "1"}
    assert list(runs.columns)[:2] == ["seed", "status"]
    assert best_dev["mean"] == pytest.approx(runs["metrics.best_sts_dev"].mean())
    header = text.split("```text\n", 1)[1].splitlines()[0]
    printed = capsys.readouterr().out
    assert header in printed  # the table the page shows is the one printed
    assert "untrained model" not in printed  # the sweep itself printed nothing: its output is the result's
