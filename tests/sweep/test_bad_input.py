"""Bad input fails before Ray starts or MLflow is written, with a message naming the bad value."""

import re
import socket

import pytest
import ray

from sentsweep.demo_data import DEMO_DIR
from sentsweep.errors import InputError
from sentsweep.trainables.catalog import get_method
from tests.sweep.test_sweep_end_to_end import SWEEP_SCRIPT, load_sweep

SWEEPS = SWEEP_SCRIPT.parent


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--poolings", "cls", "avg"], "setting pooling='avg': expected one of 'cls', 'mean', 'max'"),
        (["--ratios", "0.3", "1.0"], "setting noise_ratio=1.0 is out of range: must be < 1"),
        (["--ratios", "-0.2"], "setting noise_ratio=-0.2 is out of range: must be >= 0"),
        (["--search", "optuna", "--ratio-range", "0.1", "1.2"], "setting noise_ratio=1.2 is out of range"),
        (["--corpus", "missing.txt"], "data file not found: .*missing.txt"),
        (["--sts-dir", "."], "lacks its dev file sts-dev.csv"),
        (["--model", "./no/such/model"], "model path './no/such/model' does not exist"),
        (["--seeds", "two"], "seeds 'two'"),
        (["--sample-sizes", "0"], "setting sample_size=0 is out of range: must be >= 1"),
        (["--eval-task", "askubunto=."], "unknown evaluation task 'askubunto'"),
        (["--eval-task", "askubuntu=no/such/folder"], "askubuntu: folder not found: .*no/such/folder"),
        (["--set", "select_checkpoint=best_test"], "setting select_checkpoint='best_test': expected one of"),
        (["--set", "precision=fp8"], "setting precision='fp8': expected one of 'fp32', 'bf16'"),
        (["--set", "temprature=0.1"], "unknown setting 'temprature'; did you mean 'temperature'\\?"),
        (["--set", "lr=-1"], "setting lr=-1 is out of range: must be > 0"),
        (["--set", "temperature=0.1"], "setting 'temperature' is not used by the method\\(s\\) of this sweep: tsdae"),
        (["--set", "tie_decoder=maybe"], "setting tie_decoder='maybe' must be true or false"),
        (["--race", "--race-alpha", "1.5"], "--race-alpha 1.5: must be in \\(0, 1\\)"),
        (["--race", "--seeds", "3", "--race-rungs", "0.5"],
         "--race-rungs is the steps schedule's \\(--race-schedule steps\\), not async's"),
        (["--race", "--seeds", "3", "--race-schedule", "steps", "--race-rungs", "0.3", "1"],
         "--race-rungs 0.3 1.0: each must be in \\(0, 1\\)"),
        (["--race", "--seeds", "3", "--race-schedule", "steps", "--race-rungs", "0.3", "0.3"],
         "--race-rungs 0.3 0.3: each fraction of the steps given once"),
        (["--race", "--race-schedule", "steps", "--extend"], "--race and --extend: give one"),
        (["--alpha", "0"], "--alpha 0.0: must be in \\(0, 1\\)"),
        (["--max-failures", "-1"], "^error: --max-failures -1: must be >= 0$"),
        (["--search", "optuna", "--num-configs", "0"], "^error: --num-configs 0: must be >= 1$"),
        (["--lr", "Infinity"], "^error: --lr inf: must be a finite number$"),
        (["--set", "lr=Infinity"], "^error: setting lr=inf must be a finite number$"),
        (["--set", "lr=1e-3", "lr=2e-3"], "^error: --set lr=1e-3 lr=2e-3: lr is given twice; give it once$"),
        (["--set", "noise_ratio=1.5"], "^error: setting noise_ratio=1.5 is out of range: must be < 1$"),
        (["--set", "pooling=mean"], "^error: --set pooling=mean: pooling is an axis of this sweep .* --poolings$"),
        (["--search", "optuna", "--race"], "^error: --search optuna and --race: a race compares a fixed set"),
    ],
)
def test_bad_option_fails_before_launch(run_quick, extra, message):
    code, err = run_quick(*extra)
    assert code == 2
    assert re.search(message, err.strip()), err


