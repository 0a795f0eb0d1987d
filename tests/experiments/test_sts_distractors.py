"""`sts_distractors` (Malmberg 2021 Figs. 4.1-4.3): its card, its pool files as tasks, its refusals, without
training."""

from __future__ import annotations

import contextlib
import io
import json

from sentsweep.demo_data import DEMO_DIR
from sentsweep.experiments import get_experiment
from sentsweep.experiments.malmberg_2021.sts_distractors import DEFINITION, METRICS, POOL_TASKS, demo_pools
from sentsweep.sweep import run_sweep
from sentsweep.tasks import build_task


def dry_run(*options: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the sweep's --dry-run with `options` (argparse's refusals exit)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = run_sweep(get_experiment("sts_distractors"), ["--dry-run", *options])
        except SystemExit as exit_:
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


def test_the_card_runs_table_3_2s_models_and_asks_for_the_pools():
    code, card, err = dry_run()
    assert code == 0, err
    assert "| 1 TF-IDF | max_features | none, 1024 |" in card
    assert "| 2 SBERT on STS-B | dropout | 0.1, 0.3 | Malmberg 2021 Table 3.2 (SBERT, Mean, STS-B at dropout 0.1 and " \
           "0.3) |" in card
    assert "**Trials:** 2 + 2 grid points x 3 seeds = 12" in card
    assert "**Cannot run as given:** --pools-dir is required: the pool files of `sentsweep build-distractors` " \
           "(Figs. 4.1-4.3's data)" in card


def test_the_fifteen_pool_files_are_the_tasks_and_the_tables_columns(tmp_path):
    specs = demo_pools(DEMO_DIR / "sts-test.csv", tmp_path / "pools")
    assert sorted(path.name for path in (tmp_path / "pools").iterdir()) == sorted(POOL_TASKS.values())
    assert len(specs) == 15 and DEFINITION.table_metrics == METRICS == [f"{task}_top1" for task in POOL_TASKS]
    pool = json.loads((tmp_path / "pools" / "le3_5.jsonl").read_text().splitlines()[0])
    assert len(pool["candidates"]) == 6 and pool["candidates"][pool["positive"]]
    task = build_task("distractors_le3_5", specs["distractors_le3_5"])
    assert task.metric_key("top1") == "distractors_le3_5_top1"
    code, card, err = dry_run("--pools-dir", str(tmp_path / "pools"))
    assert code == 0, err
    assert "--pools-dir is required" not in card and "distractors_all_1" in card


def test_a_pools_folder_without_its_files_is_refused_in_one_line(tmp_path):
    (tmp_path / "all_1.jsonl").write_text("")
    code, out, err = dry_run("--pools-dir", str(tmp_path))
    assert (code, out) == (2, "")
    assert err.startswith(f"error: --pools-dir {tmp_path}: no all_2.jsonl, all_3.jsonl,")
    assert err.strip().endswith("le3_5.jsonl (write them with sentsweep build-distractors)")
    assert len(err.strip().splitlines()) == 1
