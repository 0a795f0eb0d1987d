"""The TSDAE paper's out-of-the-box supervised models scored as released (TSDAE §6, Tables 2 and 3).

The experiment is defined in sentsweep/experiments/tsdae/tsdae_out_of_the_box.py;
`python sweeps/tsdae_out_of_the_box.py --help` lists its options.
"""

import sys

from sentsweep.experiments.tsdae.tsdae_out_of_the_box import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
