"""What the terminal shows while a sweep runs: per Ray Tune run (a stage, or a race's round) its progress (tqdm):
its trials finished, running, pending and failed, the time taken and left, and the best configuration so far on
dev; each failed trial's reason as it fails; then the runner's tables.

On a terminal the progress is a bar updated in place (the run, its trials ended of all, the time taken and left)
over a status line (the trials running, pending and failed, and the best value so far) and, on a line of its own,
the best configuration so far, so that each reads whole at 80 columns (a line longer than the terminal is cut at
its end); elsewhere (`ray submit`, SLURM logs) one line is printed anew every --progress-interval seconds and once
more as the run ends. `--verbose` gives Ray Tune's own output back (its trial tables, a configuration box as each
trial starts and a result box as it ends, its INFO log lines) and leaves the bar out.

The libraries' own output is held back as `sentsweep.sweep.execution.library_output` says.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ray.tune import Callback
from tqdm import tqdm

from sentsweep.random_seeds import resolve_seed
from sentsweep.terminal import wrap_paragraph

BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}]"
STATUS_FORMAT = "{desc}"  # the status line under the bar: its text alone
# the bar line's columns besides its title, with a bar of 10 columns: ": 45%|..........| 9/20 [01:02<01:20]"
BAR_FIXED_COLUMNS = 40
ENDED = ("TERMINATED", "STOPPED", "KILLED", "ERROR")  # the states `SweepProgress.counts` counts as ended
LINE_FORMAT = "{desc}: {n_fmt}/{total_fmt} trials ended [{elapsed} elapsed, {remaining} left{postfix}]"


class SweepProgress(Callback):
    """Ray Tune callback: one progress line for a Ray Tune run, and each failed trial's reason as it fails.

    `axes` name the settings that tell the run's configurations apart (their seeds aside); the best one so far is
    the one with the highest mean, over its trials (seeds), of the last `metric` each reported, as the tables
    choose on dev. Pending counts trials waiting to start or paused by a scheduler (and, once a Ctrl-C ended the
    run, those it left unstarted); finished counts the trials that ran to their end, stopped those a scheduler (or a
    race) ended before their last step, killed those an interrupted driver ended while they ran. A race's run
    (`race_bound`: the trials it runs at most, configurations x seeds or its budget) counts against that bound, and
    its pending trials are those created and not started: the race decides the others as results come. `stream`
    (default: sys.stderr) and `clock` are for tests.
    """

    def __init__(self, title: str, axes: list[str], metric: str, interval_s: float, race_bound: int | None = None,
                 stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.title = title
        self.race_bound = race_bound
        self.axes = axes
        self.metric = metric
        self.interval_s = interval_s
        self._stream = stream
        self._clock = clock
        self._total = 0
        self._scores: dict[str, tuple[str, float]] = {}  # trial id -> (configuration, last value of metric)
        self._bar: tqdm | None = None
        self._status_line: tqdm | None = None  # under the bar: trials running, pending, failed; the best value
        self._best_line: tqdm | None = None  # under the status line: the best configuration so far
        self._columns = 0  # the terminal's width (0: it reports none)
        self._started = 0.0
        self._ended_before = 0  # trials a resumed run had ended already (left out of the rate, hence the ETA)
        self._last_line = float("-inf")  # when the line was last printed (the bar: drawn)
        self._last_text = ""  # the bar's status text when last drawn; without a bar, the line last printed
        self._completed: set[str] = set()  # trials Ray Tune completed at their end
        self._stopped: set[str] = set()  # ... and those it completed when a scheduler stopped them early

    def __getstate__(self) -> dict:
        # Ray Tune pickles a run's callbacks with its state; a stream and a drawn bar do not travel
        return self.__dict__ | {"_stream": None, "_bar": None, "_status_line": None, "_best_line": None}

    @property
    def stream(self) -> TextIO:
        return self._stream or sys.stderr

    def setup(self, total_num_samples: int | None = None, **info) -> None:
        self._total = self.race_bound if self.race_bound is not None else total_num_samples or 0
        self._started = self._clock()
        self._ended_before = -1  # counted at the first step, when the restored trials are known
        if self.stream.isatty():
            # as wide as the terminal; one that reports no size (a pseudo-terminal never sized) gets 100 columns and
            # 20 rows, since tqdm takes its 0 columns for no room and draws nothing there
            self._columns = terminal_columns(self.stream)
            sized = self._columns > 0
            shape = dict(file=self.stream, dynamic_ncols=sized, ncols=None if sized else 100,
                         nrows=None if sized else 20)
            title = cut(self.title, max((self._columns or 100) - BAR_FIXED_COLUMNS, 12))
            self._bar = tqdm(total=self._total, desc=title, unit="trial", bar_format=BAR_FORMAT, smoothing=0,
                             position=0, **shape)
            self._status_line = tqdm(total=0, desc="", bar_format=STATUS_FORMAT, position=1, leave=False, **shape)
            self._best_line = tqdm(total=0, desc="", bar_format=STATUS_FORMAT, position=2, leave=False, **shape)

    def on_step_end(self, iteration: int, trials: list, **info) -> None:
        self._show(trials)

    def on_trial_result(self, iteration: int, trials: list, trial, result: dict, **info) -> None:
        if self.metric in result:
            self._scores[trial.trial_id] = (self.configuration(trial.config), float(result[self.metric]))

    def on_trial_complete(self, iteration: int, trials: list, trial, **info) -> None:
        (self._stopped if stopped_early(trial.last_result) else self._completed).add(trial.trial_id)

    def on_trial_recover(self, iteration: int, trials: list, trial, **info) -> None:
        self._say(f"trial {trial.trial_id} ({self.describe(trial.config)}) failed and is retried from its last "
                  f"checkpoint: {failure_reason(trial)}")

    def on_trial_error(self, iteration: int, trials: list, trial, **info) -> None:
        self._scores.pop(trial.trial_id, None)
        self._say(f"trial {trial.trial_id} ({self.describe(trial.config)}) failed: {failure_reason(trial)}"
                  + (f"\n  traceback: {trial.error_file}" if trial.error_file else ""))

    def on_experiment_end(self, trials: list, **info) -> None:
        self._show(trials, final=True)
        if self._bar is not None:
            self._best_line.close()  # cleared, as the status line: the bar's line stays, with the run's count and time
            self._status_line.close()
            self._bar.close()
            self._bar = self._status_line = self._best_line = None

    def configuration(self, config: dict) -> str:
        """The configuration a trial runs, by the run's axes (their seeds aside)."""
        return ", ".join(f"{name}={config[name]}" for name in self.axes if name in config)

    def describe(self, config: dict) -> str:
        """A trial as the tables know it: its configuration and seed."""
        return ", ".join(filter(None, [self.configuration(config), f"seed {resolve_seed(config)}"]))

    def best(self) -> tuple[str, float, int] | None:
        """(configuration, mean of its trials' last reported metric, how many trials) of the best so far."""
        by_configuration: dict[str, list[float]] = {}
        for configuration, value in self._scores.values():
            by_configuration.setdefault(configuration, []).append(value)
        if not by_configuration:
            return None
        configuration, values = max(by_configuration.items(), key=lambda item: sum(item[1]) / len(item[1]))
        return configuration, sum(values) / len(values), len(values)

    def counts(self, trials: list) -> tuple[dict[str, int], int]:
        """({state: trials}, trials in all) of the states `ended_state` tells (finished, stopped, killed), RUNNING,
        PENDING and ERROR (failed)."""
        counts = {"TERMINATED": 0, "STOPPED": 0, "KILLED": 0, "RUNNING": 0, "PENDING": 0, "ERROR": 0}
        for trial in trials:
            state = "PENDING" if trial.status == "PAUSED" else trial.status
            counts[self.ended_state(trial) if state == "TERMINATED" else state] += 1
        total = max(self._total, len(trials))
        if self.race_bound is None:
            counts["PENDING"] += total - len(trials)  # not yet created by the search algorithm
        return counts, total

    def ended_state(self, trial) -> str:
        """How a trial Ray Tune reports TERMINATED ended: TERMINATED (finished: it ran to its end), STOPPED (a
        scheduler stopped it before its last step), KILLED (a stopped driver ended it while it ran) or PENDING (a
        stopped driver ended it before it started)."""
        if trial.trial_id in self._stopped:
            return "STOPPED"
        if trial.trial_id in self._completed or (trial.last_result or {}).get("done"):
            return "TERMINATED"
        # Ray Tune gives a trial that never reported a last result of its id alone
        return "KILLED" if set(trial.last_result or {}) - {"trial_id"} else "PENDING"

    def status(self, trials: list) -> tuple[int, int, str]:
        """(trials ended, trials in all, what the log's line says after its counts)."""
        counts, total = self.counts(trials)
        text = (f"{counts['TERMINATED']} finished, {counts['RUNNING']} running, {counts['PENDING']} pending, "
                f"{counts['ERROR']} failed") + ended_early(counts)
        best = self.best()
        if best is not None:
            configuration, value, n = best
            text += f"; best {self.metric} {value:.2f} (mean of {n}): {configuration or 'the one configuration'}"
        return sum(counts[state] for state in ENDED), total, text

    def status_lines(self, trials: list, columns: int) -> tuple[str, str]:
        """The terminal's two lines under the bar, each in `columns`: the trials running, pending and failed (the
        bar counts those ended) and the best value so far (the metric named where the line has room); then the best
        configuration so far, indented on a line of its own (empty until a trial reports)."""
        counts, _ = self.counts(trials)
        text = (f"  {counts['RUNNING']} running, {counts['PENDING']} pending, {counts['ERROR']} failed"
                + ended_early(counts))
        best = self.best()
        if best is None:
            return cut(text, columns), ""
        configuration, value, n = best
        named = f"{text}; best so far {value:.2f} ({self.metric}, mean of {n}):"
        status = named if len(named) <= columns else cut(f"{text}; best so far {value:.2f} (mean of {n}):", columns)
        return status, cut(f"    {configuration or 'the one configuration'}", columns)

    def _show(self, trials: list, final: bool = False) -> None:
        ended, total, text = self.status(trials)
        if self._ended_before < 0:
            self._ended_before = ended
        now = self._clock()
        if self._bar is not None:  # redrawn as it changes, and each second for its clock
            if (ended, total, text) != (self._bar.n, self._bar.total, self._last_text) or now - self._last_line >= 1:
                self._last_line, self._last_text = now, text
                self._bar.initial, self._bar.total, self._bar.n = self._ended_before, total, ended
                self._bar.refresh()
                columns = terminal_columns(self.stream) or self._columns or 100
                status, best = self.status_lines(trials, columns - 1)
                self._status_line.set_description_str(status)
                self._best_line.set_description_str(best)
            return
        if final or now - self._last_line >= self.interval_s:
            line = tqdm.format_meter(ended, total, now - self._started, prefix=self.title, unit="trial",
                                     bar_format=LINE_FORMAT, postfix=text, initial=self._ended_before)
            if line != self._last_text:  # the run's end, as its last step printed it, is not printed twice
                print(line, file=self.stream, flush=True)
            self._last_line, self._last_text = now, line

    def _say(self, message: str) -> None:
        if self._bar is not None:  # over the bar, wrapped to the terminal's width
            columns = terminal_columns(self.stream) or self._columns or 100
            self._bar.write("\n".join(wrap_paragraph(line, columns, subsequent="    ") for line in message.split("\n")),
                            file=self.stream)
        else:
            print(message, file=self.stream, flush=True)


