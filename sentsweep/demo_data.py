"""The shipped demo data set: a few hundred generated sentences and scored pairs in the STS benchmark format.

Sentences come from a small grammar (subject, action, object, place). A pair's gold score counts the slots
two sentences share, where a synonym counts as shared, so the data carries a learnable similarity signal.
Run `python -m sentsweep.demo_data` to regenerate `sentsweep/demo_data/` byte for byte.
"""

from __future__ import annotations

import random
from pathlib import Path

DEMO_DIR = Path(__file__).with_name("demo_data")
CORPUS_FILE = DEMO_DIR / "corpus.txt"
# NLI pairs in AllNLI.tsv.gz's format (split, dataset, filename, sentence1, sentence2, label), written by hand in the
# grammar's words, for --quick runs of the NLI+STS step; not generated, so `write` leaves it as it is
NLI_FILE = DEMO_DIR / "nli-demo.tsv"

# Each slot value is a group of interchangeable phrasings (synonyms).
SUBJECTS = [
    ["a man", "a guy"], ["a woman", "a lady"], ["a child", "a kid"], ["a dog", "a puppy"],
    ["a cat", "a kitten"], ["an old man", "an elderly man"], ["a girl", "a young girl"], ["a chef", "a cook"],
    ["a student", "a pupil"], ["a musician", "a performer"],
]
ACTIONS = [
    ["is playing", "plays"], ["is eating", "eats"], ["is cutting", "is slicing"], ["is carrying", "carries"],
    ["is watching", "looks at"], ["is cleaning", "is washing"], ["is painting", "paints"],
    ["is holding", "holds"], ["is throwing", "tosses"], ["is buying", "purchases"],
]
OBJECTS = [
    ["a guitar", "an acoustic guitar"], ["an apple", "a red apple"], ["a cucumber", "a green cucumber"],
    ["a ball", "a football"], ["a box", "a cardboard box"], ["a car", "an automobile"],
    ["a bicycle", "a bike"], ["a newspaper", "a paper"], ["a picture", "a painting"], ["a bag", "a sack"],
]
PLACES = [
    ["in the park", "at the park"], ["in the kitchen", "inside the kitchen"], ["on the beach", "at the beach"],
    ["in the street", "on the road"], ["in a garden", "in the yard"], ["at home", "in the house"],
    ["in a shop", "in a store"], ["near the river", "by the river"], ["in the office", "at work"],
    ["on a stage", "on the stage"],
]
SLOTS = [SUBJECTS, ACTIONS, OBJECTS, PLACES]


def _sentence(choice: list[int], phrasing: list[int]) -> str:
    text = " ".join(slot[group][variant] for slot, group, variant in zip(SLOTS, choice, phrasing))
    return text[0].upper() + text[1:] + "."


def _random_choice(rng: random.Random) -> list[int]:
    return [rng.randrange(len(slot)) for slot in SLOTS]


def _pair(rng: random.Random) -> tuple[str, str, float]:
    """Two sentences sharing k of the 4 slots (k uniform in 0..4); gold score 5 * k / 4 plus small jitter."""
    first = _random_choice(rng)
    shared = rng.randint(0, len(SLOTS))
    keep = set(rng.sample(range(len(SLOTS)), shared))
    second = [
        group if index in keep else rng.choice([g for g in range(len(SLOTS[index])) if g != group])
        for index, group in enumerate(first)
    ]
    phrasing1 = [rng.randrange(2) for _ in SLOTS]
    phrasing2 = [rng.randrange(2) for _ in SLOTS]
    score = min(5.0, max(0.0, 5.0 * shared / len(SLOTS) + rng.uniform(-0.3, 0.3)))
    return _sentence(first, phrasing1), _sentence(second, phrasing2), round(score, 2)


def generate(seed: int = 20211109, corpus_size: int = 400, pairs_per_split: dict | None = None) -> dict:
    """The demo files' contents: {'corpus.txt': text, 'sts-train.csv': text, ...}."""
    pairs_per_split = pairs_per_split or {"train": 200, "dev": 150, "test": 150}
    rng = random.Random(seed)
    corpus = []
    seen = set()
    while len(corpus) < corpus_size:
        sentence = _sentence(_random_choice(rng), [rng.randrange(2) for _ in SLOTS])
        if sentence not in seen:
            seen.add(sentence)
            corpus.append(sentence)
    files = {"corpus.txt": "\n".join(corpus) + "\n"}
    for split, count in pairs_per_split.items():
        rows = []
        for index in range(count):
            first, second, score = _pair(rng)
            rows.append(f"demo\tgrammar\t2026{split}\t{index:04d}\t{score:.2f}\t{first}\t{second}")
        files[f"sts-{split}.csv"] = "\n".join(rows) + "\n"
    return files


def write(directory: Path = DEMO_DIR) -> Path:
    """Write the demo files into `directory` and return it."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in generate().items():
        (directory / name).write_text(text, encoding="utf-8")
    return directory


if __name__ == "__main__":
    print(f"wrote demo data to {write()}")
