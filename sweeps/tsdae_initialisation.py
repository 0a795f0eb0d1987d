"""The TSDAE paper's starting checkpoints: TSDAE from BERT-base, from scratch, from BART-base and T5-base (TSDAE §8,
Table 4).

The experiment is defined in sentsweep/experiments/tsdae/tsdae_initialisation.py;
`python sweeps/tsdae_initialisation.py --help` lists its options.
"""

import sys

from sentsweep.experiments.tsdae.tsdae_initialisation import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
