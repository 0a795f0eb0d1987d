"""`tsdae_initialisation` (TSDAE §8, Table 4): each row's resolved trials (no training), its refusals, its targets and
its place in `sentsweep list --coverage`. Seed lines: ../shared/seeds/002_*.txt."""

from __future__ import annotations

import contextlib
import io

import pytest

from sentsweep.experiments import experiment_names, get_experiment
from sentsweep.experiments.coverage import WITH_TARGETS, coverage
from sentsweep.experiments.tsdae.tsdae_initialisation import CHECKPOINTS, DEFINITION
from sentsweep.models import build_tiny_encoder_decoder
from sentsweep.sweep import run_sweep
from tests.experiments.test_resolved_trials import resolved_trials


@pytest.fixture(autouse=True)
def _scratch_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def dry_run(*options: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the sweep's --dry-run with `options` (argparse's refusals exit)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = run_sweep(get_experiment("tsdae_initialisation"), ["--dry-run", *options])
        except SystemExit as exit_:
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("row", "initialisation", "tie_decoder"), [
    ("BERT-base", "checkpoint", True), ("Scratch", "random", True), ("BART-base", "checkpoint", False),
    ("T5-base", "checkpoint", False)])
def test_each_row_trains_tsdae_at_the_main_protocols_settings_from_its_starting_point(row, initialisation,
                                                                                      tie_decoder):
    """TSDAE l.292 (§8): "we also further train BART-base and T5-base models with TSDAE"; "Compared with training
    from scratch". App. B l.364: "the number of training steps is 100K; the batch size is 8; the optimizers are
    AdamW ...; the initial learning rates are 3e-5"; §3 / App. A: deletion 0.6, CLS pooling; §5: 5 seeds."""
    trials = resolved_trials("tsdae_initialisation", "--checkpoint", row, "--keep-models", "none")
    assert len(trials) == 5 and sorted(trial.seed for trial in trials) == [0, 1, 2, 3, 4]
    for trial in trials:
        training, tsdae = trial.training, trial.objectives["tsdae"]
        assert trial.method == "tsdae" and trial.settings.pooling == "cls"
        assert (training.max_steps, training.batch_size, training.lr, training.optimizer) == (100_000, 8, 3e-5,
                                                                                             "adamw")
        assert (training.lr_schedule, training.weight_decay, trial.evaluation.select_checkpoint) == ("constant", 0.0,
                                                                                                    "last")
        assert (tsdae.noise_type, tsdae.noise_ratio) == ("delete", 0.6)
        assert (tsdae.initialisation, tsdae.tie_decoder) == (initialisation, tie_decoder)


def test_the_card_cites_the_row_it_runs():
    code, card, err = dry_run("--checkpoint", "Scratch", "--model", "bert-base-uncased")
    assert code == 0, err
    assert ("| 1 Scratch | initialisation | random | TSDAE §8, Table 4 (Scratch) (\"Compared with training from "
            "scratch (which is similar to Zhang et al. (2018))\"; BERT-base's architecture (project choice: the paper "
            "names none)) |") in card
    assert "**Trials:** 1 grid point x 5 seeds = 5" in card


def test_an_encoder_decoder_row_needs_keep_models_none():
    code, out, err = dry_run("--checkpoint", "BART-base", "--model", "facebook/bart-base")
    assert (code, out) == (2, "")
    assert err.strip() == ("error: --checkpoint BART-base keeps no model: give --keep-models none (its sentence "
                           "model, the checkpoint's encoder, is not one sentence-transformers reloads as trained)")


def test_a_model_of_the_wrong_kind_is_refused_in_one_line(tiny_model_dir, tmp_path):
    code, out, err = dry_run("--checkpoint", "T5-base", "--model", str(tiny_model_dir), "--keep-models", "none")
    assert (code, out) == (2, "")
    assert err.strip() == (f"error: --model {str(tiny_model_dir)!r} is no encoder-decoder, but --checkpoint "
                           "T5-base's model 't5-base' is one")
    bart = build_tiny_encoder_decoder(tmp_path / "bart", tiny_model_dir, "bart")
    code, out, err = dry_run("--checkpoint", "Scratch", "--model", str(bart))
    assert err.strip() == (f"error: --model {str(bart)!r} is an encoder-decoder, but --checkpoint Scratch's model "
                           "'bert-base-uncased' is not")
    code, out, err = dry_run("--checkpoint", "T5-base", "--model", "facebook/bart-base", "--keep-models", "none")
    assert err.strip() == ("error: --model 'facebook/bart-base' is not --checkpoint T5-base's model 't5-base' "
                           "(TSDAE App. B, Table 8)")


def test_targets_are_table_4s_cells_test_score_and_training_loss():
    """TSDAE l.284-287, Table 4: "BERT-base 59.4/2.2 14.5/3.4 73.0/2.4 74.0/2.8 55.2/2.7" ... "T5-base 45.6/1.0
    2.2/1.4 48.2/1.5 30.8/1.1 31.7/1.3"."""
    targets = DEFINITION.published
    assert len(targets) == 4 * 4 * 2
    cells = {(t.params["checkpoint"], t.params["target_task"], t.metric): t for t in targets}
    assert len(cells) == len(targets)
    scratch = cells[("Scratch", "cqadupstack", "cqadupstack_map_at_100")]
    assert (scratch.value, scratch.runs, scratch.setting) == (8.4, 5, {"model": "bert-base-uncased"})
    assert str(scratch.source) == "TSDAE §8, Table 4 (Scratch, CQADup., test performance)"
    loss = cells[("T5-base", "scidocs", "train_loss")]
    assert (loss.value, loss.setting) == (1.1, {"model": "t5-base"})
    assert str(loss.source) == "TSDAE §8, Table 4 (T5-base, SciDocs, training loss)"
    assert {t.params["checkpoint"] for t in targets} == set(CHECKPOINTS)


def test_coverage_counts_table_4_as_targeted_by_this_sweep():
    items = coverage({name: get_experiment(name) for name in experiment_names()})
    [table_4] = [item for item in items if (item.exhibit.document.label, item.exhibit.place) == ("TSDAE", "Table 4")]
    assert (table_4.status, table_4.sweeps) == (WITH_TARGETS, {"tsdae_initialisation": 32})
    without = coverage({name: get_experiment(name) for name in experiment_names() if name != "tsdae_initialisation"})
    [before] = [item for item in without if (item.exhibit.document.label, item.exhibit.place) == ("TSDAE", "Table 4")]
    assert before.sweeps == {}
