"""Bi-encoder, cross-encoder and Cross-Bi-Encoder on STS-B, and the cross-encoder's activations (Reiml (2023),
Tables 6.1-6.3).

The experiment is defined in sentsweep/experiments/reiml_2023/cross_bi_encoder.py; `python sweeps/cross_bi_encoder.py
--help` lists its options.
"""

import sys

from sentsweep.experiments.reiml_2023.cross_bi_encoder import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
