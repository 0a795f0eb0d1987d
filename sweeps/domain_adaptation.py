"""Domain adaptation both ways: NLI+STS then the target domain, and the reverse (TSDAE paper, §4, Table 2).

The experiment is defined in sentsweep/experiments/tsdae/domain_adaptation.py; `--help` lists its options.
"""

import sys

from sentsweep.experiments.tsdae.domain_adaptation import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION, prog="sweeps/domain_adaptation.py"))
