"""A stage's progress in a notebook: one notebook progress bar (tqdm.auto's widget) per Ray Tune run, its status
(trials running, pending and failed, the best so far) beside it; on a terminal and in a log, `SweepProgress`.

`stage_progress` chooses: in an IPython kernel (Jupyter, VS Code's notebooks), `NotebookProgress`; elsewhere
`SweepProgress`, drawn on the stream a `sentsweep.run` call names (`sentsweep.sweep.execution.library_call`), else on
standard error. tqdm.auto falls back to a text bar where the kernel has no widgets (ipywidgets not installed).
"""

from __future__ import annotations

import sys

from tqdm.auto import tqdm as auto_tqdm

from sentsweep.sweep.execution.library_call import library_call
from sentsweep.sweep.execution.progress import SweepProgress


def in_notebook() -> bool:
    """Whether this interpreter is an IPython kernel (a notebook's), as IPython itself tells: its shell's config
    holds the kernel app. IPython is not imported for the question: a kernel has imported it already."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


class NotebookProgress(SweepProgress):
    """`SweepProgress` as a notebook shows it: one bar of the trials ended of all, the status line as its postfix,
    redrawn as it changes; a failed trial's reason goes to standard error (a `sentsweep.run` call keeps it in its
    result's output unless verbose)."""

    def setup(self, total_num_samples: int | None = None, **info) -> None:
        self._total = self.race_bound if self.race_bound is not None else total_num_samples or 0
        self._started = self._clock()
        self._ended_before = -1
        self._bar = auto_tqdm(total=self._total, desc=self.title, unit="trial", smoothing=0)

    def _show(self, trials: list, final: bool = False) -> None:
        ended, total, text = self.status(trials)
        if self._ended_before < 0:
            self._ended_before = ended
        if self._bar is None or (ended, total, text) == (self._bar.n, self._bar.total, self._last_text):
            return
        self._last_text = text
        self._bar.total, self._bar.n = total, ended
        self._bar.set_postfix_str(text, refresh=False)
        self._bar.refresh()

    def _say(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    def on_experiment_end(self, trials: list, **info) -> None:
        self._show(trials, final=True)
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def stage_progress(title: str, axes: list[str], metric: str, interval_s: float,
                   race_bound: int | None = None) -> SweepProgress:
    """The progress callback of one Ray Tune run: a notebook's bar in a kernel, else the terminal's or the log's
    line on the stream a `sentsweep.run` call names (standard error by default)."""
    if in_notebook():
        return NotebookProgress(title, axes, metric, interval_s, race_bound)
    call = library_call()
    return SweepProgress(title, axes, metric, interval_s, race_bound,
                         stream=call.progress_stream if call is not None else None)
