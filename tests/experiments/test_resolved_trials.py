"""Every trial's resolved settings, as the runner hands them to Ray Tune (no training): each method's values are
the ones its seed gives. Each test names the seed line it checks ("TSDAE l.259": line 259 of
../shared/seeds/002_*.txt)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from sentsweep.demo_data import NLI_FILE
from sentsweep.experiments import get_experiment
from sentsweep.sweep.config.definition import target_problems
from sentsweep.sweep.config.options import parse_options
from sentsweep.sweep.launch.launcher import TINY_MODEL_PENDING, resolve_settings, stage_axes
from sentsweep.sweep.search.trials import trial_configs
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
    """Reiml 2023 l.1290 (§5.4.1, "TSDAE (repr.)" of Table 6.10, l.1551): "100K training steps with a batch size of 8,
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
    """Reiml 2023 l.1240 (§5.1): "After each epoch, we evaluate our models and take the model with the best Spearman";
    TSDAE (repr.) replicates "the original TSDAE setup as described in the original paper" (§5.4.1), which keeps
    its last checkpoint (TSDAE App. B: "we do not use early-stopping with in-domain labeled data")."""
    for trial in resolved_trials("nm_weight"):
        assert trial.training.eval_steps is None  # the loop's interval is then one epoch
        assert trial.training.evaluation_interval(64_000) == trial.training.steps_per_epoch(64_000)
        assert trial.evaluation.select_checkpoint == ("last" if trial.method == "tsdae" else "best_sts_dev")


def test_the_domain_chains_mlm_follows_000s_default_schedule():
    """Reiml 2023 l.1236 (§5.1): "a warm-up period of 10% of the total training time, followed by a linear decay. The
    AdamW optimizer is used with a weight decay of 0.01 ... unless otherwise specified"; §5.4.3 (l.1310) specifies the
    MLM's steps, batch size and rate only."""
    mlm = [trial for trial in resolved_trials("domain_chain_augsbert") if trial.method == "mlm"]
    assert len(mlm) == 3
    for trial in mlm:
        training = trial.training
        assert (training.max_steps, training.batch_size, training.lr) == (12_500, 64, 3e-5)
        assert (training.lr_schedule, training.warmup(10**7), training.weight_decay, training.optimizer) == (
            "linear", 1_250, 0.01, "adamw")


def test_simcse_trains_with_its_official_codes_length_of_32_tokens():
    """TSDAE App. B (l.364): "we use the official code ... along with the default hyper-parameters"; SimCSE's
    run_unsup_example.sh trains with --max_seq_length 32. The other methods keep the project's 128."""
    for name in ("tsdae_main", "sample_size"):
        lengths = {trial.method: trial.training.max_seq_length for trial in resolved_trials(name)
                   if trial.method in ("simcse", "tsdae", "mlm", "ct")}
        assert lengths == {"simcse": 32, "tsdae": 128, "mlm": 128, "ct": 128}, name


