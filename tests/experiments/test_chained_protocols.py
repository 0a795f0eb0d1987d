"""The chained sweeps of the TSDAE paper run each unsupervised method at its own App. B settings: every
trial's settings as Ray Tune gets them (the runner's param space, the method's protocol values included),
resolved to the typed trial, without training. "l.N" is a line of the seed text 002_0ccc4bd97e882493.txt."""

import contextlib
import io
import re

import pytest
from ray.tune.search.variant_generator import generate_variants

from sentsweep.demo_data import DEMO_DIR, NLI_FILE
from sentsweep.experiments import get_experiment
from sentsweep.experiments.tsdae.labelled_intersection import reference_constants
from sentsweep.sweep import run_sweep
from sentsweep.sweep.config.options import parse_options
from sentsweep.sweep.execution.stage_run import grid_stage_space
from sentsweep.sweep.launch.launcher import resolve_settings, stage_axes
from sentsweep.trainables.catalog import resolve_trial
from tests.experiments.test_in_domain_sbert import useb_supervised_folder
from tests.tasks.test_tasks import askubuntu_folder, write

# TSDAE App. B, l.364: "the number of training steps is 100K; the batch size is 8; the optimizers are AdamW, RMSProp
# and AdamW, respectively; the initial learning rates are 3e-5, 1e-5 and 1e-6, resp." and "The learning rate for
# CT follows a segmented-constant scheduling scheme" and "The pooling method for CT and BERT-flow is both mean
# pooling"; l.366: "we do not use early-stopping with in-domain labeled data and indicate a fixed number of
# training steps". SimCSE, l.364: "1 epoch of training, batch size of 512, AdamW optimizer with learning rate
# 5e-5 and a linear layer on the CLS token embedding"; footnote 8 (l.366): "For SimCSE, the official code
# involves early-stopping on the STS-B development set. We do not change this setting for this method".
# MLM, §5.2 l.144: "the number of training steps (100K), the batch size (8) and the learning rate (5e-5)" and
# "we perform mean-pooling"; the rest of MLM's setup is "the original setup in Devlin et al." and SimCSE's that of
# its official code (both outside the seeds: linear decay; sentsweep.search_spaces.tsdae).
# (optimizer, lr, lr_schedule, batch_size, max_steps, epochs, pooling, select_checkpoint)
APP_B = {
    "tsdae": ("adamw", 3e-5, "constant", 8, 100_000, None, "cls", "last"),
    "mlm": ("adamw", 5e-5, "linear", 8, 100_000, None, "mean", "last"),
    "ct": ("rmsprop", 1e-5, "ct_segments", 8, 100_000, None, "mean", "last"),
    "simcse": ("adamw", 5e-5, "linear", 512, None, 1, "cls_linear", "best_sts_dev"),
}


def settings_of(trial) -> tuple:
    training = trial.training
    return (training.optimizer, training.lr, training.lr_schedule, training.batch_size, training.max_steps,
            training.epochs, trial.settings.pooling, trial.evaluation.select_checkpoint)


def stage_trials(name: str, *options: str, output_dir) -> dict[str, list]:
    """{stage: [typed trial]}: every trial of every stage of sweep `name`, as the runner gives them to Ray Tune
    (a chained stage's model and pooling come from the earlier stage's logged models, not resolved here)."""
    definition = get_experiment(name)
    args = parse_options(definition.options, ["--dry-run", "--output-dir", str(output_dir), *options])
    resolved = resolve_settings(definition, args)
    trials = {}
    for stage, axes in stage_axes(definition, args):
        constants = resolved.constants | {"stage": stage}
        if definition.driver is not None and stage == "reference":
            constants = reference_constants(args, resolved.constants)
        space = grid_stage_space(constants, axes, resolved.seeds, resolved.method_settings)
        trials[stage] = [resolve_trial({"model": "m"} | config) for _, config in generate_variants(space)]
    return trials


@pytest.mark.parametrize("name, options, stages", [
    ("domain_adaptation", ["--nli-file", str(NLI_FILE)], ["nli_sts_then_target", "target"]),
    ("labelled_after_pretraining", [], ["pretraining"]),
])
def test_every_unsupervised_trial_of_the_chains_has_its_methods_app_b_settings(name, options, stages, tmp_path):
    trials = stage_trials(name, *options, output_dir=tmp_path)
    for stage in stages:
        methods = {trial.method for trial in trials[stage]}
        assert methods == set(APP_B)
        assert len(trials[stage]) == 4 * 5  # TSDAE App. B l.368: "averaged over 5 random seeds"
        for trial in trials[stage]:
            assert settings_of(trial) == APP_B[trial.method], (stage, trial.method, trial.seed)


