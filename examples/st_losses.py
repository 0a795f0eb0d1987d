"""Recipe (b): sentence-transformers losses as methods, with no code: CoSENT, AnglE and MNRL on labelled pairs.

Any loss of `sentence_transformers.sentence_transformer.losses` that sentsweep knows how to feed (see
sentsweep.trainables.st_losses) is the method `st:<LossName>`; its constructor arguments are settings:

    python st_losses.py --dry-run                                  # the card: each loss's arguments and citation
    python st_losses.py --quick
    python st_losses.py --quick --set scale=30                     # a loss argument, checked as any setting
    python st_losses.py --methods st:CoSENTLoss st:CachedMultipleNegativesRankingLoss --sts-dir stsbenchmark/

sentsweep's own losses (`sentsweep.losses`: Noise Matching, SimCSE-BCE, ConSERT, ...) go the other way, into
sentence-transformers' trainer; `train_in_the_trainer` trains a model with SimCSE-BCE on plain sentences:

    python st_losses.py trainer MODEL CORPUS                       # one sentence a line, to st_losses_model/
"""

import sys
from dataclasses import dataclass

from sentsweep import Protocol, Sourced, Stage, SweepDefinition, SweepOptions, option, project_choice, run_sweep

LOSSES = ["st:CoSENTLoss", "st:AnglELoss", "st:MultipleNegativesRankingLoss"]
OWN = project_choice("this example's choice")
PROTOCOL = Protocol(
    settings={"lr": Sourced(2e-5, OWN), "batch_size": Sourced(16, OWN), "epochs": Sourced(4, OWN),
              "eval_steps": Sourced(500, OWN), "max_seq_length": Sourced(128, OWN)},
    seeds=Sourced(5, OWN),
    grids={"method": Sourced(LOSSES, OWN)},
    quick=dict(lr=1e-3, max_seq_length=32, epochs=None, max_steps=20, eval_steps=10, seeds=2),
)


@dataclass(frozen=True, kw_only=True)
class LossOptions(SweepOptions):
    """The sweep's own option, beside every sweep's (a frozen dataclass: the command line is generated from it)."""

    methods: tuple[str, ...] | None = option(f"st:<loss> methods (default: {' '.join(LOSSES)})")


DEFINITION = SweepDefinition(
    name="st_losses",
    description=__doc__.splitlines()[0],
    protocol=PROTOCOL,
    stages=[Stage("losses", lambda options: {"method": options.methods or PROTOCOL.grid("method")})],
    options=LossOptions,
    trains_on_gold_pairs=True,
)



def train_in_the_trainer(model_name_or_path: str, sentences: list[str], output_dir: str, max_steps: int = 20):
    """One of sentsweep's losses in `SentenceTransformerTrainer`: SimCSE with binary cross-entropy (Wang (2022),
    eq. 2.10) on a dataset of one column of sentences, as its Inputs table asks; returns the trained model."""
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )

    from sentsweep import SimCseBceLoss

    model = SentenceTransformer(model_name_or_path)
    arguments = SentenceTransformerTrainingArguments(output_dir=output_dir, max_steps=max_steps,
                                                     per_device_train_batch_size=16, learning_rate=3e-5,
                                                     report_to=[], save_strategy="no")
    trainer = SentenceTransformerTrainer(model=model, args=arguments, loss=SimCseBceLoss(model, temperature=0.05),
                                         train_dataset=Dataset.from_dict({"sentence": sentences}))
    trainer.train()
    model.save(output_dir)
    return model


if __name__ == "__main__":
    if sys.argv[1:2] == ["trainer"] and len(sys.argv) == 4:
        with open(sys.argv[3], encoding="utf-8") as corpus:
            train_in_the_trainer(sys.argv[2], [line.strip() for line in corpus if line.strip()], "st_losses_model")
        sys.exit(0)
    sys.exit(run_sweep(DEFINITION))
