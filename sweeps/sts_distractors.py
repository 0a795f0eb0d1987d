"""STS-B with distractors: Table 3.2's SBERT and TF-IDF models on the pool files of Malmberg (2021) Figs. 4.1-4.3.

The experiment is defined in sentsweep/experiments/malmberg_2021/sts_distractors.py;
`python sweeps/sts_distractors.py --help` lists its options.
"""

import sys

from sentsweep.experiments.malmberg_2021.sts_distractors import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
