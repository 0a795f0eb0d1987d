"""Training corpus size 128 ... 65,536 sentences (powers of two), per method (TSDAE paper, figure 3).

The experiment is defined in sentsweep/experiments/tsdae/sample_size.py; `python sweeps/sample_size.py --help` lists its
options.
"""

import sys

from sentsweep.experiments.tsdae.sample_size import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
