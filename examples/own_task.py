"""Recipe (c): an evaluation task of one's own, reading its own file format, scored in every trial of a sweep.

The task reranks each question's candidates (its answers among distractors) by the model's cosine similarity and
reports mean average precision and MRR. Its files are JSON Lines, one question a line, in a folder with
`dev.jsonl` and `test.jsonl`:

    {"question": "...", "answers": ["..."], "distractors": ["...", "..."]}

Registered with `@task`, it is an `--eval-task` of any sweep, its main metric a column of the tables:

    python own_task.py --quick                          # TSDAE on the demo corpus, scored on examples/data/faq_rerank
    python own_task.py --quick --eval-task faq_rerank=my_faq_folder/
    python sweeps/nm_weight.py --quick --plugin own_task.py --eval-task faq_rerank=examples/data/faq_rerank
"""

import json
import sys
from pathlib import Path

from sentsweep import (
    InputError,
    Protocol,
    Reference,
    Sourced,
    Stage,
    SweepDefinition,
    Task,
    TaskResult,
    mean_average_precision,
    mrr_at_k,
    project_choice,
    run_sweep,
    task,
)

OWN_DATA = Reference("faq_rerank", "the researcher", "FAQ reranking (one's own data)", None, "unpublished")
DEMO_FOLDER = Path(__file__).resolve().parent / "data" / "faq_rerank"


@task("faq_rerank")
class FaqRerankTask(Task):
    """Rerank each question's answers and distractors: MAP and MRR@10 (x 100)."""

    name = "faq_rerank"
    main_metric = "map"
    splits = ("dev", "test")
    reference = OWN_DATA

    def __init__(self, name: str, path: str) -> None:
        super().__init__(name, path)
        self.questions = {split: self._read(Path(path) / f"{split}.jsonl") for split in self.splits}

    @staticmethod
    def _read(file: Path) -> list[tuple[str, list[str], list[str]]]:
        """(question, answers, distractors) per line; a malformed line fails naming the file and line."""
        if not file.is_file():
            raise InputError(f"faq_rerank: no file {file}")
        questions = []
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                questions.append((record["question"], list(record["answers"]), list(record["distractors"])))
            except (ValueError, KeyError, TypeError) as error:
                raise InputError(f"{file}, line {number}: expected {{question, answers, distractors}} ({error})") \
                    from None
        return questions

    def evaluate(self, scorer, split: str) -> TaskResult:
        questions = self.questions[split]
        candidates = [answers + distractors for _, answers, distractors in questions]
        scores = scorer.candidate_similarities([question for question, _, _ in questions], candidates)
        labels = [[1] * len(answers) + [0] * len(distractors) for _, answers, distractors in questions]
        ranked = [[index for index in sorted(range(len(row)), key=lambda i: -row[i])] for row in scores]
        relevant = [set(range(len(answers))) for _, answers, _ in questions]
        return TaskResult({f"{self.name}_map": 100 * mean_average_precision(scores, labels),
                           f"{self.name}_mrr10": 100 * mrr_at_k(ranked, relevant, 10)})


OWN = project_choice("this example's choice")
PROTOCOL = Protocol(
    settings={"method": Sourced("tsdae", OWN), "pooling": Sourced("cls", OWN), "lr": Sourced(3e-5, OWN),
              "batch_size": Sourced(8, OWN), "max_steps": Sourced(10_000, OWN), "eval_steps": Sourced(1000, OWN),
              "max_seq_length": Sourced(64, OWN),
              # scored on the task in every trial; --eval-task faq_rerank=FOLDER names other files
              "eval_tasks": Sourced({"faq_rerank": str(DEMO_FOLDER)}, OWN)},
    seeds=Sourced(5, OWN),
    grids={"noise_ratio": Sourced([0.3, 0.6], OWN)},
    quick=dict(lr=1e-3, max_steps=20, eval_steps=10, max_seq_length=32, seeds=2),
)


DEFINITION = SweepDefinition(
    name="own_task",
    description=__doc__.splitlines()[0],
    protocol=PROTOCOL,
    stages=[Stage("noise_ratio", lambda options: {"noise_ratio": PROTOCOL.grid("noise_ratio")})],
)

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
