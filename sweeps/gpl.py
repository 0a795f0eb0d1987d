"""GPL: generated queries, mined negatives, cross-encoder margins, MarginMSE; over seeds (sizes: --sample-sizes).

The experiment is defined in sentsweep/experiments/tsdae_gpl_draft/gpl.py; `python sweeps/gpl.py --help` lists its
options.
"""

import sys

from sentsweep.experiments.tsdae_gpl_draft.gpl import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
