"""Labelled-data intersection: labelled pairs at which in-domain SBERT matches TSDAE (TSDAE paper, table 10).

The experiment is defined in sentsweep/experiments/tsdae/labelled_intersection.py; `python
sweeps/labelled_intersection.py --help` lists its options.
"""

import sys

from sentsweep.experiments.tsdae.labelled_intersection import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
