"""TSDAE deletion ratio x pooling ablation (TSDAE paper, appendix A, tables 6 and 7).

The experiment is defined in sentsweep/experiments/tsdae/tsdae_deletion.py; `python sweeps/tsdae_deletion.py --help`
lists its options.
"""

import sys

from sentsweep.experiments.tsdae.tsdae_deletion import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
