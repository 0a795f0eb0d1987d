"""The TSDAE paper's main protocol: TSDAE, MLM, CT and SimCSE, each at its own settings (TSDAE §5, App. B).

The experiment is defined in sentsweep/experiments/tsdae/tsdae_main.py; `python sweeps/tsdae_main.py --help` lists its
options.
"""

import sys

from sentsweep.experiments.tsdae.tsdae_main import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