def ended_early(counts: dict[str, int]) -> str:
    """The trials stopped by a scheduler and killed by a stopped driver, where there are any, for a status line."""
    return "".join(f", {counts[state]} {label}" for state, label in (("STOPPED", "stopped early"),
                                                                     ("KILLED", "killed")) if counts[state])


def stopped_early(result: dict | None) -> bool:
    """Whether a trial's last result is before its last step (a scheduler stopped it)."""
    result = result or {}
    return "step" in result and "total_steps" in result and result["step"] < result["total_steps"]


def cut(text: str, columns: int) -> str:
    """`text` in at most `columns` characters, cut at its end with an ellipsis."""
    return text if len(text) <= columns else text[:max(columns - 1, 0)] + "…"


def terminal_columns(stream: TextIO) -> int:
    """The width of the terminal `stream` writes to; 0 where it reports none (a pseudo-terminal never sized)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 0


def failure_reason(trial) -> str:
    """The last line of the trial's error file (Ray Tune's traceback of its last failure): the exception."""
    path = trial.error_file
    if path and Path(path).is_file():
        lines = [line.strip() for line in Path(path).read_text(encoding="utf-8", errors="replace").splitlines()]
        lines = [line for line in lines if line]
        if lines:
            return lines[-1]
    return "no error file (see the trial's MLflow run, tag failure_reason)"
