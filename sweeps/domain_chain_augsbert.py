"""Domain MLM, then Augmented SBERT, teacher and student from the MLM model (Reiml (2023), §4.3.1, Table 6.10).

The experiment is defined in sentsweep/experiments/reiml_2023/domain_chain_augsbert.py; `--help` lists its options.
"""

import sys

from sentsweep.experiments.reiml_2023.domain_chain_augsbert import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION, prog="sweeps/domain_chain_augsbert.py"))
