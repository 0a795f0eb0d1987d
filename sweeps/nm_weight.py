"""Noise Matching weight: L = L_MLM + w L_NM and L = L_TSDAE + w L_NM, CLS and mean pooling, over seeds.

The experiment is defined in sentsweep/experiments/reiml_2023/nm_weight.py; `python sweeps/nm_weight.py --help` lists
its options.
"""

import sys

from sentsweep.experiments.reiml_2023.nm_weight import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
