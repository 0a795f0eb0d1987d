"""Batch size of the contrastive methods (SimCSE, NM, CT, ConSERT): in-batch negatives grow with it.

The experiment is defined in sentsweep/experiments/wang_2022/batch_size.py; `python sweeps/batch_size.py --help` lists
its options.
"""

import sys

from sentsweep.experiments.wang_2022.batch_size import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
