"""docs/performance.md shows each benchmark's figures as the benchmark wrote them: `benchmarks.run_all --record`
writes docs/benchmarks/<name>.md, and the page includes those records (pymdownx.snippets), so a figure on the page
is always one a command printed."""

import re
import subprocess
import sys
from pathlib import Path

from benchmarks.record import printed_output, record_text, write_record
from benchmarks.run_all import BENCHMARKS

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "performance.md"
INCLUDE = re.compile(r'^--8<-- "benchmarks/(?P<name>[\w]+)\.md"$', re.M)


def test_a_record_holds_the_command_the_machine_the_rows_and_what_was_printed(tmp_path):
    with printed_output() as printed:
        print("3 configs, 5 seeds")
    row = "| a | 1.0 | 2.0 | u | r | **0.50x** |  |"
    path = write_record(tmp_path / "records", "racing", "x86_64, 2 CPU cores", [row], printed.copy.getvalue())
    assert path == tmp_path / "records" / "racing.md"
    assert path.read_text(encoding="utf-8") == (
        "Written by `python -m benchmarks.run_all --only racing --record docs/benchmarks` on x86_64, 2 CPU cores.\n\n"
        "| benchmark | ours | reference | unit | reference is | ratio | goal |\n|---|---|---|---|---|---|---|\n"
        "| a | 1.0 | 2.0 | u | r | **0.50x** |  |\n\nWhat it printed:\n\n```text\n3 configs, 5 seeds\n```\n")


def test_a_record_without_rows_or_output_leaves_those_parts_out():
    assert record_text("bm25", "m", [], "") == (
        "Written by `python -m benchmarks.run_all --only bm25 --record docs/benchmarks` on m.\n")


def test_the_page_includes_only_records_of_known_benchmarks_each_written_by_its_command():
    names = INCLUDE.findall(PAGE.read_text(encoding="utf-8"))
    assert len(names) >= 5 and set(names) <= set(BENCHMARKS)
    for name in names:
        record = (ROOT / "docs" / "benchmarks" / f"{name}.md").read_text(encoding="utf-8")
        assert record.startswith(f"Written by `python -m benchmarks.run_all --only {name} --record docs/benchmarks`")


def test_a_record_folder_that_is_a_file_is_refused_before_any_benchmark_runs(tmp_path):
    not_a_folder = tmp_path / "records"
    not_a_folder.write_text("")
    done = subprocess.run([sys.executable, "-m", "benchmarks.run_all", "--only", "bm25", "--record", str(not_a_folder)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].endswith(f"error: --record {not_a_folder}: not a folder")
    assert not done.stdout
