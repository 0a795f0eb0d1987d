"""Protocol cards (--dry-run): every sweep prints its grid, settings with sources, seeds, trials and steps,
without training or starting Ray; per-method settings reach the trials of their method only."""

import contextlib
import io
import json
import math
import shutil

import pytest
import ray
from ray.tune.search.variant_generator import generate_variants

from sentsweep.demo_data import DEMO_DIR
from sentsweep.experiments import experiment_names, get_experiment
from sentsweep.search_spaces.param_spaces import grid_param_space
from sentsweep.sweep import run_sweep
from sentsweep.sweep.search.trials import settings_by_method


def dry_run(name: str, *options: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run_sweep(get_experiment(name), ["--dry-run", *options])
    return code, out.getvalue(), err.getvalue()


def row(card: str, *cells: str) -> bool:
    """Whether the card has a table row starting with `cells` (the source may go on after them)."""
    prefix = "| " + " | ".join(cells)
    return any(line.startswith(prefix) for line in card.splitlines())


@pytest.mark.parametrize("name", experiment_names())
def test_every_sweep_prints_its_card_without_training(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, card, err = dry_run(name)
    assert code == 0, err
    for heading in ("# Protocol card", "## Grid", "## Settings of every trial", "**Seeds:**", "**Trials:**",
                    "**Training steps in all:**"):
        assert heading in card
    assert not ray.is_initialized()
    assert list(tmp_path.iterdir()) == []  # no MLflow database, no Ray results, no tiny model


def test_the_card_names_how_trials_are_scheduled_and_compared_and_which_values_the_command_line_gave():
    code, card, _ = dry_run("tsdae_deletion")
    assert code == 0
    assert row(card, "tables", "--alpha", "0.05", "project choice")
    assert row(card, "tables, race", "--correction", "holm", "project choice")
    assert row(card, "early stopping", "--scheduler", "fifo", "project choice")
    assert "| race |" not in card and "| GPU packing |" not in card  # neither a race nor a GPU asked for
    code, card, _ = dry_run("tsdae_deletion", "--scheduler", "asha")
    assert code == 0 and row(card, "early stopping", "grace_period", "2", "project choice")
    code, card, _ = dry_run("tsdae_deletion", "--race", "--race-tolerance", "0.7", "--alpha", "0.1",
                            "--gpus-per-trial", "0.5")
    assert code == 0
    assert row(card, "tables", "--alpha", "0.1", "command line |")
    assert row(card, "race", "--race-alpha", "0.2", "project choice (an elimination saves compute")
    assert row(card, "race", "--race-tolerance", "0.7", "command line |")
    assert row(card, "race", "--race-initial-seeds", "2", "project choice")
    assert row(card, "race", "--race-test", "pooled", "project choice")
    assert row(card, "GPU packing", "memory per trial", "measured peak x 1.25 + 1 GiB", "project choice")
    assert "| race | --race-rungs |" not in card and "| search | sampler |" not in card
    code, card, _ = dry_run("tsdae_deletion", "--race", "--race-schedule", "steps")
    assert code == 0 and row(card, "race", "--race-schedule", "steps", "command line |")
    assert row(card, "race", "--race-rungs", "1/9, 1/3", "project choice (successive halving's rungs")
    code, card, _ = dry_run("tsdae_deletion", "--race", "--race-schedule", "steps", "--race-rungs", "0.25")
    assert row(card, "race", "--race-rungs", "1/4", "command line |")
    code, card, _ = dry_run("tsdae_deletion", "--search", "optuna")
    assert code == 0 and row(card, "search", "sampler", "TPESampler(seed=0, n_startup_trials=10, n_ei_candidates=24, "
                                 "multivariate=True, group=False, constant_liar=True), Optuna 5.0.0",
                                 "project choice (Optuna 5.0's defaults")
    # a sampled axis: its range or choices and how it is drawn, never the domain object's repr
    assert row(card, "1 optuna", "noise_ratio", "sampled uniform from 0.1 to 0.9 |")
    assert row(card, "1 optuna", "pooling", "sampled from cls, mean, max |")
    code, card, _ = dry_run("multitask_weight", "--search", "optuna")
    assert code == 0 and row(card, "1 optuna", "w", "sampled log-uniform from 0.0001 to 0.1 |")
    assert " object at 0x" not in card


def test_multitask_card_carries_wang_2022_settings_with_sources():
    code, card, _ = dry_run("multitask_weight")
    assert code == 0
    assert row(card, "3 multi-task", "w", "0.1, 0.01, 0.001, 0.0001", "Wang 2022 §5.3.7")
    assert row(card, "1 SimCSE alone", "epochs", "1, 3", "Wang 2022 Table 5.16")
    assert row(card, "2 auto-encoders alone", "method", "clm_ae, mlm_ae", "Wang 2022 Table 5.16")
    assert row(card, "training", "warmup_steps", "910", "Wang 2022 §5.2.2, Table 5.3")
    assert row(card, "training", "max_seq_length", "32", "Wang 2022 §5.2.2, Table 5.3")
    assert row(card, "training", "epochs (swept)", "3", "Wang 2022 §5.3.7")
    assert row(card, "training", "eval_steps", "250", "Wang 2022 §5.2.2")
    assert row(card, "evaluation", "select_checkpoint", "validation_loss", "Wang 2022 §5.2.2")
    assert row(card, "unsupervised", "pooling", "mean", "Wang 2022 §5.2.2, Table 5.3")
    assert row(card, "training", "lr_schedule", "linear", "project choice")
    assert "**Seeds:** 1, 7, 42 (Wang 2022 §5.2.2" in card
    assert "**Trials:** 2 + 2 + 8 grid points x 3 seeds = 36" in card
    # The demo corpus is smaller than the 10k held-out validation sentences: the card says so.
    assert "**Cannot run as given:** validation_size 10000" in card


def test_tsdae_search_runs_untied_and_tries_tying_last():
    code, card, _ = dry_run("tsdae_noise")
    assert row(card, "3 pooling", "kept for the next stages", "pooling=cls", "--pooling-rule paper: TSDAE App. A")
    assert "kept for the next stages" not in dry_run("tsdae_noise", "--pooling-rule", "best_dev")[1]
    assert code == 0
    assert "greedy" in card
    assert row(card, "1 noise_type", "noise_type", "delete, swap, mask, replace, insert", "TSDAE App. A, Table 5")
    assert row(card, "4 tie_decoder", "tie_decoder", "false, true", "TSDAE App. A")
    assert row(card, "tsdae", "tie_decoder (swept)", "false", "TSDAE App. A, Tables 5-7")
    assert row(card, "tsdae", "noise_ratio (swept)", "0.3", "TSDAE App. A")
    assert row(card, "training", "max_steps", "30,000", "TSDAE App. A")
    assert "**Trials:** 5 + 9 + 3 + 2 grid points x 5 seeds = 95" in card
    assert "**Training steps in all:** 2,850,000" in card


def test_nm_card_marks_the_weight_grid_as_the_projects():
    code, card, _ = dry_run("nm_weight")
    assert code == 0
    assert row(card, "2 method x w x pooling", "w", "1, 0.1, 0.01, 0.001", "project choice (Table 6.10 has no w axis")
    assert row(card, "1 Table 6.10 rows", "method", "simcse, mlm+simcse, nm, tsdae", "Reiml 2023 §5.4.2, Table 6.10")
    assert row(card, "2 method x w x pooling", "method", "mlm+nm, tsdae+nm", "Reiml 2023 §5.4.2, Table 6.10")
    assert "**Trials:** 8 + 16 grid points x 3 seeds = 72" in card
    assert row(card, "training", "warmup_ratio", "0.1", "Reiml 2023 §5.1")
    assert row(card, "training", "weight_decay", "0.01", "Reiml 2023 §5.1")
    assert row(card, "training", "max_steps", "12,500", "Reiml 2023 §5.4.2")
    # Reiml 2023 §4.2.3 contradicts itself on the stop-gradient's side; the card says so and which reading runs (the
    # loss's behaviour: test_objectives' test_noise_matching_has_no_gradient_through_the_original_branch)
    assert "NM's stop-gradient: Reiml 2023 §4.2.3 contradicts itself" in card
    assert "Implemented: the stop-gradient on the original, the gradient flowing through the noised copy only" in card


def test_cards_cite_the_place_that_gives_each_corrected_value():
    """TSDAE (repr.) keeps its last checkpoint (Reiml 2023 §5.4.1 replicates TSDAE, App. B: no early stopping); the
    domain chain's MLM follows Reiml 2023 §5.1's defaults; §7.1's seeds are App. B's; topic F1 comes from a probe,
    said so."""
    _, card, _ = dry_run("nm_weight")
    assert row(card, "tsdae", "select_checkpoint", "last", "Reiml 2023 §5.4.1")
    _, card, _ = dry_run("domain_chain_augsbert")
    for setting, value in (("warmup_ratio", "0.1"), ("lr_schedule", "linear"), ("weight_decay", "0.01")):
        assert row(card, "mlm", setting, value, "Reiml 2023 §5.1")
    _, card, _ = dry_run("sample_size")
    assert "**Seeds:** 0, 1, 2, 3, 4 (TSDAE App. B (\"we report the scores averaged over 5 random seeds" in card
    assert row(card, "simcse", "max_seq_length", "32", "SimCSE official code")
    _, card, _ = dry_run("topic_distillation")
    assert "scored by a logistic-regression probe on the frozen encoder's embeddings" in card
    assert "The 36 F1 targets of Tables 6.14 and 6.16 stand" in card
    targets = get_experiment("topic_distillation").published
    assert len(targets) == 36 + 2 * 9 * 7  # Tables 6.15 and 6.17: nine rows, seven SentEval columns each


def test_main_protocol_runs_each_method_with_its_papers_settings():
    code, card, _ = dry_run("tsdae_main")
    assert code == 0
    assert row(card, "ct", "optimizer", "rmsprop", "TSDAE App. B")
    assert row(card, "ct", "lr_schedule", "ct_segments", "TSDAE App. B")
    assert row(card, "mlm", "lr", "5e-05", "TSDAE §5.2")
    assert row(card, "simcse", "pooling", "cls_linear", "TSDAE App. B")
    assert row(card, "evaluation", "select_checkpoint", "last", "TSDAE App. B")
    assert row(card, "simcse", "select_checkpoint", "best_sts_dev", "TSDAE App. B, fn. 8")
    assert row(card, "mlm", "warmup_steps", "10,000", "BERT App. A.2 (outside the seeds")
    # Table 2's USEB tasks, each column a model of its own task's corpus (TSDAE §4.1)
    assert "--eval-task NAME=PATH and its training sentences with --task-corpus NAME=PATH" in card


def test_steps_follow_the_batch_size_of_one_epoch(tmp_path):
    """Wang 2022 Table 5.11: one epoch at each batch size, so the steps are ceil(sentences / batch size)."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(f"sentence number {i}" for i in range(1_100)) + "\n")
    code, card, _ = dry_run("batch_size", "--corpus", str(corpus), "--set", "validation_size=100")
    assert code == 0
    expected = 3 * 2 * sum(math.ceil(1_000 / size) for size in (32, 64, 96, 128, 256, 512))
    assert f"**Training steps in all:** {expected:,} (corpus: 1,100 sentences)" in card
    assert row(card, "evaluation", "validation_size", "100", "command line")
    # Wang 2022 §5.1: a separate validation set leaves the whole corpus to training, and the steps say so.
    validation = tmp_path / "validation.txt"
    validation.write_text("held-out sentence\n" * 10)
    code, card, _ = dry_run("batch_size", "--corpus", str(corpus), "--set", f"validation_file={validation}")
    assert code == 0
    expected = 3 * 2 * sum(math.ceil(1_100 / size) for size in (32, 64, 96, 128, 256, 512))
    assert f"**Training steps in all:** {expected:,} (corpus: 1,100 sentences)" in card
    assert "**Cannot run as given:**" not in card
    code, _, err = dry_run("multitask_weight", "--set", f"validation_file={tmp_path / 'missing.txt'}")
    assert code == 2 and "missing.txt" in err


def test_command_line_values_are_marked_as_such():
    code, card, _ = dry_run("tsdae_deletion", "--ratios", "0.5", "0.6", "--lr", "1e-4")
    assert code == 0
    assert row(card, "1 deletion_ratio x pooling", "noise_ratio", "0.5, 0.6", "part of TSDAE App. A, Table 6 "
               "(command line)")
    assert row(card, "training", "lr", "0.0001", "command line")


def test_method_settings_reach_only_their_methods_trials():
    """Ray Tune resolves a per-method setting once the grid has fixed the method: CT gets RMSProp, SimCSE keeps
    the sweep's AdamW; an axis of the same name wins over the method's value."""
    protocol = get_experiment("learning_rate").protocol
    method_settings = {method: protocol.settings_of(method) for method in protocol.method_settings}
    constants = protocol.constants()
    axes = {"method": ["simcse", "ct"], "lr": [1e-4]}
    by_method = settings_by_method(constants, axes, method_settings)
    assert by_method["optimizer"] == {"simcse": "adamw", "ct": "rmsprop"}
    assert "lr" not in by_method
    trials = [config for _, config in generate_variants(grid_param_space(constants, axes, [0], by_method))]
    assert {(t["method"], t["optimizer"], t["lr_schedule"], t["pooling"], t["lr"]) for t in trials} == {
        ("simcse", "adamw", "linear", "cls", 1e-4), ("ct", "rmsprop", "ct_segments", "mean", 1e-4)}


def test_a_per_method_setting_without_default_falls_back_to_the_sweeps_value():
    """TSDAE paper §7.1 at each method's App. B batch size: SimCSE 512, TSDAE the sweep's 8."""
    protocol = get_experiment("sample_size").protocol
    method_settings = {"simcse": protocol.settings_of("simcse")}
    by_method = settings_by_method(protocol.constants(), {"method": ["tsdae", "simcse"]}, method_settings)
    assert by_method["batch_size"] == {"tsdae": 8, "simcse": 512}
    assert by_method["pooling"] == {"tsdae": "cls", "simcse": "cls_linear"}


def test_optuna_cannot_sample_methods_that_carry_their_own_settings():
    code, _, err = dry_run("learning_rate", "--search", "optuna")
    assert code == 2
    assert "ct (lr_schedule, optimizer, pooling)" in err and "--search grid" in err


def test_set_values_naming_local_paths_are_made_absolute(tmp_path, monkeypatch):
    """Trials run in Ray workers with another working directory: --set train_file=relative/path must still work."""
    from sentsweep.sweep.launch.launcher import local_paths_made_absolute

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pairs").mkdir()
    assert local_paths_made_absolute({"train_file": "pairs", "generator": "t5-base", "lr": 0.1}) == {
        "train_file": str(tmp_path / "pairs"), "generator": "t5-base", "lr": 0.1}


# Places that describe TSDAE alone: Reiml 2023's replication of TSDAE and TSDAE's search for TSDAE's configuration.
TSDAE_ONLY_PLACES = ("Reiml 2023 §5.4.1", "TSDAE App. A")


def sweep_methods(name: str) -> set[str]:
    """The methods a sweep's trials run: its method axes (first and later stages) and its fixed method."""
    protocol = get_experiment(name).protocol
    methods = {value for axis in protocol.grids if axis in ("method", "supervised") or axis.endswith("_method")
               for value in protocol.grid(axis)}
    return methods or {protocol.settings["method"].value}


@pytest.mark.parametrize("name", experiment_names())
def test_a_tsdae_only_place_is_cited_for_tsdae_settings_only(name, tmp_path, monkeypatch):
    """A card row whose value cites Reiml 2023 §5.4.1 or TSDAE App. A is a setting of TSDAE's trials: the sweep runs
    TSDAE alone, or the row is TSDAE's own (the audit found them stamped on MLM, SimCSE, CT, GPL and AugSBERT)."""
    monkeypatch.chdir(tmp_path)
    code, card, err = dry_run(name)
    assert code == 0, err
    if sweep_methods(name) == {"tsdae"}:
        return
    cells = [line.strip("|").split(" | ") for line in card.splitlines() if line.startswith("| ")]
    wrong = [" | ".join(row) for row in cells if len(row) >= 4 and row[0].strip() != "tsdae"
             and row[-1].strip().removeprefix("default: ").startswith(TSDAE_ONLY_PLACES)]
    assert not wrong, "\n".join(wrong)


def test_sample_sizes_above_the_corpus_cannot_run_and_small_ones_batch_the_whole_corpus(tmp_path):
    """TSDAE §7.1 trains on "Between 128 and 65,536 sentences": on a 1,000-sentence corpus the sizes above it are
    listed as what stops the sweep (a run exits 2, tests/sweep/test_bad_input.py); SimCSE's 512 at 128 and 256
    sentences is a batch of all of them."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"sentence number {i}\n" for i in range(1_000)))
    code, card, _ = dry_run("sample_size", "--corpus", str(corpus))
    assert code == 0
    refused = [size for size in [2**k for k in range(7, 17)]
               if f"**Cannot run as given:** sample size {size} exceeds the corpus's 1000 sentences" in card]
    assert refused == [1024, 2048, 4096, 8192, 16384, 32768, 65536]
    assert "simcse at batch size 512 on 128 training sentences: each step is the 128 sentences once" in card
    assert "simcse at batch size 512 on 256 training sentences" in card
    assert "on 512 training sentences" not in card



def test_labelled_pairs_are_counted_against_their_training_file_not_the_unlabelled_corpus(tmp_path, monkeypatch):
    """labelled_after_pretraining's SBERT sample sizes count pairs of its training file (TSDAE §6, Figure 2:
    "increasing sizes of labeled training data"), not sentences of the pre-training corpus: sizes within a file
    of 1,200 pairs run beside the 400-sentence demo corpus; sizes above the demo's 200 STS-B pairs are refused."""
    from sentsweep.demo_data import CORPUS_FILE

    monkeypatch.chdir(tmp_path)
    train = tmp_path / "sts" / "sts-train.csv"
    train.parent.mkdir()
    rows = [f"main-captions\tMSRvid\t2012test\t{i:04d}\t{i % 5}.000\ta sentence {i}\tanother sentence {i}"
            for i in range(1_200)]
    train.write_text("\n".join(rows) + "\n")
    code, card, err = dry_run("labelled_after_pretraining", "--labelled-sizes", "100", "1000", "--set",
                              f"train_file={train}", "--corpus", str(CORPUS_FILE))
    assert code == 0, err
    assert row(card, "3 supervised_from_scratch", "sample_size", "100, 1000")
    assert f"**Labelled training pairs:** {train}: 1,200 pairs, of which the trials draw 100, 1,000" in card
    assert "Cannot run as given" not in card
    code, card, err = dry_run("labelled_after_pretraining")
    assert code == 0, err
    assert "**Cannot run as given:** labelled size 1000 exceeds the 200 labelled pairs of" in card
    assert "**Cannot run as given:** labelled size 10000 exceeds the 200 labelled pairs of" in card


def probe_entry(folder, batch_size: int, seconds: float, peak_gib: float, gpu: str = "NVIDIA H100") -> dict:
    """A stored probe of the quick TSDAE deletion sweep's trials at `batch_size` (the tiny model --quick builds
    in `folder`/tiny-bert)."""
    return {"model": str((folder / "tiny-bert").resolve()), "method": "tsdae", "batch_size": batch_size,
            "max_seq_length": 32, "precision": "fp32", "gpu_name": gpu, "peak_bytes": int(peak_gib * 2**30),
            "gpu_memory_bytes": 80 * 2**30, "seconds_per_step": seconds, "out_of_memory": False,
            "measured_at": "2025-06-01T12:00:00+00:00"}


def estimate_row(card: str) -> list[str]:
    (line,) = [line for line in card.splitlines() if line.startswith("| compute budget | estimated GPU-hours |")]
    return [cell.strip() for cell in line.strip("|").split("|")][2:]


def test_the_card_estimates_gpu_hours_from_the_stored_probes_step_times(tmp_path):
    """Two keys (batch sizes 8 and 16) of the quick grid, 0.2 and 0.3 s per step on an H100: 16 trials of 60 steps,
    8 of each key, at 0.5 GPU each (and at what auto chooses on the probes' memory: 3 trials of 20 GiB fit in 80)."""
    store = tmp_path / "store"
    store.mkdir()
    entries = [probe_entry(tmp_path, 8, 0.2, 10), probe_entry(tmp_path, 16, 0.3, 20),
               probe_entry(tmp_path, 16, 9.9, 20, gpu="Tesla T4") | {"measured_at": "2024-01-01T00:00:00+00:00"}]
    (store / "gpu_probes.json").write_text(json.dumps(entries))
    quick = ["--quick", "--batch-sizes", "8", "16", "--output-dir", str(tmp_path), "--storage-path", str(store)]

    code, card, err = dry_run("tsdae_deletion", *quick, "--gpus-per-trial", "0.5")
    assert code == 0, err
    assert "**Trials:** 8 grid points x 2 seeds = 16" in card and "**Training steps in all:** 960 " in card
    steps = 960 // 16  # every trial of the quick grid trains max_steps
    hours = (8 * steps * 0.2 + 8 * steps * 0.3) * 0.5 / 3600
    value, source = estimate_row(card)
    assert value == f"{hours:.3g}" == "0.0333"
    assert source.startswith(f"steps x seconds per step of the NVIDIA H100 probes in {store / 'gpu_probes.json'} "
                             "(measured 2025-06-01) x 0.5 GPU per trial / 3600; evaluation, checkpoints and start-up "
                             "not counted")
    assert f"**Compute in all:** 16 trials, 960 training steps, about {value} GPU-hours of steps" in card

    code, card, err = dry_run("tsdae_deletion", *quick, "--gpus-per-trial", "auto")
    assert code == 0, err
    value, source = estimate_row(card)
    assert value == f"{(8 * steps * 0.2 + 8 * steps * 0.3) * 0.3333 / 3600:.3g}"
    assert "x auto = 0.3333 GPU per trial (the stored probes' memory; no CPU cap: a dry run knows no cluster)" in source


def test_a_key_without_a_measured_step_is_named_and_a_malformed_file_refused(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    path = store / "gpu_probes.json"
    path.write_text(json.dumps([probe_entry(tmp_path, 8, 0.2, 10),
                                probe_entry(tmp_path, 16, None, 79) | {"out_of_memory": True}]))
    quick = ["--quick", "--batch-sizes", "8", "16", "--output-dir", str(tmp_path), "--storage-path", str(store),
             "--gpus-per-trial", "0.5"]
    code, card, err = dry_run("tsdae_deletion", *quick)
    assert code == 0, err
    assert estimate_row(card) == [
        "not estimated", "no probe on the NVIDIA H100 measured a step of tsdae on tiny-bert (batch size 16, "
        f"max_seq_length 32, fp32) ({path}); a launch on the GPU measures it"]
    assert "GPU-hours not estimated" in card
    assert estimate_row(dry_run("tsdae_deletion", *quick[:-2])[1]) == ["0", "--gpus-per-trial 0: the trials run on CPU"]

    path.write_text("[{")
    code, card, err = dry_run("tsdae_deletion", *quick)
    assert code == 2 and card == ""
    assert f"{path}: not a GPU probes file that sentsweep wrote" in err


@pytest.mark.parametrize("name", ["simcse_loss", "multitask_weight", "batch_size"])
def test_a_validation_set_larger_than_the_corpus_is_refused_without_negative_sentence_counts(name):
    """Wang 2022 §5.2.2 holds 10k validation sentences out of the corpus: on the 400-sentence demo corpus none is left
    to train on, which the card says once, instead of also listing batches of "-9600 training sentences"."""
    code, card, err = dry_run(name)
    assert code == 0, err
    assert "**Cannot run as given:** validation_size 10000 leaves no training sentences" in card
    assert "training sentences: each step" not in card and " on -" not in card


def test_a_data_settings_source_names_what_applies_to_the_command_as_given(tmp_path):
    code, card, _ = dry_run("tsdae_deletion", "--quick")
    assert code == 0
    assert row(card, "training", "model") and "--quick: the tiny random BERT |" in card
    assert "the shipped demo corpus (--quick without --corpus) |" in card
    code, card, _ = dry_run("tsdae_deletion")  # no --quick: the demo files stand in for this card's numbers only
    assert code == 0
    assert row(card, "training", "model", "none", "not given: --model (required without --quick)")
    assert "the shipped demo corpus (this card's stand-in; a run without --quick needs --corpus) |" in card
    assert "--quick without" not in card
    for name in ("sts-dev.csv", "sts-test.csv"):
        shutil.copy(DEMO_DIR / name, tmp_path / name)
    code, card, err = dry_run("tsdae_deletion", "--sts-dir", str(tmp_path))  # evaluation data: no demo corpus
    assert code == 0, err
    assert row(card, "training", "corpus", "none", "not given: --corpus")
