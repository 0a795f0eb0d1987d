"""Multi-task weight: L = L_SimCSE + w L_AE for the CLM and MLM auto-encoders (Wang 2022, eq. 3.6).

The experiment is defined in sentsweep/experiments/wang_2022/multitask_weight.py; `python sweeps/multitask_weight.py
--help` lists its options.
"""

import sys

from sentsweep.experiments.wang_2022.multitask_weight import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
