"""A trial whose failure a retry would only repeat is not retried.

Ray Tune retries a failed trial from its last checkpoint up to `--max-failures` times, whatever failed. That is
what a lost worker or node (preemption, the OOM killer: `RayActorError`) or a storage or device hiccup (`OSError`,
`RuntimeError`) needs. A failure the trial's own computation makes comes back on every retry: a loss that turned
nan or inf at a given step (`FloatingPointError` of `sentsweep.trainables.loop.training_step`: every step is seeded
from (seed, step), so a retry from the last checkpoint reaches that step with the same numbers), a setting or input
the trial refuses (`InputError`), a method whose code fails (its builder's `TypeError`, `ValueError`, `KeyError`,
...). `--set lr=1e30` was retried twice per trial: 266 s for 8 trials that all fail at their first step.

Ray Tune 2.60 has no retry policy by exception: its controller recovers a failed trial when
`Trial.should_recover()` says so, from the trial's `max_failures`, in `TuneController._process_trial_failure`.
`no_retry_of_deterministic_failures` wraps that one step: a failure whose cause is a `DETERMINISTIC_FAILURES` type is
handled as if the trial's `max_failures` were 0 (put back right after, so that a `--resume`, which restarts failed
trials, retries it as before). Ray Tune's pinned version (constraints.txt) is the one this is written against; the
test `tests/sweep/test_trial_failures.py` counts the attempts.
"""

from __future__ import annotations

from collections.abc import Callable

from sentsweep.errors import InputError

# The failures a retry repeats: a non-finite loss, refused input, and the errors of code that is wrong for its input
DETERMINISTIC_FAILURES: tuple[type[BaseException], ...] = (
    FloatingPointError, InputError, TypeError, ValueError, KeyError, IndexError, AttributeError, NameError,
    ImportError, NotImplementedError, AssertionError, ZeroDivisionError,
)


def is_deterministic(exception: BaseException) -> bool:
    """Whether the trial failure `exception` (Ray's `RayTaskError` carries the trial's own error as `cause`) would
    come back on a retry."""
    return isinstance(getattr(exception, "cause", None) or exception, DETERMINISTIC_FAILURES)


def no_retry_of_deterministic_failures() -> None:
    """Make Ray Tune's controller leave deterministic trial failures unretried (once per process)."""
    leave_unretried("deterministic", lambda controller, trial, exception: is_deterministic(exception))


_unretried_by: set[str] = set()  # the names of the rules `leave_unretried` installed in this process


def leave_unretried(name: str, final: Callable[[object, object, BaseException], bool]) -> None:
    """Wrap Ray Tune's `TuneController._process_trial_failure` (once per process for each `name`) so that a trial
    failure `final(controller, trial, exception)` says a retry cannot mend is handled as if the trial's
    `max_failures` were 0, put back right after (a --resume retries it as before). The rules stack: a failure any
    of them calls final is not retried."""
    if name in _unretried_by:
        return
    from ray.tune.execution.tune_controller import TuneController

    process_failure = TuneController._process_trial_failure

    def process_trial_failure(controller, trial, exception):
        if not final(controller, trial, exception):
            return process_failure(controller, trial, exception)
        max_failures, trial.max_failures = trial.max_failures, 0
        try:
            return process_failure(controller, trial, exception)
        finally:
            trial.max_failures = max_failures

    TuneController._process_trial_failure = process_trial_failure
    _unretried_by.add(name)
