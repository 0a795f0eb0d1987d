"""`python -m sentsweep.evaluate`: a model (or a lexical baseline) on the STS benchmark and any evaluation tasks.

Examples:
    python -m sentsweep.evaluate --model path/to/all-MiniLM-L6-v2 --sts-dir ../shared/data/stsbenchmark
    python -m sentsweep.evaluate --lexical bm25 --task askubuntu=data-eval/askubuntu --task quora=beir/quora
    python -m sentsweep.evaluate --model M --task sts13=SentEval/data/downstream/STS/STS13-en-test \
        --task sickr=SentEval/data/downstream/SICK --task beir-cqadupstack=beir/cqadupstack
"""

from __future__ import annotations

import argparse
import sys

from sentsweep.errors import InputError
from sentsweep.models import POOLING_MODES, load_sentence_model
from sentsweep.scorers import Bm25Scorer, EmbeddingScorer, TfidfScorer
from sentsweep.tasks import build_task, build_tasks, evaluate_tasks, parse_task_specs


def main(argv=None, prog: str = "python -m sentsweep.evaluate") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="Hugging Face model name or local folder")
    source.add_argument("--lexical", choices=["tfidf", "bm25"], help="a lexical baseline instead of a model")
    parser.add_argument("--sts-dir", help="folder with sts-dev.csv and sts-test.csv (scores dev and test)")
    parser.add_argument("--task", action="append", default=[], metavar="NAME=PATH",
                        help="an evaluation task, scored on its test split (repeatable; see sentsweep.tasks)")
    parser.add_argument("--pooling", choices=POOLING_MODES, metavar="POOLING",
                        help=f"re-pool the last layer: {', '.join(POOLING_MODES)} (default: as released)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-seq-length", type=int, default=256)
    args = parser.parse_args(argv)

    try:
        if not args.sts_dir and not args.task:
            raise InputError("nothing to evaluate: give --sts-dir and/or --task NAME=PATH")
        tasks = build_tasks(parse_task_specs(args.task))
        if args.model:
            scorer = EmbeddingScorer(load_sentence_model(args.model, args.pooling, args.max_seq_length),
                                     args.batch_size)
        else:
            scorer = TfidfScorer() if args.lexical == "tfidf" else Bm25Scorer()
        if args.sts_dir:
            sts = build_task("stsb", args.sts_dir)
            for split in ("dev", "test"):
                print(f"STS benchmark {split}: {sts.evaluate(scorer, split).metrics['stsb_spearman']:.2f}")
        for name, value in evaluate_tasks(tasks, scorer, "test").metrics.items():
            print(f"{name}: {value:.2f}")
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
