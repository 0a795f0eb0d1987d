"""The TSDAE paper's relevant content words: the POS tag of each relevant pair's most relevant word (TSDAE §7.2,
Figures 4 and 7).

The experiment is defined in sentsweep/experiments/tsdae/tsdae_pos_tags.py;
`python sweeps/tsdae_pos_tags.py --help` lists its options.
"""

import sys

from sentsweep.experiments.tsdae.tsdae_pos_tags import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
