"""Topic-sensitive embeddings: Classifier, pretrained RoBERTa, Augmented SBERT with shown / hidden topic prompts
(Reiml (2023), Tables 6.14-6.17).

The experiment is defined in sentsweep/experiments/reiml_2023/topic_distillation.py; `python
sweeps/topic_distillation.py --help` lists its options.
"""

import sys

from sentsweep.experiments.reiml_2023.topic_distillation import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
