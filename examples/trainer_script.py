"""Recipe (e): an existing SentenceTransformerTrainer script swept over seeds and one of its arguments.

The function below is a training script as sentence-transformers' documentation writes one (a model, a dataset,
a loss, an evaluator, training arguments, `trainer.train()`), with three changes: it takes `run`, reads the
seed and the shared settings from it, and passes `run.callback` and `run.evaluator` (the sweep's STS dev split, so
that each evaluation step scores dev once) to the trainer. sentsweep then runs it over seeds and CoSENT's scale,
selects each trial's checkpoint on the sweep's STS dev split and reports test there. Each trial's MLflow run holds
what the trainer really used: its arguments (`trainer.*` params), the model's own max_seq_length (this script
keeps the model's), and the trainer's loss by step.

    python trainer_script.py --dry-run
    python trainer_script.py --quick
    python trainer_script.py --model sentence-transformers/all-MiniLM-L6-v2 --sts-dir stsbenchmark/ --seeds 5

Needs `accelerate` (sentence-transformers' trainer does), which `pip install sentsweep[dev]` brings.
"""

import sys
from dataclasses import dataclass

from datasets import Dataset
from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer, SentenceTransformerTrainingArguments
from sentence_transformers.sentence_transformer.losses import CoSENTLoss

from sentsweep import (
    Protocol,
    Reference,
    Settings,
    Sourced,
    Stage,
    SweepDefinition,
    TrainerRun,
    project_choice,
    read_scored_pairs,
    run_sweep,
    setting,
    trainer_script,
)

COSENT = Reference("CoSENT", "Xiang Huang et al.", "CoSENT: Consistent Sentence Embedding via Similarity Ranking",
                   2024, "IEEE/ACM Transactions on Audio, Speech, and Language Processing")


@dataclass(frozen=True)
class ScriptSettings(Settings):
    train_file: str = setting("", "the labelled pairs (STS benchmark format)", project_choice("the sweep's"))
    scale: float = setting(20.0, "CoSENT's scale", project_choice("sentence-transformers' CoSENTLoss default"), gt=0)


def to_dataset(path: str, split: str) -> Dataset:
    pairs = read_scored_pairs(path, "stsb", split)
    return Dataset.from_dict({"sentence1": pairs.sentences1, "sentence2": pairs.sentences2,
                              "score": [score / 5.0 for score in pairs.scores]})


@trainer_script("cosent_script", ScriptSettings, COSENT)
def train_cosent(run: TrainerRun) -> None:
    model = SentenceTransformer(run.training.model, device="cpu")
    train_dataset = to_dataset(run.settings.train_file, "train")
    loss = CoSENTLoss(model, scale=run.settings.scale)
    args = SentenceTransformerTrainingArguments(
        output_dir=run.output_dir, seed=run.seed, max_steps=run.training.max_steps,
        per_device_train_batch_size=run.training.batch_size, learning_rate=run.training.lr,
        eval_strategy="steps", eval_steps=run.training.eval_steps, logging_steps=5, save_strategy="no",
        report_to="none", use_cpu=True, disable_tqdm=True)
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=train_dataset, loss=loss,
                                         evaluator=run.evaluator, callbacks=[run.callback])
    trainer.train()


OWN = project_choice("this example's choice")
PROTOCOL = Protocol(
    settings={"lr": Sourced(2e-5, OWN), "batch_size": Sourced(16, OWN), "max_steps": Sourced(1000, OWN),
              "eval_steps": Sourced(100, OWN), "max_seq_length": Sourced(128, OWN)},
    seeds=Sourced(5, OWN),
    grids={"scale": Sourced([10.0, 20.0, 40.0], OWN)},
    quick=dict(lr=1e-3, max_steps=20, eval_steps=10, max_seq_length=32, seeds=2),
)

DEFINITION = SweepDefinition(
    name="trainer_script",
    description=__doc__.splitlines()[0],
    protocol=PROTOCOL,
    stages=[Stage("scale", lambda options: {"method": ["cosent_script"],
                                            "scale": [10.0, 20.0] if options.quick else PROTOCOL.grid("scale")})],
    trains_on_gold_pairs=True,
)

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
