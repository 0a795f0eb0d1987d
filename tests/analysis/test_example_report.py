"""docs/example_report.md and its plot are what the code writes from the runs they were made of
(`python scripts/example_report.py`), and the report accounts for each run; the plot's legend lists only lines with
data and lies outside the axes."""

import importlib.util
from pathlib import Path

import pytest
from matplotlib.testing.compare import compare_images

from sentsweep.analysis.plots import metric_figure
from sentsweep.analysis.report import run_account

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def load_script():
    spec = importlib.util.spec_from_file_location("example_report", ROOT / "scripts" / "example_report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = load_script()


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    assert SCRIPT.main(["--output-dir", str(folder)]) == 0
    return folder


def test_the_committed_example_report_is_what_the_code_writes(written):
    """Regenerate with `python scripts/example_report.py` (the runs again: `make report`) where this fails."""
    assert (written / "example_report.md").read_text(encoding="utf-8") == \
        (DOCS / "example_report.md").read_text(encoding="utf-8")
    assert compare_images(str(DOCS / "example_report_plot.png"), str(written / "example_report_plot.png"),
                          tol=0) is None


def test_the_report_accounts_for_every_run_of_the_csv(written):
    runs = SCRIPT.read_runs(SCRIPT.RUNS_CSV)
    account = run_account(runs, "sts_test_at_best_dev", "w")
    assert account.total == len(runs) == account.in_table + sum(account.left_out.values())
    assert account.unset > 0 and account.unset_stages == ("Table 6.10 rows",)  # stage 1: no w, shown all the same
    text = (written / "example_report.md").read_text(encoding="utf-8")
    assert f"from {len(runs)} trial runs in MLflow (experiment `nm_weight`): {account.text('w')}." in text


def test_the_legend_lists_lines_with_data_only_and_lies_outside_the_axes():
    runs = SCRIPT.read_runs(SCRIPT.RUNS_CSV)
    figure = metric_figure(runs, "w", "sts_test_at_best_dev", ["method", "pooling"], log_x=True)
    figure.canvas.draw()
    [axes] = figure.axes
    [legend] = figure.legends
    labels = [text.get_text() for text in legend.get_texts()]
    drawn = {line.get_label(): line for line in axes.get_lines()}
    assert labels and set(labels) == set(drawn)
    assert all(len(drawn[label].get_xdata()) > 0 for label in labels)
    assert any(label.endswith("(no w)") for label in labels)  # stage 1's methods: dashed lines, not dropped
    renderer = figure.canvas.get_renderer()
    assert not legend.get_window_extent(renderer).overlaps(axes.get_window_extent(renderer))
