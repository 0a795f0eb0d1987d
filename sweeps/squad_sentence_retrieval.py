"""SQuAD sentence retrieval (Malmberg (2021) Table 4.1): pre-trained BERT poolings and layers, TF-IDF, SBERT.

The experiment is defined in sentsweep/experiments/malmberg_2021/squad_sentence_retrieval.py; `python
sweeps/squad_sentence_retrieval.py --help` lists its options.
"""

import sys

from sentsweep.experiments.malmberg_2021.squad_sentence_retrieval import DEFINITION
from sentsweep.sweep import run_sweep

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
