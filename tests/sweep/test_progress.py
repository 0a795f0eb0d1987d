"""What a sweep prints: one progress line per stage (in place on a terminal, every --progress-interval seconds in
a log), each failed trial's reason, then the tables; --verbose gives Ray Tune's own output back."""

import contextlib
import io
import logging
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import ray

from sentsweep.search_spaces.protocol import project_protocol
from sentsweep.search_spaces.tsdae import QUICK_SETTINGS
from sentsweep.sweep import Stage, SweepDefinition, run_sweep
from sentsweep.sweep.config.options import SweepOptions, parse_options
from sentsweep.sweep.execution.library_output import QUIET_SETTINGS, library_output, ray_logging_level, tune_verbosity
from sentsweep.sweep.execution.progress import SweepProgress
from tests.helpers.cluster_helpers import sqlite_store

ROOT = Path(__file__).resolve().parents[2]
TABLE_TITLE = "mean ± std over seeds"


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def trial(trial_id, status, error_file=None, last_result=None, **config):
    return SimpleNamespace(trial_id=trial_id, status=status, config=config, error_file=error_file,
                           last_result=last_result or {})


def test_a_log_gets_a_line_every_interval_with_counts_time_left_and_the_best_configuration():
    stream, clock = io.StringIO(), Clock()
    progress = SweepProgress("stage 1/2 'ratio'", ["noise_ratio"], "best_sts_dev", interval_s=30, stream=stream,
                             clock=clock)
    progress.setup(total_num_samples=4)
    trials = [trial("a", "RUNNING", noise_ratio=0.3, seed=0), trial("b", "RUNNING", noise_ratio=0.6, seed=0),
              trial("c", "PENDING", noise_ratio=0.3, seed=1)]  # the fourth not yet created by the search
    progress.on_step_end(0, trials)
    clock.now = 20.0
    progress.on_trial_result(1, trials, trials[0], {"best_sts_dev": 50.0})
    progress.on_trial_result(1, trials, trials[1], {"best_sts_dev": 58.0})
    trials[0].status = "TERMINATED"
    progress.on_trial_complete(1, trials, trials[0])
    progress.on_step_end(1, trials)  # within the interval: no line
    clock.now = 40.0
    trials[2].status = "RUNNING"
    progress.on_trial_result(2, trials, trials[2], {"best_sts_dev": 70.0})
    progress.on_step_end(2, trials)
    lines = stream.getvalue().splitlines()
    assert lines == [
        "stage 1/2 'ratio': 0/4 trials ended [00:00 elapsed, ? left, 0 finished, 2 running, 2 pending, 0 failed]",
        "stage 1/2 'ratio': 1/4 trials ended [00:40 elapsed, 02:00 left, 1 finished, 2 running, 1 pending, "
        "0 failed; best best_sts_dev 60.00 (mean of 2): noise_ratio=0.3]",
    ]
    clock.now = 41.0
    progress.on_experiment_end(trials)  # the run's end always gets its line
    assert len(stream.getvalue().splitlines()) == 3
    progress.on_experiment_end(trials)  # ... once: the same line again is not printed
    assert len(stream.getvalue().splitlines()) == 3


NM_WEIGHT_AXES = ["method", "w", "pooling"]


def nm_weight_progress(stream) -> tuple[SweepProgress, list]:
    """A stage of nm_weight's grid with two seeds of its best configuration reported."""
    progress = SweepProgress("stage 2/2 'method x w x pooling'", NM_WEIGHT_AXES, "best_sts_dev", 30, stream=stream,
                             clock=Clock())
    progress.setup(total_num_samples=24)
    trials = [trial(f"t{seed}", "RUNNING", method="mlm+nm", w=1.0, pooling="mean", seed=seed) for seed in (0, 1)]
    for index, item in enumerate(trials):
        progress.on_trial_result(1, trials, item, {"best_sts_dev": 58.27 + index})
    return progress, trials


def test_the_status_lines_show_the_best_value_and_its_whole_configuration_at_80_columns():
    progress, trials = nm_weight_progress(io.StringIO())
    status, best = progress.status_lines(trials, 79)
    assert status == "  2 running, 22 pending, 0 failed; best so far 58.77 (best_sts_dev, mean of 2):"
    assert best == "    method=mlm+nm, w=1.0, pooling=mean"  # on a line of its own, whole
    status, _ = progress.status_lines(trials, 70)  # no room for the metric's name: the value stays
    assert status == "  2 running, 22 pending, 0 failed; best so far 58.77 (mean of 2):"