def test_sample_size_trains_each_method_at_its_own_settings_for_10_epochs():
    """TSDAE l.259 (§7.1): "with 10 epochs up to 100k training steps. The models are evaluated at the end of each
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
    """TSDAE App. B (l.364, l.366): TSDAE and CT 100K steps at batch 8, the last checkpoint ("we do not use
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
    """TSDAE l.259 (§7.1): "evaluated at the end of each epoch and the best score on the development set is
    reported", for every method: SimCSE's one epoch and 125-step interval of the main protocol do not apply."""
    simcse = [trial for trial in resolved_trials("sample_size") if trial.method == "simcse"]
    assert {(trial.training.epochs, trial.training.eval_steps) for trial in simcse} == {(10, None)}


def test_cross_bi_encoder_trains_teacher_and_bi_encoder_three_epochs_on_gold_only():
    """Reiml 2023 l.1250 (§5.2.1): "Both models are fine-tuned for three epochs on the STS-B train split"; l.1236
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


# --- Faithful protocols: per-task training, labelled sizes, peak rates, readable targets, Figure 2 ----

def resolved_configs(name: str, *options: str) -> list[dict]:
    """The config of every trial of the sweep `name` run with `options`, as the runner hands it to Ray Tune."""
    definition = get_experiment(name)
    args = parse_options(definition.options, ["--dry-run", *options])
    return [config for _, config in trial_configs(resolve_settings(definition, args), stage_axes(definition, args))]


def cqadupstack_folder(root: Path) -> Path:
    """USEB's data-eval/cqadupstack in miniature: corpus.json and retrieval_split.json, two forums."""
    import json

    folder = root / "cqadupstack"
    folder.mkdir(parents=True)
    corpus = {"tex": {"1": "t query", "2": "t dup", "3": "t other"}, "unix": {"5": "u query", "6": "u dup"}}
    split = {"valid": {"tex": {"1": ["2"]}, "unix": {"5": ["6"]}}, "test": {"tex": {"1": ["2"]}, "unix": {"5": ["6"]}}}
    (folder / "corpus.json").write_text(json.dumps(corpus))
    (folder / "retrieval_split.json").write_text(json.dumps(split))
    return folder


@pytest.fixture()
def two_useb_tasks(tmp_path) -> list[str]:
    """--eval-task and --task-corpus for AskUbuntu and CQADupStack, each with a corpus of its own."""
    from tests.tasks.test_tasks import askubuntu_folder

    askubuntu, cqadupstack = askubuntu_folder(tmp_path), cqadupstack_folder(tmp_path)
    (tmp_path / "askubuntu_titles.txt").write_text("".join(f"ubuntu title {i}\n" for i in range(300)))
    (tmp_path / "cqadupstack_titles.txt").write_text("".join(f"forum title {i}\n" for i in range(500)))
    return ["--eval-task", f"askubuntu={askubuntu}", "--task-corpus", f"askubuntu={tmp_path / 'askubuntu_titles.txt'}",
            "--eval-task", f"cqadupstack={cqadupstack}",
            "--task-corpus", f"cqadupstack={tmp_path / 'cqadupstack_titles.txt'}"]


@pytest.mark.parametrize("name", ["tsdae_main", "nm_weight", "domain_adaptation", "domain_chain_augsbert"])
def test_each_in_domain_cell_trains_on_its_own_tasks_sentences_and_is_scored_on_that_task(name, two_useb_tasks):
    """TSDAE l.125 (§4.1): "For unsupervised training, we just use the sentences from the training split" of each
    task; Table 2 (l.202) and Reiml 2023 Table 6.10 (l.1566) are one model per column. Every trial of a stage on the
    target domain trains on its task's corpus and is scored on that task alone; every target names the task whose corpus
    trained its cell and reads that task's metric."""
    nli = ["--nli-file", str(NLI_FILE)] if name == "domain_adaptation" else []
    configs = resolved_configs(name, *two_useb_tasks, *nli)
    per_task = [config for config in configs if "target_task" in config]
    assert per_task and {config["target_task"] for config in per_task} == {"askubuntu", "cqadupstack"}
    for config in per_task:
        task = config["target_task"]
        assert Path(config["corpus"]).name == f"{task}_titles.txt"
        assert list(config["eval_tasks"]) == [task]
        validate_config({"model": TINY_MODEL_PENDING} | config)
    targets = [target for target in get_experiment(name).published if target.params.get("target_task")]
    assert targets and all(target.metric.startswith(f"{target.params['target_task']}_") for target in targets)
    # every target of the two tasks given is a cell of these stages
    definition = get_experiment(name)
    given = replace(definition, published=tuple(target for target in definition.published if target.params.get(
        "target_task") in ("askubuntu", "cqadupstack")))
    args = parse_options(definition.options, ["--dry-run", *two_useb_tasks, *nli])
    assert given.published and target_problems(given, stage_axes(definition, args)) == []
    if name == "domain_adaptation":  # the NLI+STS model is one for every task, scored on each
        shared = [config for config in configs if "target_task" not in config]
        assert shared and all(set(config["eval_tasks"]) == {"askubuntu", "cqadupstack"} for config in shared)


def test_an_evaluation_task_that_is_no_target_scores_every_trial(tmp_path):
    """TSDAE App. F (l.449): Table 11 scores Table 3's models (one corpus) on STS12-16 and SICK-R, no target task:
    beside a USEB task, an STS task is scored by every trial; alone, it makes no per-task axis."""
    from tests.tasks.test_tasks import askubuntu_folder, senteval_sts_folder

    sts12, _ = senteval_sts_folder(tmp_path, "sts12")
    configs = resolved_configs("tsdae_main", "--eval-task", f"askubuntu={askubuntu_folder(tmp_path)}",
                               "--eval-task", f"sts12={sts12}")
    assert {config["target_task"] for config in configs} == {"askubuntu"}
    assert all(set(config["eval_tasks"]) == {"askubuntu", "sts12"} for config in configs)
    alone = resolved_configs("tsdae_main", "--eval-task", f"sts12={sts12}")
    assert len(alone) == 4 * 5 and all("target_task" not in config for config in alone)


def test_several_target_tasks_without_a_corpus_each_are_refused(two_useb_tasks):
    """TSDAE l.125: a model trained on one task's sentences is not another task's in-domain cell."""
    from sentsweep.errors import InputError

    without_cqadupstack_corpus = two_useb_tasks[:-2]
    with pytest.raises(InputError, match="--eval-task cqadupstack has no --task-corpus"):
        resolved_configs("tsdae_main", *without_cqadupstack_corpus)


def test_table_3s_cells_read_the_checkpoint_each_method_reports():
    """TSDAE l.366 (App. B, fn. 8): SimCSE keeps "early-stopping on the STS-B development set", so its Table 3 cell
    (l.235) is the test score at its best STS-B dev, the others' their last checkpoint's; Table 3 trains on one
    corpus (Wikipedia), so its cells name no target task."""
    from sentsweep.trainables.loop import reports_metric

    stsb = {t.params["method"]: t for t in get_experiment("tsdae_main").published if t.metric.startswith("sts_")}
    assert {method: t.metric for method, t in stsb.items()} == {
        "tsdae": "sts_test_last", "mlm": "sts_test_last", "ct": "sts_test_last", "simcse": "sts_test_at_best_dev"}
    assert all(t.params["target_task"] is None for t in stsb.values())
    for trial in resolved_trials("tsdae_main"):
        assert reports_metric(trial.evaluation, stsb[trial.method].metric)


def test_labelled_sizes_above_the_training_files_pairs_are_refused():
    """TSDAE l.218 (Figure 2): "increasing sizes of labeled training data": the default 100 / 1,000 / 10,000 on the
    demo's STS-B train file, which holds fewer pairs, are refused (as corpus sizes are), not trained on all of it."""
    from sentsweep.data import read_scored_pairs
    from sentsweep.demo_data import DEMO_DIR
    from sentsweep.errors import InputError
    from sentsweep.sweep.launch.data_sizes import sample_size_problems
    from sentsweep.trainables.sbert import gold_pairs

    definition = get_experiment("labelled_after_pretraining")
    args = parse_options(definition.options, ["--dry-run"])
    resolved = resolve_settings(definition, args)
    pairs = len(read_scored_pairs(DEMO_DIR / "sts-train.csv"))
    problems = sample_size_problems(resolved, stage_axes(definition, args))
    refused = [size for size in (100, 1_000, 10_000) if size > pairs]
    assert refused and len(problems) == len(refused)
    for size, problem in zip(refused, problems):
        assert f"labelled size {size} exceeds the {pairs} labelled pairs" in problem
    trial = validate_config({"model": TINY_MODEL_PENDING, "method": "sbert", "seed": 0, "sample_size": pairs + 1,
                             **{key: resolved.constants[key] for key in ("train_file", "dev_file", "test_file")}}
                            | {"lr": 2e-5, "batch_size": 16, "max_seq_length": 32, "max_steps": 10,
                               "corpus": resolved.constants["corpus"]})
    with pytest.raises(InputError, match=f"sample_size {pairs + 1} exceeds the {pairs} labelled pairs"):
        gold_pairs(trial)


def peak_rate_reached(trial, examples: int) -> bool:
    """Whether the trial's schedule reaches its lr: with a linear warm-up of W steps the rate at step k < W is
    lr * k / W, so the peak comes at step W, which a run of T steps (0 ... T - 1) reaches when W <= T - 1."""
    training = trial.training
    return training.warmup(examples) <= training.total_steps(examples) - 1


def test_mlm_reaches_section_5_2s_rate_at_every_corpus_size_of_figure_3():
    """TSDAE l.144 (§5.2): MLM at "the learning rate (5e-5)"; l.259 (§7.1): "10 epochs up to 100k training steps"
    for "Between 128 and 65,536 sentences". At 128 sentences (160 steps) a fixed 10,000-step warm-up would peak at
    8e-7: every MLM trial's warm-up is a share of its run and ends before its last step."""
    trials = [trial for trial in resolved_trials("sample_size", "--corpus", str(write_corpus(70_000)))
              if trial.method == "mlm"]
    assert sorted({trial.training.sample_size for trial in trials}) == [2**k for k in range(7, 17)]
    for trial in trials:
        assert trial.training.lr == 5e-5
        assert peak_rate_reached(trial, trial.training.sample_size), trial.training.sample_size
    smallest = next(trial for trial in trials if trial.training.sample_size == 128)
    assert (smallest.training.total_steps(128), smallest.training.warmup(128)) == (160, 16)


def test_every_trial_of_every_sweep_reaches_its_peak_rate_or_the_card_says_why():
    """TSDAE l.144 / Wang 2022 Table 5.3 (l.654) and every other schedule: on a corpus of 100k sentences (Wang 2022's
    and the USEB tasks' scale), a trial whose warm-up outlasts its run is named on its sweep's card; all others reach
    their rate."""
    from sentsweep.errors import InputError
    from sentsweep.experiments import experiment_names
    from sentsweep.sweep.launch.data_sizes import peak_rate_shortfalls, training_examples

    corpus = str(write_corpus(100_000))
    named_short = 0
    for name in experiment_names():
        definition = get_experiment(name)
        nli = ["--nli-file", str(NLI_FILE)] if name == "domain_adaptation" else []
        args = parse_options(definition.options, ["--dry-run", "--corpus", corpus, *nli])
        resolved = resolve_settings(definition, args)
        stages = stage_axes(definition, args)
        shortfalls = " ".join(peak_rate_shortfalls(resolved, stages))
        for _, config in trial_configs(resolved, stages):
            try:
                trial = validate_config({"model": TINY_MODEL_PENDING} | config)
            except InputError as missing:  # an input a dry run leaves open (gpl's generator): nothing to train yet
                assert "missing setting" in str(missing), (name, missing)
                continue
            examples = training_examples(config, resolved) if trial.training else None
            if examples and not peak_rate_reached(trial, examples):
                named_short += 1
                assert f"{trial.method} on {examples:,} training examples" in shortfalls, (name, config)
    assert named_short  # Wang 2022's 910 warm-up steps outlast one epoch of 100k at batch sizes above 110 (Table 5.11)


def quick_configs(name: str) -> list[dict]:
    definition = get_experiment(name)
    args = parse_options(definition.options, ["--dry-run", "--quick"])
    resolved = resolve_settings(definition, args)
    return [config for _, config in trial_configs(resolved, stage_axes(definition, args))]


def in_cell(config: dict, params: dict) -> bool:
    """Whether a trial of `config` is a run of the target cell `params` (None: a param the trial does not set)."""
    for name, value in params.items():
        logged = config.get(name)
        if value is None:
            if logged is not None:
                return False
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if not isinstance(logged, (int, float)) or abs(float(logged) - value) > 1e-12:
                return False
        elif logged != value:
            return False
    return True


@pytest.mark.parametrize("name", [name for name in __import__("sentsweep.experiments", fromlist=["x"])
                                  .experiment_names() if get_experiment(name).published])
def test_every_target_whose_cell_runs_in_quick_is_read_from_a_metric_its_trials_log(name):
    """Each target names a metric its cell's trials report (TSDAE l.366: SimCSE's STS-B early stopping logs the test
    score at its best dev, not its last checkpoint's); a task's metric needs --eval-task, which --quick does not
    give: the report then names the missing metric, as its check of a cell without it says."""
    from itertools import chain

    import pandas as pd

    from sentsweep.analysis.reproduction import NOT_EVALUATED, check_target
    from sentsweep.trainables.loop import EVERY_TRIAL_METRICS, RULE_METRICS, SELECTED_TASK_DEV, reports_metric

    configs = quick_configs(name)
    for target in get_experiment(name).published:
        cell = [config for config in configs if in_cell(config, dict(target.params))]
        for config in cell:
            reported = reports_metric(validate_config({"model": TINY_MODEL_PENDING} | config).evaluation,
                                      target.metric)
            loop_metric = target.metric in {*EVERY_TRIAL_METRICS, SELECTED_TASK_DEV, *chain(*RULE_METRICS.values())}
            assert reported is not False or not loop_metric, (target.cell_label(), target.metric)
            if reported is False:  # a run without the task: the report names the metric, not "not run"
                runs = pd.DataFrame([{"status": "FINISHED", "seed": "0", "metrics.best_sts_dev": 70.0}
                                     | {f"params.{k}": str(v) for k, v in config.items() if k in target.params}])
                check = check_target(runs, target)
                assert check.verdict == NOT_EVALUATED  # named by its metric, with the option that adds it


def test_figure_2_trains_sbert_in_domain_on_the_tasks_pairs_and_scores_every_point_on_dev(tmp_path):
    """TSDAE l.208 (§6): "We first pre-train on all available unlabeled sentences and then perform in-domain
    supervised training with different labeled training set sizes. Scores are reported by evaluation on the
    development sets"; l.135 (§5.1): in-domain SBERT on AskUbuntu "trained with MNRL". With --eval-task askubuntu
    SBERT trains on the task's labelled pairs with MNRL and selects on its dev split, and the pre-training rows
    (the 0-label point, last checkpoint: App. B) report the dev score of the checkpoint they keep, as the curves do."""
    from sentsweep.trainables.loop import reports_metric
    from tests.experiments.test_in_domain_sbert import useb_supervised_folder
    from tests.tasks.test_tasks import askubuntu_folder

    task = f"askubuntu={askubuntu_folder(tmp_path)}"
    pairs = useb_supervised_folder(tmp_path)
    configs = resolved_configs("labelled_after_pretraining", "--eval-task", task, "--task-pairs",
                               f"askubuntu={pairs}", "--labelled-sizes", "2", "3")
    trials = [(config, validate_config({"model": TINY_MODEL_PENDING} | config)) for config in configs]
    sbert = [(config, trial) for config, trial in trials if trial.method == "sbert"]
    assert len(sbert) == 2 * 2 * 5  # stages 2 and 3, two sizes, 5 seeds
    for config, trial in sbert:
        assert (trial.settings.train_file, trial.settings.loss) == (str(pairs), "mnrl")
        assert (trial.evaluation.select_checkpoint, trial.evaluation.selection_task) == ("best_task_dev", "askubuntu")
        assert reports_metric(trial.evaluation, "selected_task_dev") and config["target_task"] == "askubuntu"
    pretraining = [trial for _, trial in trials if trial.method != "sbert"]
    assert {trial.method for trial in pretraining} == {"tsdae", "mlm", "ct", "simcse"}
    for trial in pretraining:
        assert trial.evaluation.selection_task == "askubuntu"
        assert trial.evaluation.select_checkpoint == ("best_sts_dev" if trial.method == "simcse" else "last")
        assert reports_metric(trial.evaluation, "selected_task_dev")
    definition = get_experiment("labelled_after_pretraining")
    without_pairs = parse_options(definition.options, ["--dry-run", "--eval-task", task])
    [missing] = definition.missing_inputs(without_pairs)  # on the card; a run is refused (launcher)
    assert "give its labelled training pairs with --task-pairs askubuntu=" in missing


def test_distillation_reannotates_with_each_teacher_against_a_gold_bi_encoder(tmp_path):
    """Reiml 2023 l.1262 (§5.2.2): a CE and a CBE "re-annotate the STS-B train split. The re-annotated datasets are
    distilled into Bi-Encoders ... A baseline Bi-Encoder is also trained ... All models are trained for three epochs";
    l.1264: on BWS "The models are trained for five epochs each"; l.1266: the teacher trained on STS-B annotates the BWS
    pairs, five epochs. Lengths and rates are §5.1's (l.1236)."""
    trials = resolved_trials("distillation")
    assert len(trials) == (1 + 2) * 3
    base = [trial for trial in trials if trial.method == "sbert"]
    distilled = [trial for trial in trials if trial.method == "augsbert"]
    assert {trial.settings.teacher for trial in distilled} == {"ce", "cbe"} and len(base) == 3
    for trial in distilled:
        assert (trial.settings.setting, trial.settings.sampling, trial.settings.reannotate_gold) == ("semi", "none",
                                                                                                     True)
        assert (trial.training.epochs, trial.settings.teacher_epochs) == (3, 3)
    for trial in trials:
        assert (trial.training.lr, trial.training.batch_size, trial.training.warmup_ratio) == (2e-5, 16, 0.1)
        assert trial.evaluation.select_checkpoint == "best_sts_dev"
    stsb = tmp_path / "stsbenchmark" / "sts-train.csv"
    stsb.parent.mkdir()
    stsb.write_text("demo\tx\t2012\t0000\t4.0\ta cat sits\ta cat is sitting\n")
    bws = resolved_trials("distillation", "--dataset", "sts-b-to-bws", "--teacher-train-file", str(stsb))
    for trial in bws:
        assert (trial.training.epochs, trial.settings.teacher_epochs if trial.method == "augsbert" else 5) == (5, 5)
        if trial.method == "augsbert":  # the teacher learns STS-B and re-annotates the BWS (--sts-dir) train pairs
            assert trial.settings.train_file == str(stsb.resolve())
            assert Path(trial.settings.reannotate_file).name == "sts-train.csv" and \
                Path(trial.settings.reannotate_file) != stsb.resolve()
