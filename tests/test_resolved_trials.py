"""Every trial's resolved settings, as the runner hands them to Ray Tune (no training): each method's values are
the ones its seed gives. Each test names the seed line it checks ("002 l.259": line 259 of
../shared/seeds/002_*.txt)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentsweep.experiments import get_experiment
from sentsweep.sweep.launcher import TINY_MODEL_PENDING, resolve_settings, stage_axes
from sentsweep.sweep.options import parse_options
from sentsweep.sweep.trials import trial_configs
from sentsweep.trainables.catalog import validate_config


def resolved_trials(name: str, *options: str) -> list:
    """The typed `Trial` of every trial of the sweep `name` run with `options`, in the runner's order."""
    definition = get_experiment(name)
    args = parse_options(definition.options, ["--dry-run", *options])
    resolved = resolve_settings(definition, args)
    return [validate_config({"model": TINY_MODEL_PENDING} | config)
            for _, config in trial_configs(resolved, stage_axes(definition, args))]


def write_corpus(sentences: int) -> Path:
    """A corpus of `sentences` distinct lines in the working (scratch) folder."""
    path = Path(f"corpus-{sentences}.txt").resolve()
    path.write_text("".join(f"sentence number {i}\n" for i in range(sentences)))
    return path


@pytest.fixture(autouse=True)
def _scratch_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def test_nm_weight_runs_tsdae_alone_as_table_6_10s_replication_row():
    """000 l.1290 (§5.4.1, "TSDAE (repr.)" of Table 6.10, l.1551): "100K training steps with a batch size of 8,
    the AdamW optimizer with a constant learning rate of 3e-5, no warm-up period, and a weight decay of 0.0";
    deletion 60%, tied. The other rows, §5.4.2's combinations (l.1298: "12.5K steps with a batch size of 64 and a
    learning rate of 3e-5"), keep §5.1's schedule (l.1236: 10% warm-up, linear decay, weight decay 0.01)."""
    trials = resolved_trials("nm_weight")
    assert len(trials) == (8 + 16) * 3
    tsdae = [trial for trial in trials if trial.method == "tsdae"]
    assert {trial.settings.pooling for trial in tsdae} == {"cls", "mean"} and len(tsdae) == 2 * 3
    for trial in tsdae:
        training = trial.training
        assert (training.max_steps, training.batch_size, training.lr, training.optimizer) == (100_000, 8, 3e-5,
                                                                                             "adamw")
        assert (training.lr_schedule, training.warmup(1_000), training.weight_decay) == ("constant", 0, 0.0)
        noise = trial.objectives["tsdae"]
        assert (noise.noise_type, noise.noise_ratio, noise.tie_decoder) == ("delete", 0.6, True)
    for trial in trials:
        if trial.method != "tsdae":
            training = trial.training
            assert (training.max_steps, training.batch_size, training.lr) == (12_500, 64, 3e-5), trial.method
            assert (training.lr_schedule, training.warmup_ratio, training.weight_decay) == ("linear", 0.1, 0.01)


def test_nm_weight_evaluates_after_each_epoch_and_keeps_the_best_dev_spearman():
    """000 l.1240 (§5.1): "After each epoch, we evaluate our models and take the model with the best Spearman"."""
    for trial in resolved_trials("nm_weight"):
        assert trial.training.eval_steps is None  # the loop's interval is then one epoch
        assert trial.training.evaluation_interval(64_000) == trial.training.steps_per_epoch(64_000)
        assert trial.evaluation.select_checkpoint == "best_sts_dev"


def test_sample_size_trains_each_method_at_its_own_settings_for_10_epochs():
    """002 l.259 (§7.1): "with 10 epochs up to 100k training steps. The models are evaluated at the end of each
    epoch and the best score on the development set is reported"; per method App. B (l.364: TSDAE 3e-5, batch 8;
    CT RMSProp 1e-5, segmented, mean pooling; SimCSE batch 512, 5e-5, linear layer on CLS) and §5.2 (l.144: MLM
    batch 8, 5e-5, mean pooling; the rest Devlin et al.'s, linear decay) and SimCSE's code (linear decay)."""
    trials = resolved_trials("sample_size", "--corpus", str(write_corpus(70_000)))
    assert len(trials) == 4 * 10 * 5
    own = {"tsdae": (3e-5, 8, "adamw", "constant", "cls"), "mlm": (5e-5, 8, "adamw", "linear", "mean"),
           "ct": (1e-5, 8, "rmsprop", "ct_segments", "mean"), "simcse": (5e-5, 512, "adamw", "linear", "cls_linear")}
    for trial in trials:
        training = trial.training
        assert (training.lr, training.batch_size, training.optimizer, training.lr_schedule,
                trial.settings.pooling) == own[trial.method]
        assert (training.epochs, training.max_steps, training.eval_steps) == (10, 100_000, None)
        assert trial.evaluation.select_checkpoint == "best_sts_dev"
    assert sorted({trial.training.sample_size for trial in trials}) == [2**k for k in range(7, 17)]


