"""Recipe (d): a sweep that re-runs a published table, with the table's numbers as its reproduction targets.

The table is the TSDAE paper's pooling comparison (Wang et al. 2021, App. A, Table 7: deletion ratio 0.6, an
untied decoder, best STS-B dev Spearman x 100, mean of 5 seeds): CLS 78.77, mean 78.84, max 78.17. The protocol is
the project's cited one for that search (the tsdae_noise experiment's); the targets are
this file's. The sweep's table and `sentsweep analyze report` then say which published cells were reproduced (the
published value inside the interval of the seeds' mean), and `--dry-run` checks that every target names a cell
the sweep produces.

    python published_table.py --dry-run
    python published_table.py --quick                                   # tiny model: every target missed
    python published_table.py --model bert-base-uncased --corpus nli_sentences.txt --sts-dir stsbenchmark/
"""

import sys

from sentsweep import PublishedValue, Stage, SweepDefinition, cited, get_experiment, run_sweep

SEARCH = get_experiment("tsdae_noise")  # the project's cited protocol of the TSDAE paper's search, and the paper
SEARCH_PROTOCOL, TSDAE = SEARCH.protocol, SEARCH.reference

TABLE_7 = {"cls": 78.77, "mean": 78.84, "max": 78.17}
PAPER_SETTING = {"model": "bert-base-uncased", "max_steps": 30_000, "eval_steps": 1_500, "batch_size": 8, "lr": 3e-5}

DEFINITION = SweepDefinition(
    name="published_table",
    description=__doc__.splitlines()[0],
    reference=TSDAE,
    protocol=SEARCH_PROTOCOL,
    # the table's fixed ratio as an axis of one value (the protocol's default is the search's first, 0.3)
    stages=[Stage("pooling", lambda options: {"noise_ratio": [0.6], "pooling": list(TABLE_7)})],
    published=tuple(
        PublishedValue(params={"pooling": pooling, "noise_type": "delete", "noise_ratio": 0.6, "tie_decoder": False},
                       metric="best_sts_dev", value=value, source=cited(TSDAE, "App. A, Table 7"), runs=5,
                       setting=PAPER_SETTING)
        for pooling, value in TABLE_7.items()),
)

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
