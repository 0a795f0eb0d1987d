"""Augmented SBERT: the teacher (cross-encoder vs Cross-Bi-Encoder) x silver-pair sampling, over seeds.

The experiment is defined in sentsweep/experiments/reiml_2023/augsbert.py; `python sweeps/augsbert.py --help` lists its
options.
"""

import sys

from sentsweep.experiments.reiml_2023.augsbert import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
