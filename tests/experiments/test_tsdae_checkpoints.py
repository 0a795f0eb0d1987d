"""`tsdae_checkpoints` (TSDAE App. C, Table 9): its card, its --checkpoint label and its targets, without training."""

from __future__ import annotations

import contextlib
import io

from sentsweep.experiments import get_experiment
from sentsweep.experiments.tsdae.tsdae_checkpoints import CHECKPOINTS, DEFINITION
from sentsweep.sweep import run_sweep


def dry_run(*options: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the sweep's --dry-run with `options` (argparse's refusals exit)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = run_sweep(get_experiment("tsdae_checkpoints"), ["--dry-run", *options])
        except SystemExit as exit_:
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


def test_the_card_runs_tsdae_ct_and_simcse_from_the_checkpoint_it_names():
    code, card, err = dry_run("--checkpoint", "RoBERTa-base", "--model", "roberta-base")
    assert code == 0, err
    assert "| 1 method | method | tsdae, ct, simcse | TSDAE App. C, Table 9 (TSDAE, CT, SimCSE; BERT-flow is not " \
           "implemented) |" in card
    assert "**Trials:** 3 grid points x 5 seeds = 15" in card
    assert "- --checkpoint names Table 9's block the run re-runs and --model its hub model (App. B, Table 8): " \
           "ELECTRA-base google/electra-base-discriminator;" in card
    assert "stage 'baselines'" not in card  # tsdae_main's note on a stage this sweep has not


def test_a_model_other_than_the_checkpoints_is_refused_in_one_line():
    code, out, err = dry_run("--checkpoint", "RoBERTa-base", "--model", "bert-base-uncased")
    assert code == 2 and out == ""
    assert err.strip() == ("error: --model 'bert-base-uncased' is not --checkpoint RoBERTa-base's model "
                           "'roberta-base' (TSDAE App. B, Table 8)")


def test_an_unknown_checkpoint_is_refused_by_the_command_line():
    code, out, err = dry_run("--checkpoint", "BERT-large", "--model", "bert-large-uncased")
    assert (code, out) == (2, "")
    assert "argument --checkpoint: invalid choice: 'BERT-large'" in err


def test_targets_are_table_9s_cells_of_every_checkpoint_method_and_task():
    targets = DEFINITION.published
    assert len(targets) == 5 * 3 * 4
    cells = {(t.params["checkpoint"], t.params["method"], t.params["target_task"]): t for t in targets}
    assert len(cells) == len(targets)
    electra = cells[("ELECTRA-base", "tsdae", "scidocs")]
    assert (electra.value, electra.metric, electra.runs) == (66.2, "scidocs_map", 5)
    assert electra.note == "Table 9 prints ± 5.6 over its 5 seeds"
    assert electra.setting == {"model": "google/electra-base-discriminator"}
    assert str(electra.source) == "TSDAE App. C, Table 9 (ELECTRA-base, tsdae)"
    assert {t.params["checkpoint"] for t in targets} == set(CHECKPOINTS)
    assert DEFINITION.data_labels["checkpoint"] == tuple(CHECKPOINTS)
