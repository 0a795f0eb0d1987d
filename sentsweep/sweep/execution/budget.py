"""A sweep command's compute budget: `--time-budget SECONDS` of wall clock and `--gpu-hours HOURS` of GPU time.

The clock starts once the cluster is checked and GPU packing settled, as the first trial can start
(`SweepBudget`); GPU time is what the running trials hold, each its GPU
fraction for as long as it runs (the `gpu_seconds` its run records: device-seconds times the fraction). Both
count this command only: a `--resume` has the budget its own command line gives.

`BudgetWatch`, a Ray Tune callback, looks at the trials at each step of Ray Tune's loop and, once a budget is
spent, sets `message` and interrupts the run as Ctrl-C does (SIGINT): Ray Tune stops the running trials and saves
the run with them and the waiting ones unfinished, so `--resume` continues each from its last checkpoint. The
runner then ends the sweep as `--pending-timeout` ends it (`BudgetSpent`: finished trials' results written, the
runs KILLED, the resume command printed). Ray Tune's own `time_budget_s` is not used: it ends the running trials
TERMINATED, as if they had finished, and a resumed run never runs them again. Like `PendingWatch`, a watch
pickles as a reference to this process's watch of the same run (`budget_watch_named`), and every run gets one (a
watch without a budget never fires): a restored Ray Tune run is watched with the budget of the command that
restored it.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable

from ray.tune import Callback


class BudgetSpent(Exception):
    """--time-budget or --gpu-hours ran out; the message says which and what was spent."""


class SweepBudget:
    """The command's budgets and what it has spent of them (`clock`: seconds, monotonic)."""

    def __init__(self, time_budget_s: float | None, gpu_hours: float | None, gpus_per_trial: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.time_budget_s, self.gpu_hours, self.gpus_per_trial = time_budget_s, gpu_hours, gpus_per_trial
        self._clock = clock
        self.started = self._last = clock()
        self.gpu_seconds = 0.0

    @property
    def limited(self) -> bool:
        return self.time_budget_s is not None or self.gpu_hours is not None

    def spend(self, running_trials: int) -> None:
        """Count the GPU time of `running_trials` since the last call."""
        now = self._clock()
        self.gpu_seconds += (now - self._last) * running_trials * self.gpus_per_trial
        self._last = now

    def spent(self) -> str | None:
        """What ran out, or None while both budgets last."""
        elapsed = self._clock() - self.started
        if self.time_budget_s is not None and elapsed >= self.time_budget_s:
            return f"--time-budget {self.time_budget_s:g}: the sweep ran {elapsed:.0f} s"
        if self.gpu_hours is not None and self.gpu_seconds >= self.gpu_hours * 3600:
            return (f"--gpu-hours {self.gpu_hours:g}: the trials held {self.gpu_seconds / 3600:.3f} GPU-hours "
                    f"({self.gpus_per_trial:g} GPU each)")
        return None


class BudgetWatch(Callback):
    """Interrupts a Ray Tune run once the budget is spent (see the module docstring)."""

    def __init__(self, name: str, budget: SweepBudget | None,
                 interrupt: Callable[[], None] = lambda: signal.raise_signal(signal.SIGINT)) -> None:
        self.name, self.budget = name, budget
        self.message: str | None = None
        self._interrupt = interrupt
        _WATCHES[name] = self

    def __reduce__(self):
        return budget_watch_named, (self.name,)

    def on_step_begin(self, iteration: int, trials: list, **info) -> None:
        if self.message is not None or self.budget is None:
            return
        self.budget.spend(sum(trial.status == "RUNNING" for trial in trials))
        spent = self.budget.spent()
        if spent:
            unfinished = sum(trial.status in ("RUNNING", "PENDING", "PAUSED") for trial in trials)
            self.message = f"{spent}; {unfinished} trial(s) of this stage unfinished, stopped at their last checkpoint"
            self._interrupt()


_WATCHES: dict[str, BudgetWatch] = {}


def budget_watch_named(name: str) -> BudgetWatch:
    """The watch this process created for run `name`, else one that never fires."""
    return _WATCHES.get(name) or BudgetWatch(name, None)


def budget_watch(budget: SweepBudget, run_name: str) -> BudgetWatch:
    """The watch of one Ray Tune run: under the command's budget, or one that never fires without one."""
    return BudgetWatch(run_name, budget if budget.limited else None)