def test_empty_corpus_is_named(run_quick, tmp_path):
    (tmp_path / "empty.txt").write_text("\n\n", encoding="utf-8")
    code, err = run_quick("--corpus", str(tmp_path / "empty.txt"))
    assert code == 2 and "empty corpus" in err and "empty.txt" in err


@pytest.mark.parametrize("column, value, message", [
    (4, "nan", "line 3: score 'nan' is not a finite number"),
    (4, "inf", "line 3: score 'inf' is not a finite number"),
    (6, "", "line 3: sentence 2 \\(column 7\\) is empty"),
    (4, "7.5", "line 3: score 7.5 is outside STS-B's 0-5 scale \\(STS-B Table 1: 0, different topics, to 5, "
               "equivalent\\)"),
    (4, "-3", "line 3: score -3 is outside STS-B's 0-5 scale"),
])
def test_a_bad_value_in_a_data_file_names_file_and_line(run_quick, tmp_path, column, value, message):
    sts = tmp_path / "sts"
    sts.mkdir()
    for name in ("sts-train.csv", "sts-dev.csv", "sts-test.csv"):
        (sts / name).write_text((DEMO_DIR / name).read_text(encoding="utf-8"), encoding="utf-8")
    lines = (sts / "sts-dev.csv").read_text(encoding="utf-8").splitlines()
    columns = lines[2].split("\t")
    columns[column] = value
    lines[2] = "\t".join(columns)
    (sts / "sts-dev.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, err = run_quick("--sts-dir", str(sts))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert re.search(f"{sts / 'sts-dev.csv'}, {message}", err), err


def test_a_dev_split_whose_scores_cannot_rank_is_named(run_quick, tmp_path):
    sts = tmp_path / "sts"
    sts.mkdir()
    for name in ("sts-train.csv", "sts-dev.csv", "sts-test.csv"):
        lines = (DEMO_DIR / name).read_text(encoding="utf-8").splitlines()
        if name == "sts-dev.csv":
            lines = ["\t".join(columns[:4] + ["3.0"] + columns[5:]) for columns in (line.split("\t") for line in lines)]
        (sts / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, err = run_quick("--sts-dir", str(sts))
    assert code == 2
    assert err.strip() == (f"error: {sts / 'sts-dev.csv'}: every pair's score is 3, so Spearman's rho is undefined "
                           "(nothing to rank); an evaluation split needs scores that differ")


def test_a_store_mlflow_cannot_open_is_named(run_quick, tmp_path):
    store = tmp_path / "store" / "mlflow.db"
    store.parent.mkdir()
    store.write_bytes(b"\x00not sqlite\x00" * 100)
    code, err = run_quick("--tracking-uri", f"sqlite:///{store}")
    assert code == 2
    assert err.strip() == f"error: MLflow cannot open the SQLite store sqlite:///{store}: file is not a database"
    assert store.read_bytes() == b"\x00not sqlite\x00" * 100


def test_a_tracking_uri_of_a_scheme_mlflow_cannot_store_to_is_named(run_quick):
    code, err = run_quick("--tracking-uri", "foo://user:secret@bar")
    assert code == 2
    assert re.fullmatch("error: MLflow has no store for the scheme 'foo' of the tracking URI foo://user:\\*\\*\\*@bar; "
                        "give a local path or a URI of one of: .*http://, https://, .*sqlite://.*", err.strip()), err


def test_unreachable_tracking_server_is_named(run_quick):
    uri = f"http://127.0.0.1:{closed_port()}"
    code, err = run_quick("--tracking-uri", uri)
    assert code == 2 and f"MLflow tracking server {uri} is unreachable" in err


def test_unknown_method_is_named():
    with pytest.raises(InputError, match="unknown method .tsdea.; did you mean .tsdae.. "
                                         "\\(known: tfidf, bm25, bm25_dense, frozen_encoder, sbert"):
        get_method("tsdea")


def test_a_grid_sample_size_above_the_corpus_fails_before_launch(tmp_path, monkeypatch, capsys):
    """sample_size's own grid (--quick: 128 and 256) on a 200-sentence corpus: refused, naming the size."""
    monkeypatch.chdir(tmp_path)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"sentence number {i}\n" for i in range(200)))
    module = load_sweep(SWEEPS / "sample_size.py")
    code = module.run_sweep(module.DEFINITION, ["--quick", "--output-dir", str(tmp_path / "out"), "--corpus",
                                                str(corpus)])
    assert code == 2
    assert "sample size 256 exceeds the corpus's 200 sentences" in capsys.readouterr().err
    assert not ray.is_initialized() and not (tmp_path / "mlflow.db").exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "script, extra, message",
    [
        ("nm_weight", ["--methods", "mlm+nm", "mlm+bogus"], "method 'mlm\\+bogus': unknown objective 'bogus'"),
        ("nm_weight", ["--weights", "0.1", "-1"], "setting w=-1.0 is out of range: must be >= 0"),
        ("learning_rate", ["--methods", "consert", "--set", "augmentations=token_shuffle,crop"], "unknown 'crop'"),
        ("tsdae_noise", ["--set", "noise_ratio=1.5"], "setting noise_ratio=1.5 is out of range"),
        # A misspelled key or value fails for every method, with the closest valid one suggested.
        ("augsbert", ["--set", "select_checkpoint=lats"], "setting select_checkpoint='lats': expected one of "
         "'best_sts_dev', 'last', 'validation_loss', 'best_task_dev'; did you mean 'last'\\?"),
        ("labelled_intersection", ["--set", "select_checkpoint=lats"], "did you mean 'last'"),
        ("gpl", ["--set", "select_checkpoint=lats"], "did you mean 'last'"),
        ("augsbert", ["--set", "temprature=0.1"], "unknown setting 'temprature'; did you mean 'temperature'"),
        ("sample_size", ["--sample-sizes", "128", "100000"], "sample size 100000 exceeds the corpus's 400 sentences"),
        ("labelled_intersection", ["--set", "train_file=no/such/pairs.csv"], "data file not found: no/such/pairs.csv"),
        ("labelled_intersection", ["--target-task", "askubuntu"], "--target-task 'askubuntu' is not one of the "),
        ("multitask_weight", ["--set", "validation_size=400"], "validation_size 400 leaves no training sentences"),
        ("tsdae_noise", ["--set", "warmup_steps=10", "warmup_ratio=0.1"], "warmup_steps=10 and warmup_ratio=0.1"),
    ],
)
def test_bad_method_settings_fail_before_launch(tmp_path, monkeypatch, capsys, script, extra, message):
    monkeypatch.chdir(tmp_path)
    module = load_sweep(SWEEPS / f"{script}.py")
    code = module.run_sweep(module.DEFINITION, ["--quick", "--output-dir", str(tmp_path / "out"), *extra])
    assert code == 2
    assert re.search(message, capsys.readouterr().err)
    assert not ray.is_initialized() and not (tmp_path / "mlflow.db").exists() and not (tmp_path / "out").exists()


def test_tsdae_from_an_encoder_decoder_that_would_keep_its_model_is_refused_before_anything_runs(run_quick, tmp_path,
                                                                                                tiny_model_dir):
    from sentsweep.models import build_tiny_encoder_decoder

    bart = build_tiny_encoder_decoder(tmp_path / "tiny-bart", tiny_model_dir, "bart")
    code, err = run_quick("--model", str(bart))
    assert code == 2
    assert err.strip() == (f"error: method 'tsdae' on the encoder-decoder {str(bart)!r} keeps no model: give "
                           "--keep-models none (its sentence model, the checkpoint's encoder, is not one "
                           "sentence-transformers reloads as trained)")