def test_tsdae_main_runs_each_baseline_at_the_setup_its_seed_points_to():
    """002 App. B (l.364, l.366): TSDAE and CT 100K steps at batch 8, the last checkpoint ("we do not use
    early-stopping ... a fixed number of training steps"); SimCSE 1 epoch at batch 512, 5e-5, keeping "early-stopping
    on the STS-B development set" (fn. 8, l.366), scored often enough to act within the epoch; MLM at §5.2's
    (l.144) 100K steps, batch 8, 5e-5, and otherwise "the original setup in Devlin et al." (outside the seeds: 10K
    warm-up steps, linear decay, weight decay 0.01)."""
    trials = resolved_trials("tsdae_main", "--corpus", str(write_corpus(100_000)))
    assert len(trials) == 4 * 5
    by_method = {trial.method: trial for trial in trials}
    for method in ("tsdae", "ct"):
        training = by_method[method].training
        assert (training.max_steps, training.epochs, training.batch_size) == (100_000, None, 8)
        assert by_method[method].evaluation.select_checkpoint == "last"
    assert by_method["tsdae"].training.lr_schedule == "constant"
    assert (by_method["ct"].training.optimizer, by_method["ct"].training.lr_schedule) == ("rmsprop", "ct_segments")

    simcse = by_method["simcse"]
    assert (simcse.training.epochs, simcse.training.batch_size, simcse.training.lr) == (1, 512, 5e-5)
    assert simcse.evaluation.select_checkpoint == "best_sts_dev"
    one_epoch = simcse.training.total_steps(100_000)
    assert one_epoch == 196 and simcse.training.evaluation_interval(100_000) < one_epoch

    mlm = by_method["mlm"].training
    assert (mlm.max_steps, mlm.batch_size, mlm.lr) == (100_000, 8, 5e-5)
    assert (mlm.warmup(100_000), mlm.lr_schedule, mlm.weight_decay) == (10_000, "linear", 0.01)
    assert by_method["mlm"].evaluation.select_checkpoint == "last"


def test_sample_size_keeps_section_7_1s_selection_for_simcse_too():
    """002 l.259 (§7.1): "evaluated at the end of each epoch and the best score on the development set is
    reported", for every method: SimCSE's one epoch and 125-step interval of the main protocol do not apply."""
    simcse = [trial for trial in resolved_trials("sample_size") if trial.method == "simcse"]
    assert {(trial.training.epochs, trial.training.eval_steps) for trial in simcse} == {(10, None)}


def test_cross_bi_encoder_trains_teacher_and_bi_encoder_three_epochs_on_gold_only():
    """000 l.1250 (§5.2.1): "Both models are fine-tuned for three epochs on the STS-B train split"; l.1236
    (§5.1): lr 2e-5, batch 16, 10% warm-up, linear decay, weight decay 0.01; l.1240: evaluated after each
    epoch, the best kept. Table 6.2 (l.1395-1398): the CE without activation, with sigmoid and with tanh;
    Table 6.3 (l.1410-1413): CE and CBE."""
    trials = resolved_trials("cross_bi_encoder")
    assert len(trials) == (2 + 2) * 3
    assert {(t.settings.teacher, t.settings.teacher_activation) for t in trials} == {
        ("ce", "sigmoid"), ("cbe", "sigmoid"), ("ce", "none"), ("ce", "tanh")}
    for trial in trials:
        training, settings = trial.training, trial.settings
        assert (training.epochs, training.max_steps, settings.teacher_epochs) == (3, None, 3)
        assert (training.lr, settings.teacher_lr, training.batch_size, settings.teacher_batch_size) == (
            2e-5, 2e-5, 16, 16)
        assert (training.lr_schedule, training.warmup_ratio, training.weight_decay) == ("linear", 0.1, 0.01)
        assert (settings.setting, settings.sampling, settings.reannotate_gold) == ("semi", "none", False)
        assert (trial.evaluation.select_checkpoint, training.eval_steps) == ("best_sts_dev", None)
        assert settings.teacher_checkpoint == "best_dev"
    assert len(resolved_trials("cross_bi_encoder", "--no-activations")) == 2 * 3
