"""Running a sweep: its definition (`definition`), its command-line options (`options`, typed), every check
before launch (`launcher`), its protocol card (`card`, --dry-run), and the Ray Tune run with MLflow tracking
(`runner`)."""

from sentsweep.sweep.definition import Stage, SweepDefinition
from sentsweep.sweep.entry_point import run_sweep
from sentsweep.sweep.options import SweepOptions, option

__all__ = ["Stage", "SweepDefinition", "SweepOptions", "option", "run_sweep"]
