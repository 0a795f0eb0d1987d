"""Learning rate of the contrastive methods (SimCSE, NM, CT, ConSERT); grid or Optuna log-uniform.

The experiment is defined in sentsweep/experiments/combined/learning_rate.py; `python sweeps/learning_rate.py --help`
lists its options.
"""

import sys

from sentsweep.experiments.combined.learning_rate import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