def test_a_terminal_of_80_columns_shows_the_bar_the_counts_and_the_best_configuration_whole():
    import pty
    import re
    import struct
    import termios
    from fcntl import ioctl

    leader, follower = pty.openpty()
    ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    with os.fdopen(follower, "w", encoding="utf-8") as terminal:
        progress, trials = nm_weight_progress(terminal)
        progress.on_step_end(1, trials)
        progress.on_experiment_end(trials)
    chunks = []  # all the terminal was sent, read to its end (EIO once the follower is closed)
    with contextlib.suppress(OSError):
        while chunk := os.read(leader, 65536):
            chunks.append(chunk)
    os.close(leader)
    shown = b"".join(chunks).decode("utf-8")
    lines = [re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", line).rstrip() for line in re.split(r"[\r\n]+", shown)]
    assert "    method=mlm+nm, w=1.0, pooling=mean" in lines
    assert any(line.endswith("best so far 58.77 (best_sts_dev, mean of 2):") for line in lines)
    assert all(len(line) <= 80 for line in lines)


def test_a_race_counts_against_its_bound_and_only_created_trials_are_pending():
    stream = io.StringIO()
    progress = SweepProgress("race", ["noise_ratio"], "best_sts_dev", interval_s=30, race_bound=12, stream=stream,
                             clock=Clock())
    progress.setup(total_num_samples=sys.maxsize)  # the race's one Ray Tune run: as many samples as it asks for
    trials = [trial("a", "TERMINATED", noise_ratio=0.3, seed=0), trial("b", "RUNNING", noise_ratio=0.6, seed=0),
              trial("c", "PENDING", noise_ratio=0.3, seed=1)]
    progress.on_trial_complete(0, trials, trials[0])
    progress.on_step_end(0, trials)
    assert stream.getvalue().splitlines() == [
        "race: 1/12 trials ended [00:00 elapsed, ? left, 1 finished, 1 running, 1 pending, 0 failed]"]


def test_trials_stopped_early_or_killed_by_a_ctrl_c_are_counted_as_such_not_as_finished():
    stream = io.StringIO()
    progress = SweepProgress("tsdae_deletion", ["noise_ratio"], "best_sts_dev", interval_s=30, stream=stream,
                             clock=Clock())
    progress.setup(total_num_samples=5)
    trials = [trial(name, "RUNNING", noise_ratio=0.3, seed=seed) for seed, name in enumerate("abcde")]
    for ran in trials[:4]:
        ran.last_result = {"step": 10, "total_steps": 40, "best_sts_dev": 50.0}
    trials[0].status, trials[0].last_result = "TERMINATED", {"step": 40, "total_steps": 40, "done": True}
    progress.on_trial_complete(1, trials, trials[0])  # ran to its end
    trials[1].status = "TERMINATED"
    progress.on_trial_complete(1, trials, trials[1])  # a scheduler stopped it at step 10 of 40
    for interrupted in trials[2:]:  # Ctrl-C: Ray Tune ends the running trials and the unstarted one TERMINATED
        interrupted.status = "TERMINATED"
    trials[4].last_result = {"trial_id": "e"}  # what Ray Tune gives a trial that never reported
    progress.on_experiment_end(trials)
    assert stream.getvalue().splitlines() == [
        "tsdae_deletion: 4/5 trials ended [00:00 elapsed, ? left, 1 finished, 0 running, 1 pending, 0 failed, "
        "1 stopped early, 2 killed]"]


def test_a_failed_trial_is_printed_with_its_reason_and_leaves_the_best_configuration(tmp_path):
    error_file = tmp_path / "error.txt"
    error_file.write_text("Failure # 1\nTraceback (most recent call last):\n  File \"loop.py\", line 9\n"
                          "FloatingPointError: loss is nan at step 3\n\n")
    stream = io.StringIO()
    progress = SweepProgress("temperature", ["temperature"], "best_sts_dev", 30, stream=stream, clock=Clock())
    progress.setup(total_num_samples=2)
    trials = [trial("t1", "RUNNING", temperature=1e-300, seed=0), trial("t2", "RUNNING", temperature=0.05, seed=0)]
    progress.on_trial_result(1, trials, trials[0], {"best_sts_dev": 90.0})
    progress.on_trial_result(1, trials, trials[1], {"best_sts_dev": 40.0})
    trials[0].status, trials[0].error_file = "ERROR", str(error_file)
    progress.on_trial_error(2, trials, trials[0])
    assert stream.getvalue().splitlines() == [
        "trial t1 (temperature=1e-300, seed 0) failed: FloatingPointError: loss is nan at step 3",
        f"  traceback: {error_file}",
    ]
    assert progress.best() == ("temperature=0.05", 40.0, 1)
    assert progress.status(trials)[:2] == (1, 2)  # a failed trial has ended


def test_verbose_gives_ray_tune_its_tables_and_info_logs_back():
    quiet, verbose = parse_options(SweepOptions, []), parse_options(SweepOptions, ["--verbose"])
    assert (tune_verbosity(quiet.verbose), ray_logging_level(quiet.verbose)) == (0, logging.WARNING)
    assert (tune_verbosity(verbose.verbose), ray_logging_level(verbose.verbose)) == (1, logging.INFO)
    assert parse_options(SweepOptions, ["--progress-interval", "5"]).progress_interval == 5.0


@pytest.mark.parametrize("value", ["0", "-3", "soon", "inf"])
def test_a_bad_progress_interval_is_refused_naming_it(value, capsys):
    with pytest.raises(SystemExit):
        parse_options(SweepOptions, ["--progress-interval", value])
    assert f"--progress-interval: {value!r} is not a number of seconds > 0" in capsys.readouterr().err


def test_quiet_settings_last_as_long_as_the_sweep_and_keep_what_the_user_set(monkeypatch):
    for name in QUIET_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TUNE_PRINT_ALL_TRIAL_ERRORS", "1")
    with library_output(verbose=False):
        assert os.environ["RAY_AIR_NEW_OUTPUT"] == "0"
        assert os.environ["TUNE_PRINT_ALL_TRIAL_ERRORS"] == "1"
    assert "RAY_AIR_NEW_OUTPUT" not in os.environ and os.environ["TUNE_PRINT_ALL_TRIAL_ERRORS"] == "1"
    with library_output(verbose=True):
        assert "RAY_AIR_NEW_OUTPUT" not in os.environ


def test_ray_tunes_own_resume_hint_is_left_to_verbose(caplog):
    """An interrupted Ray Tune run logs how to restore it with Ray's API; the sweep prints its --resume line."""
    hint = ("Experiment has been interrupted, but the most recent state was saved.\n"
            "Resume experiment with: Tuner.restore(path=\"/tmp/out/ray/run\", trainable=...)")
    logger = logging.getLogger("ray.tune.tune")
    with caplog.at_level(logging.WARNING), library_output(verbose=False):
        logger.warning(hint)
        logger.error("a Ray Tune error")
    assert [record.getMessage() for record in caplog.records] == ["a Ray Tune error"]
    caplog.clear()
    with caplog.at_level(logging.WARNING), library_output(verbose=True):
        logger.warning(hint)
    assert [record.getMessage() for record in caplog.records] == [hint]


@pytest.mark.slow  # runs the demo sweep
def test_the_demo_prints_at_most_45_lines_before_its_table(tmp_path):
    command = [sys.executable, str(ROOT / "sweeps" / "tsdae_deletion.py"), "--quick", "--output-dir", str(tmp_path),
               "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}"]
    result = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=os.environ | {"RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": str(ROOT)}, timeout=900)
    assert result.returncode == 0, result.stdout
    lines = result.stdout.splitlines()
    before_table = next(index for index, line in enumerate(lines) if TABLE_TITLE in line)
    assert before_table <= 45, "\n".join(lines[:before_table])
    assert any("8/8 trials ended" in line and "8 finished" in line for line in lines[:before_table])
    assert not any(text in result.stdout for text in ("Trial status", "TensorBoard", "View detailed results"))


