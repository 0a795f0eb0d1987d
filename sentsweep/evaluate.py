"""`python -m sentsweep.evaluate`: STS scores (Spearman x 100 of cosine) of a model as released, or re-pooled.

Example:
    python -m sentsweep.evaluate --model path/to/all-MiniLM-L6-v2 --sts-dir ../shared/data/stsbenchmark
"""

from __future__ import annotations

import argparse
import sys

from sentsweep.data import read_scored_pairs, sts_benchmark_files
from sentsweep.errors import InputError
from sentsweep.evaluation import StsEvaluator
from sentsweep.models import POOLING_MODES, load_sentence_model


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sentsweep.evaluate", description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="Hugging Face model name or local folder")
    parser.add_argument("--sts-dir", required=True, help="folder with sts-dev.csv and sts-test.csv")
    parser.add_argument("--pooling", choices=POOLING_MODES, help="re-pool the last layer (default: as released)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-seq-length", type=int, default=256)
    args = parser.parse_args(argv)
    try:
        files = sts_benchmark_files(args.sts_dir)
        model = load_sentence_model(args.model, args.pooling, args.max_seq_length)
        for split in ("dev", "test"):
            score = StsEvaluator(read_scored_pairs(files[split]), args.batch_size)(model)
            print(f"STS benchmark {split}: {score:.2f}")
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
