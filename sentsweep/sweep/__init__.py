"""Running a sweep: its definition (`definition`), its command-line options and every check before launch
(`launcher`), its protocol card (`card`, --dry-run), and the Ray Tune run with MLflow tracking (`runner`)."""

from sentsweep.sweep.definition import Stage, SweepDefinition
from sentsweep.sweep.launcher import run_sweep

__all__ = ["Stage", "SweepDefinition", "run_sweep"]
