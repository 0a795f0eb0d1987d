"""In-domain supervised SBERT as the TSDAE paper trains it (§5.1, App. B): USEB's labelled training pairs, MNRL
(MSE on TwitterPara), and the labelled-data intersection scored on a USEB task (App. D, Table 10)."""

import contextlib
import io

import pytest
import torch
import torch.nn.functional as F

from sentsweep.data import read_scored_pairs
from sentsweep.errors import InputError
from sentsweep.experiments.tsdae.labelled_intersection import (
    DEFINITION,
    IntersectionOptions,
    check_target,
    supervised_settings,
)
from sentsweep.sweep.launch.entry_point import run_sweep
from sentsweep.trainables.sbert import build_sbert
from tests.conftest import typed_trial
from tests.tasks.test_tasks import askubuntu_folder, write


def useb_supervised_folder(tmp_path):
    """USEB's data-train/askubuntu/supervised: train.org and train.para, aligned relevant pairs."""
    folder = tmp_path / "data-train" / "askubuntu" / "supervised"
    write(folder / "train.org", "how to install a printer\nwifi drops after suspend\nupgrade fails on boot\n")
    write(folder / "train.para", "printer setup on ubuntu\nwireless lost after sleep\nboot error after upgrade\n")
    return folder


def test_useb_training_pairs_load_from_the_release_files(tmp_path):
    pairs = read_scored_pairs(useb_supervised_folder(tmp_path))
    assert pairs.sentences1[1] == "wifi drops after suspend" and pairs.sentences2[1] == "wireless lost after sleep"
    assert pairs.scores == [1.0, 1.0, 1.0]
    twitter = tmp_path / "data-train" / "twitter" / "supervised"
    write(twitter / "train.s1", "a tweet\nanother tweet\n")
    write(twitter / "train.s2", "a post\nsomething else\n")
    write(twitter / "train.lbl", "0.8\n0.2\n")
    assert read_scored_pairs(twitter).scores == [0.8, 0.2]
    write(twitter / "train.lbl", "0.8\n")
    with pytest.raises(InputError, match="same number of lines"):
        read_scored_pairs(twitter)


def test_mnrl_equals_its_formula_by_hand(tiny_model_dir, tmp_path):
    """-1/M sum_i log softmax_j(20 cos(f(x_i), f(y_j)))_i over the batch (TSDAE paper §5.1, sigma = cosine)."""
    train_file = str(useb_supervised_folder(tmp_path))
    trial = typed_trial(dict(method="sbert", model=str(tiny_model_dir), train_file=train_file, loss="mnrl",
                             pooling="mean"))
    setup = build_sbert(trial)
    setup.model.eval()  # no dropout, so the hand computation sees the same embeddings
    batch = setup.examples
    with torch.no_grad():
        loss = setup.batch_loss(batch, None)
        first = setup.model.encode([a for a, _ in batch], convert_to_tensor=True)
        second = setup.model.encode([b for _, b in batch], convert_to_tensor=True)
    scores = 20.0 * F.normalize(first, dim=1) @ F.normalize(second, dim=1).T
    by_hand = -torch.log_softmax(scores, dim=1).diagonal().mean()
    torch.testing.assert_close(loss, by_hand, rtol=1e-4, atol=1e-5)


def test_a_usebs_target_task_stops_sbert_early_on_its_dev_split_with_mnrl(tmp_path):
    args = IntersectionOptions(target_task="askubuntu")
    constants = {"eval_tasks": {"askubuntu": str(askubuntu_folder(tmp_path))}}
    assert supervised_settings(args, constants, overrides={}) == {
        "select_checkpoint": "best_task_dev", "selection_task": "askubuntu", "loss": "mnrl"}
    assert "loss" not in supervised_settings(args, constants, overrides={"loss": "cosine"})  # --set wins
    assert supervised_settings(IntersectionOptions(target_task=None), constants, {}) == {}
    with pytest.raises(InputError, match="--target-task 'scidocs' is not one of the --eval-task tasks \\(askubuntu\\)"):
        check_target(IntersectionOptions(target_task="scidocs"), constants)


def test_a_target_task_without_its_labelled_pairs_is_refused_before_sbert_trains_on_sts_pairs(tmp_path):
    """TSDAE §6 trains in-domain SBERT on the task's own labelled pairs: without --set train_file the SBERT stages
    would train on the STS benchmark's pairs with the task's MNRL and be compared with Table 10."""
    common = ["--quick", "--output-dir", str(tmp_path / "out"), "--tracking-uri", f"sqlite:///{tmp_path}/m.db",
              "--target-task", "askubuntu", "--eval-task", f"askubuntu={askubuntu_folder(tmp_path)}"]
    line = ("target task 'askubuntu': give its labelled training pairs with --set "
            "train_file=data-train/askubuntu/supervised (USEB's release): TSDAE §6 trains SBERT in-domain, on the "
            "task's own pairs")
    card, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(card), contextlib.redirect_stderr(err):
        assert run_sweep(DEFINITION, [*common, "--dry-run"]) == 0
        assert run_sweep(DEFINITION, common) == 2
    assert f"**Cannot run as given:** {line}" in card.getvalue()
    assert err.getvalue().splitlines() == [f"error: {line}"]
    assert not (tmp_path / "m.db").exists()
    given = [*common, "--set", f"train_file={useb_supervised_folder(tmp_path)}", "--dry-run"]
    card = io.StringIO()
    with contextlib.redirect_stdout(card):
        assert run_sweep(DEFINITION, given) == 0
    assert "Cannot run as given" not in card.getvalue()


def test_the_reference_trains_with_its_papers_fixed_steps_and_sbert_with_app_b():
    protocol = DEFINITION.protocol
    tsdae = protocol.settings_of("tsdae")
    assert (tsdae["max_steps"], tsdae["select_checkpoint"], tsdae["batch_size"]) == (100_000, "last", 8)
    constants = protocol.constants()
    assert (constants["epochs"], constants["max_steps"], constants["batch_size"]) == (10, 20_000, 64)


def test_augsbert_refuses_mnrl_on_its_scored_silver_pairs():
    with pytest.raises(InputError, match="loss='mnrl': augsbert trains on the teacher's scored silver pairs"):
        typed_trial(dict(method="augsbert", model="m", train_file="t", loss="mnrl"))
