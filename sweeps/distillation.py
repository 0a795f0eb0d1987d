"""Distillation into bi-encoders: CE and Cross-Bi-Encoder teachers re-annotate the training pairs (Reiml (2023),
Tables 6.4-6.8).

The experiment is defined in sentsweep/experiments/reiml_2023/distillation.py; `python sweeps/distillation.py --help`
lists its options.
"""

import sys

from sentsweep.experiments.reiml_2023.distillation import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
