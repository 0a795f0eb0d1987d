"""TSDAE greedy configuration search (TSDAE paper, appendix A, tables 5-7): noise, ratio, pooling, tying.

The experiment is defined in sentsweep/experiments/tsdae/tsdae_noise.py; `python sweeps/tsdae_noise.py --help` lists its
options.
"""

import sys

from sentsweep.experiments.tsdae.tsdae_noise import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
