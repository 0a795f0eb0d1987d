"""A sentence-transformers model folder with random weights, from a folder that has the model's configuration and
tokenizer but not its weights (scripts/offline_bundle.sh keeps all-MiniLM-L6-v2's so: its 90 MB of weights stay
behind). Same architecture and sizes, so the same time per step and the same memory; not the same scores.

    python -m benchmarks.random_init_model .offline/minilm /tmp/minilm-random
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path


def random_init_model(source: Path, destination: Path, seed: int = 0) -> Path:
    """`destination`: `source`'s files and a transformer built from its `config.json` with weights drawn as
    transformers initialises them (`seed`), saved as safetensors."""
    import torch
    from transformers import AutoConfig, AutoModel

    shutil.copytree(source, destination, dirs_exist_ok=True)
    torch.manual_seed(seed)
    AutoModel.from_config(AutoConfig.from_pretrained(source)).save_pretrained(destination)
    return destination


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("destination", type=Path)
    arguments = parser.parse_args()
    if not (arguments.source / "config.json").is_file():
        parser.error(f"{arguments.source}: no config.json in it (a model folder's configuration)")
    print(random_init_model(arguments.source, arguments.destination))
