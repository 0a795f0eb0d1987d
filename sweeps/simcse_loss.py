"""SimCSE with NT-Xent or BCE loss, and the BERT and BM25 baselines, on STS-B, Quora and CQADupStack.

The experiment is defined in sentsweep/experiments/wang_2022/simcse_loss.py; `python sweeps/simcse_loss.py --help` lists
its options.
"""

import sys

from sentsweep.experiments.wang_2022.simcse_loss import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
