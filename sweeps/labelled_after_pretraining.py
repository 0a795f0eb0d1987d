"""Pre-training, then in-domain supervised training with growing labelled sets (TSDAE paper, §6, Figures 2 and 5).

The experiment is defined in sentsweep/experiments/tsdae/labelled_after_pretraining.py; `--help` lists its options.
"""

import sys

from sentsweep.experiments.tsdae.labelled_after_pretraining import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION, prog="sweeps/labelled_after_pretraining.py"))