def failing_definition(name: str, temperatures: list[float]) -> SweepDefinition:
    return SweepDefinition(
        name=name,
        description="SimCSE at temperatures, one so small that the logits overflow",
        protocol=project_protocol(dict(method="simcse", pooling="mean", batch_size=8, seeds=1),
                                  QUICK_SETTINGS | {"max_steps": 20, "eval_steps": 10}),
        stages=[Stage("temperature", lambda args: {"temperature": temperatures})],
    )


def run_in_process(definition, workdir, *extra):
    workdir.mkdir()
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        code = run_sweep(definition, ["--quick", "--tracking-uri", sqlite_store(workdir),
                                      "--output-dir", str(workdir / "out"), *extra])
    ray.shutdown()
    return code, output.getvalue()


@pytest.mark.slow  # runs two small sweeps
def test_a_failed_trials_reason_is_printed_and_verbose_brings_ray_tunes_tables_back(tmp_path, capsys, shared_ray):
    code, printed = run_in_process(failing_definition("progress_fail", [0.05, 1e-300]), tmp_path / "quiet",
                                   "--max-failures", "0")
    err = capsys.readouterr().err
    assert code == 0, printed + err
    # the overflowing value's two seeds, each printed as it fails (in the order the trials end)
    failures = [line for line in err.splitlines() if " failed: " in line]
    assert sorted(line.split(" (", 1)[1].split(") failed: ")[0] for line in failures) == [
        "temperature=1e-300, seed 0", "temperature=1e-300, seed 1"], err
    assert all(line.endswith("FloatingPointError: loss is nan at step 0") for line in failures), err
    assert "Trial status" not in printed + err
    code, printed = run_in_process(failing_definition("progress_verbose", [0.05]), tmp_path / "verbose",
                                   "--verbose")
    err = capsys.readouterr().err
    assert code == 0, printed + err
    assert "Trial status: 2 TERMINATED" in printed and "trials ended" not in err