@pytest.mark.parametrize("reference", sorted(APP_B))
def test_the_intersection_reference_trains_with_its_methods_app_b_settings(reference, tmp_path):
    trials = stage_trials("labelled_intersection", "--reference", reference, output_dir=tmp_path)["reference"]
    assert [trial.seed for trial in trials] == [0, 1, 2, 3, 4]
    for trial in trials:
        assert trial.method == reference
        assert settings_of(trial) == APP_B[reference]


def test_simcse_scores_dev_within_its_one_epoch_and_the_fixed_step_methods_do_not_select():
    """Footnote 8's early stopping needs dev scores inside one epoch (100k sentences at batch 512: 196 steps)."""
    from sentsweep.search_spaces.tsdae import LABELLED_AFTER_PRETRAINING_PROTOCOL as protocol

    assert protocol.settings_of("simcse")["eval_steps"] < 100_000 // 512
    assert {protocol.settings_of(method)["select_checkpoint"] for method in ("tsdae", "mlm", "ct")} == {"last"}


def test_the_in_domain_sbert_stages_train_at_app_b(tmp_path):
    """TSDAE App. B l.368: "the number of training epochs is 10; the maximum number of training steps is 20K; the
    batch size is 64"."""
    trials = stage_trials("labelled_after_pretraining", output_dir=tmp_path)
    for stage in ("supervised_after_pretraining", "supervised_from_scratch"):
        assert trials[stage]
        for trial in trials[stage]:
            assert (trial.method, trial.training.epochs, trial.training.max_steps, trial.training.batch_size) == (
                "sbert", 10, 20_000, 64)


def twitterpara_folder(tmp_path):
    """TwitterPara has only a test split (TSDAE §7: "it has no development split released")."""
    folder = tmp_path / "twitterpara"
    write(folder / "Twitter_URL_Corpus_test.txt", "url a\turl b\t(4, 6)\turl\nurl c\turl d\t(1, 6)\turl\n")
    write(folder / "test.data", "0\ttopic\tpit a\tpit b\t4\ttags\ttags\n1\ttopic\tpit c\tpit d\t1\ttags\ttags\n")
    return folder


def test_after_pretraining_sbert_selects_on_the_target_tasks_dev_split_and_pretraining_keeps_its_fixed_steps(
        tmp_path):
    """TSDAE §6 l.208: "Scores are reported by evaluation on the development sets" (Figure 2, each task's); App. B
    l.366 keeps the pre-training at its fixed steps. The only --eval-task task is the target."""
    task = f"askubuntu={askubuntu_folder(tmp_path)}"
    pairs = f"askubuntu={useb_supervised_folder(tmp_path)}"
    trials = stage_trials("labelled_after_pretraining", "--eval-task", task, "--task-pairs", pairs,
                          "--labelled-sizes", "2", "3", output_dir=tmp_path)
    for stage in ("supervised_after_pretraining", "supervised_from_scratch"):
        for trial in trials[stage]:
            assert (trial.evaluation.select_checkpoint, trial.evaluation.selection_task) == ("best_task_dev",
                                                                                             "askubuntu")
    for trial in trials["pretraining"]:
        assert settings_of(trial) == APP_B[trial.method]


def test_sample_size_selects_every_trial_on_the_target_tasks_dev_split(tmp_path):
    """TSDAE §7 l.243: "For all the datasets except TwitterPara, the analysis is carried out on the development
    set"; §7.1 l.259: "the best score on the development set is reported"."""
    task = f"askubuntu={askubuntu_folder(tmp_path)}"
    trials = stage_trials("sample_size", "--eval-task", task, output_dir=tmp_path)["method x sample_size"]
    assert {(t.evaluation.select_checkpoint, t.evaluation.selection_task) for t in trials} == {
        ("best_task_dev", "askubuntu")}
    assert {trial.training.epochs for trial in trials} == {10}


