"""docs/example_report.md and its plot, regenerated from the trial runs of a quick NM-weight sweep (`make report`).

    python scripts/example_report.py             # the report from docs/example_report_runs.csv (seconds)
    python scripts/example_report.py --rerun     # first the quick sweep again (minutes), its runs into that CSV
    python scripts/example_report.py --runs-from sqlite:///mlflow.db   # the runs of a quick sweep run before

The runs of `python sweeps/nm_weight.py --quick` are kept as a CSV (the frame of
`sentsweep.analysis.runs.fetch_sweep_runs`: one row per trial run, its params, metrics and tags), so that the report
is written again in seconds by the code as it is: tests/analysis/test_example_report.py runs this script and compares
what it
writes with docs/, so the example cannot drift from the code. The reproduction targets are the experiment's own
(`SweepDefinition.published`), which its sweep logs on its MLflow run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pandas as pd

from sentsweep.analysis.report import ReportRequest, write_report
from sentsweep.analysis.runs import fetch_sweep_runs
from sentsweep.experiments import get_experiment

ROOT = Path(__file__).resolve().parents[1]
RUNS_CSV = ROOT / "docs" / "example_report_runs.csv"
REPORT = "example_report.md"
EXPERIMENT = "nm_weight"
# as `sentsweep analyze report --experiment nm_weight --rows method pooling --columns w --lines method pooling --log-x`
REQUEST = dict(experiment=EXPERIMENT, rows=("method", "pooling"), columns="w", metric="sts_test_at_best_dev",
               lines=("method", "pooling"), log_x=True)
FIXED_COLUMNS = ["run_id", "status", "seed", "config_hash"]


def rerun(work: Path) -> str:
    """The quick sweep again into a store of its own under `work` (made here: the sweep refuses a store whose folder
    does not exist); returns the store's URI."""
    work.mkdir(parents=True, exist_ok=True)
    uri = f"sqlite:///{work.resolve() / 'report.db'}"
    subprocess.run([sys.executable, str(ROOT / "sweeps" / f"{EXPERIMENT}.py"), "--quick", "--tracking-uri", uri,
                    "--output-dir", str(work)], check=True)
    return uri


def export_runs(uri: str, csv: Path) -> None:
    """The trial runs of the latest quick sweep of the store at `uri`, into `csv`."""
    runs = fetch_sweep_runs(uri, EXPERIMENT)
    columns = FIXED_COLUMNS + sorted(column for column in runs.columns if column not in FIXED_COLUMNS)
    runs.sort_values(["status", "seed", "config_hash"])[columns].to_csv(csv, index=False)


def read_runs(csv: Path) -> pd.DataFrame:
    """The runs as MLflow gives them: params and tags as text, metrics as numbers."""
    header = pd.read_csv(csv, nrows=0).columns
    return pd.read_csv(csv, dtype={column: str for column in header if not column.startswith("metrics.")},
                       keep_default_na=False, na_values={column: [""] for column in header})


def write(output_dir: Path, csv: Path = RUNS_CSV) -> Path:
    """The report (and its plot beside it) from the runs of `csv`; returns its path."""
    request = ReportRequest(output=str(output_dir / REPORT), **REQUEST)
    return write_report(read_runs(csv), request, get_experiment(EXPERIMENT).published)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rerun", action="store_true", help="run the quick sweep again first (minutes), its runs "
                        f"into {RUNS_CSV.relative_to(ROOT)}")
    parser.add_argument("--output-dir", type=Path, default=ROOT / "docs", help="where the report and its plot go "
                        "(default: docs/)")
    parser.add_argument("--runs-from", metavar="TRACKING_URI", help="take the runs of the latest nm_weight sweep "
                        "of this MLflow store (one of `python sweeps/nm_weight.py --quick`) into the CSV")
    args = parser.parse_args(argv)
    if args.rerun or args.runs_from:
        export_runs(args.runs_from or rerun(ROOT / "sweep_outputs" / "example_report"), RUNS_CSV)
    print(f"wrote {write(args.output_dir)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
