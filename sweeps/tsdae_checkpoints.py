"""The TSDAE paper's other checkpoints: TSDAE, CT and SimCSE from five pre-trained encoders (TSDAE App. C, Table 9).

The experiment is defined in sentsweep/experiments/tsdae/tsdae_checkpoints.py;
`python sweeps/tsdae_checkpoints.py --help` lists its options.
"""

import sys

from sentsweep.experiments.tsdae.tsdae_checkpoints import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
