"""A SIGTERM (`kill PID`, SLURM's `scancel`) stops a sweep as Ctrl-C does."""

from __future__ import annotations

import atexit
import os
import signal
import sys

from sentsweep.faults import fault_point


def stop_as_interrupt(signum, frame) -> None:
    """A SIGTERM handler: the sweep stops as on Ctrl-C. Where a SIGINT handler is installed (Ray Tune's during a
    stage, which ends the trials and saves its state for --resume; Python's own elsewhere), SIGINT is raised. Where
    SIGINT is ignored, as in a job a shell started in the background (`nohup python sweeps/nm_weight.py &`, or `&` in
    a batch script), the KeyboardInterrupt that Ctrl-C raises in a foreground job is raised here instead: a raised
    SIGINT would be ignored, and the SIGTERM lost."""
    if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL, None):
        raise KeyboardInterrupt
    signal.raise_signal(signal.SIGINT)


def stop_signal_came(handler_before) -> bool:
    """Whether a Ctrl-C or SIGTERM reached the Ray Tune run that just returned, `handler_before` the SIGINT handler
    in place when it started: Ray Tune's own handler (`ray.tune.tune._setup_signal_catching`) puts the one before it
    back once a signal came, and stays in place otherwise. A run whose trials all ended before the signal took
    effect returns as if finished; the sweep must stop all the same (unless TUNE_DISABLE_SIGINT_HANDLER keeps Ray
    Tune's handler out, where this cannot tell, and says no)."""
    if os.environ.get("TUNE_DISABLE_SIGINT_HANDLER", "0") != "0":
        return False
    return signal.getsignal(signal.SIGINT) is handler_before


def ignore_signals_at_exit() -> None:
    """A sweep that is over (finished, stopped or refused) ignores Ctrl-C and SIGTERM while its interpreter exits:
    Ray's exit handler (`ray.shutdown`, registered with `atexit` as Ray is imported) ends the local Ray the driver
    started, for some seconds, and a signal then raised a KeyboardInterrupt inside it, printed with its traceback.
    Registered once Ray is imported, so that it runs before Ray's handler (`atexit` runs the last registered first)."""
    if "ray" in sys.modules and not _at_exit:
        atexit.register(_ignore_signals)
        _at_exit.append(_ignore_signals)


_at_exit: list = []


def _ignore_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    fault_point("exit", 0)  # the fault matrix's signal as Ray's exit handler is about to run
