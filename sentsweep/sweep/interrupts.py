"""A SIGTERM (`kill PID`, SLURM's `scancel`) stops a sweep as Ctrl-C does."""

from __future__ import annotations

import signal


def stop_as_interrupt(signum, frame) -> None:
    """A SIGTERM handler: the sweep stops as on Ctrl-C. Where a SIGINT handler is installed (Ray Tune's during a
    stage, which ends the trials and saves its state for --resume; Python's own elsewhere), SIGINT is raised. Where
    SIGINT is ignored, as in a job a shell started in the background (`nohup python sweeps/nm_weight.py &`, or `&` in
    a batch script), the KeyboardInterrupt that Ctrl-C raises in a foreground job is raised here instead: a raised
    SIGINT would be ignored, and the SIGTERM lost."""
    if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL, None):
        raise KeyboardInterrupt
    signal.raise_signal(signal.SIGINT)