@pytest.mark.parametrize("name", ["labelled_after_pretraining", "sample_size"])
@pytest.mark.parametrize("options, message", [
    (["--set", "select_checkpoint=best_task_dev"], "--set select_checkpoint: this sweep's stages select checkpoints "
                                                   "by different rules"),
    (["--target-task", "scidocs"], "--target-task 'scidocs' is not one of the --eval-task tasks \\(askubuntu\\)"),
    (["--target-task", "twitterpara"], "--target-task 'twitterpara' has no dev split"),
])
def test_a_selection_that_would_override_a_stages_rule_or_cannot_select_is_refused(name, options, message,
                                                                                    tmp_path):
    specs = ["--eval-task", f"askubuntu={askubuntu_folder(tmp_path)}"]
    if name == "labelled_after_pretraining":  # each target task's labelled pairs (TSDAE §6: in-domain SBERT)
        pairs = useb_supervised_folder(tmp_path)
        specs += [argument for task in ("askubuntu", "scidocs", "twitterpara")
                  for argument in ("--task-pairs", f"{task}={pairs}")]
    if "twitterpara" in options:
        specs += ["--eval-task", f"twitterpara={twitterpara_folder(tmp_path)}"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run_sweep(get_experiment(name), ["--dry-run", "--output-dir", str(tmp_path), *specs, *options])
    assert code == 2
    assert re.search(message, err.getvalue()), err.getvalue()
    assert out.getvalue() == ""  # refused before the card, so before anything could run


def test_domain_adaptations_nli_and_sts_steps_train_on_their_own_data_with_their_own_loss(tmp_path):
    """TSDAE §5.1 l.133: "These models were trained on SNLI + MultiNLI data using the Multiple-Negative Ranking Loss
    (MNRL) (Henderson et al., 2017) and the Mean Square Error (MSE) loss on the STS benchmark train set": the NLI
    step (sbert_nli) reads --nli-file, the STS step (sbert, cosine MSE) STS-B train; in both orders of Table 2.
    Their lengths and rates are the project's (TSDAE gives none): one epoch of at most 20K steps, Reiml 2023 §5.1's
    2e-5, batch size 16, the last checkpoint."""
    trials = stage_trials("domain_adaptation", "--nli-file", str(NLI_FILE), output_dir=tmp_path)
    assert list(trials) == ["nli", "nli_sts", "nli_sts_then_target", "target", "target_then_nli",
                            "target_then_nli_sts"]
    for stage in ("nli", "target_then_nli"):
        assert [trial.seed for trial in trials[stage]] == [0, 1, 2, 3, 4]
        for trial in trials[stage]:
            assert (trial.method, trial.settings.nli_file, trial.settings.mnrl_scale) == (
                "sbert_nli", str(NLI_FILE.resolve()), 20.0)
    for stage in ("nli_sts", "target_then_nli_sts"):
        assert [trial.seed for trial in trials[stage]] == [0, 1, 2, 3, 4]
        for trial in trials[stage]:
            assert (trial.method, trial.settings.loss, trial.settings.train_file) == (
                "sbert", "cosine", str((DEMO_DIR / "sts-train.csv").resolve()))
    for stage in ("nli", "nli_sts", "target_then_nli", "target_then_nli_sts"):
        for trial in trials[stage]:
            training = trial.training
            assert (training.lr, training.batch_size, training.epochs, training.max_steps, training.lr_schedule,
                    trial.settings.pooling, trial.evaluation.select_checkpoint) == (
                2e-5, 16, 1, 20_000, "linear", "mean", "last"), stage


def run_refused(argv: list[str], tmp_path) -> str:
    """The error of a domain_adaptation command line refused before anything ran (exit code 2, nothing printed)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run_sweep(get_experiment("domain_adaptation"), ["--output-dir", str(tmp_path), *argv])
    assert code == 2, err.getvalue()
    assert out.getvalue() == ""  # refused before the card, so before anything could run
    return err.getvalue()


@pytest.mark.parametrize("content, message", [
    (None, "data file not found: {path}"),
    ("split\tsentence1\tsentence2\tgold\ntrain\ta\tb\tentailment\n", "{path}, line 1: NLI header lacks column\\(s\\) "
                                                                    "label"),
    ("split\tsentence1\tsentence2\tlabel\ntrain\ta\tb\tentails\n", "{path}, line 2: label 'entails' is none of"),
    ("split\tsentence1\tsentence2\tlabel\ntrain\ta\tb\tentailment\ndev\ta\tc\tcontradiction\n",
     "{path}: no premise of split 'train' has both an entailment and a contradiction"),
])
def test_a_missing_or_malformed_nli_file_is_refused_naming_it_before_anything_runs(content, message, tmp_path):
    path = tmp_path / "AllNLI.tsv"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    error = run_refused(["--quick", "--nli-file", str(path)], tmp_path)
    assert re.search(message.format(path=re.escape(str(path))), error), error


def test_domain_adaptation_without_quick_needs_an_nli_file(tmp_path):
    assert "--nli-file is required without --quick" in run_refused(["--model", "bert-base-uncased"], tmp_path)
