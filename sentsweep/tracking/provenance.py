"""The provenance of a run: which code ran, in which environment, on which node, so that a reviewer can tell two
runs apart and rebuild the environment from the run alone.

From an environment as `sentsweep.trainables.environment.trial_environment` describes it (a trial's, reported by
the trial itself; the driver's, for the sweep's run):

- tags `sentsweep.version`, `sentsweep.commit` (the full commit, or `unknown`), `sentsweep.dirty` (true when
  the checkout differed from that commit; `unknown` without a checkout) and `sentsweep.commit_source` (see
  `sentsweep.version`);
- `python`, and `package.<name>` for the packages a result depends on most (`KEY_PACKAGES`);
- `node.hostname`, `node.ray_node_id`, `node.cpu`, `node.cpu_count`, `node.gpu` (each GPU the trial saw, with its
  memory, or `none`), `node.gpu_driver` and `node.cuda` (the CUDA torch was built with) where present;
- the artifact `environment/requirements.txt`: every installed package pinned (`name==version`), which
  `pip install -r` installs again (with the CUDA build of torch to choose by hand where the node had a GPU).

The researcher's own files and their digests are in each trial's `code_version` tag (`with_user_code`).
"""

from __future__ import annotations

import json

ENVIRONMENT_ARTIFACT = "environment/requirements.txt"
KEY_PACKAGES = ("torch", "transformers", "sentence-transformers", "tokenizers", "ray", "mlflow", "optuna", "datasets",
                "numpy", "scipy", "scikit-learn", "pandas", "accelerate", "nvidia-ml-py")


def _flag(value: bool | None) -> str:
    return "unknown" if value is None else str(bool(value)).lower()


def provenance_tags(environment: dict) -> dict[str, str]:
    """The run tags of `environment` (see the module docstring)."""
    code, node = environment.get("sentsweep", {}), environment.get("node", {})
    tags = {
        "sentsweep.version": str(code.get("version")),
        "sentsweep.commit": code.get("commit") or "unknown",
        "sentsweep.dirty": _flag(code.get("dirty")),
        "sentsweep.commit_source": str(code.get("commit_source")),
        "python": str(environment.get("python")),
    }
    packages = environment.get("packages", {})
    tags |= {f"package.{name}": packages[name] for name in KEY_PACKAGES if name in packages}
    if node:
        gpus = node.get("gpus") or []
        tags |= {
            "node.hostname": str(node.get("hostname")),
            "node.cpu": str(node.get("cpu")),
            "node.cpu_count": str(node.get("cpu_count")),
            "node.gpu": ", ".join(f"{gpu['name']} ({gpu['memory_mib']} MiB)" for gpu in gpus) or "none",
        }
        tags |= {f"node.{key}": str(node[key]) for key in ("ray_node_id", "gpu_driver", "cuda") if node.get(key)}
    return tags


def requirements_text(environment: dict) -> str:
    """Every installed package of `environment`, pinned, one per line, under a header naming Python and
    sentsweep's commit."""
    code = environment.get("sentsweep", {})
    header = [f"# Python {environment.get('python')}; sentsweep {code.get('version')} at commit "
              f"{code.get('commit') or 'unknown'} (dirty: {_flag(code.get('dirty'))})"]
    return "\n".join(header + [f"{name}=={version}" for name, version in environment.get("packages", {}).items()]
                     ) + "\n"


def provenance_operations(trial_id: str | None, environment: dict | str) -> list[dict]:
    """The writer operations (`sentsweep.tracking.writer`) that record `environment` (a dict, or the JSON text a
    trial reports) on the run of `trial_id` (None: the sweep's run): its tags and its requirements artifact."""
    if isinstance(environment, str):
        environment = json.loads(environment)
    return [{"op": "tags", "trial": trial_id, "tags": provenance_tags(environment)},
            {"op": "text", "trial": trial_id, "file": ENVIRONMENT_ARTIFACT, "content": requirements_text(environment)}]
