"""Recipe (a): an objective of one's own, with a setting of its own, swept over seeds against SimCSE.

The objective is alignment + uniformity (Wang & Isola, 2020) on two dropout views of each sentence, as
unsupervised SimCSE makes them:

    L = E_i ||u_i - v_i||^2  +  lambda * 1/2 [ log E_{i != j} exp(-t ||u_i - u_j||^2) + (the same over v) ]

with u_i, v_i the L2-normalised embeddings of the two views of sentence i. `lambda` (`uniformity_weight`) and
`t` (`uniformity_t`) are its settings; the sweep runs lambda in {0.5, 1, 2} beside SimCSE, over seeds.

Run it from anywhere, as a built-in sweep runs:

    python own_objective.py --dry-run          # the protocol card: the setting with its source
    python own_objective.py --quick            # tiny model and demo data, minutes on a CPU
    sentsweep run own_objective.py --quick
    ray submit cluster.yaml own_objective.py --model bert-base-uncased --corpus corpus.txt --sts-dir stsb/

Every Ray worker imports this file before its trial (sentsweep.plugins): keep the sweep's start under
`if __name__ == "__main__":`.
"""

import sys
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from sentsweep import (
    Objective,
    Protocol,
    Reference,
    Settings,
    Sourced,
    Stage,
    SweepDefinition,
    encode_views,
    objective,
    preprocess_on_device,
    project_choice,
    run_sweep,
    setting,
)

ALIGNMENT_UNIFORMITY = Reference(
    "Wang & Isola", "Tongzhou Wang, Phillip Isola",
    "Understanding Contrastive Representation Learning through Alignment and Uniformity on the Hypersphere",
    2020, "ICML 2020", "https://arxiv.org/abs/2005.10242")


@dataclass(frozen=True)
class AlignUniformSettings(Settings):
    uniformity_weight: float = setting(
        1.0, "weight lambda of the uniformity term", project_choice("this example's starting point; swept"), gt=0)
    uniformity_t: float = setting(2.0, "temperature t of the uniformity term's Gaussian kernel",
                                  project_choice("this example's choice"), gt=0)


def uniformity(embeddings: torch.Tensor, t: float) -> torch.Tensor:
    """log of the mean Gaussian potential exp(-t ||x_i - x_j||^2) over the pairs i != j."""
    return torch.pdist(embeddings, p=2).pow(2).mul(-t).exp().mean().log()


def align_uniform_loss(first: torch.Tensor, second: torch.Tensor, weight: float, t: float) -> torch.Tensor:
    """The loss above, from the two views' embeddings (N, d)."""
    u, v = F.normalize(first, dim=-1), F.normalize(second, dim=-1)
    alignment = (u - v).norm(dim=1).pow(2).mean()
    return alignment + weight * (uniformity(u, t) + uniformity(v, t)) / 2


@objective("align_uniform", AlignUniformSettings, ALIGNMENT_UNIFORMITY)
def build_align_uniform(model, settings: AlignUniformSettings, source: str, vocabulary: tuple[str, ...]) -> Objective:
    def batch_loss(sentences, rng):
        first, second = encode_views(model, preprocess_on_device(model, sentences), 2)
        return align_uniform_loss(first, second, settings.uniformity_weight, settings.uniformity_t)

    return Objective(torch.nn.Identity(), batch_loss)


OWN = project_choice("this example's choice")
PROTOCOL = Protocol(
    settings={"pooling": Sourced("cls", OWN), "lr": Sourced(3e-5, OWN), "batch_size": Sourced(64, OWN),
              "max_steps": Sourced(1000, OWN), "eval_steps": Sourced(250, OWN), "max_seq_length": Sourced(32, OWN)},
    seeds=Sourced(5, OWN),
    grids={"uniformity_weight": Sourced([0.5, 1.0, 2.0], OWN)},
    quick=dict(lr=1e-3, batch_size=16, max_steps=20, eval_steps=10, seeds=2),
)


def method_axes(args):
    return {"method": ["simcse"]}


def weight_axes(args):
    return {"method": ["align_uniform"],
            "uniformity_weight": [1.0, 2.0] if args.quick else PROTOCOL.grid("uniformity_weight")}


DEFINITION = SweepDefinition(
    name="own_objective",
    description=__doc__.splitlines()[0],
    protocol=PROTOCOL,
    stages=[Stage("simcse", method_axes), Stage("align_uniform", weight_axes)],
)

if __name__ == "__main__":
    sys.exit(run_sweep(DEFINITION))
