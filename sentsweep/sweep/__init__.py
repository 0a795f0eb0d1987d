"""Running a sweep: the experiment's definition, its command-line options, every check before launch, and
the Ray Tune run with MLflow tracking (see `launcher`)."""

from sentsweep.sweep.launcher import Stage, SweepDefinition, run_sweep

__all__ = ["Stage", "SweepDefinition", "run_sweep"]
