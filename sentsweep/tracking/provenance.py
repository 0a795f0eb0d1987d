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
- `device`: the device the run's model trained on, `cpu` or `cuda:0 (<the GPU's name>)`
  (`sentsweep.trainables.environment.training_device`);
- the artifact `environment/requirements.txt`: every installed package pinned (`name==version`), which
  `pip install -r` installs again (with the CUDA build of torch to choose by hand where the node had a GPU).

Every level carries it (`sentsweep.tracking.callback`): a trial its own environment; a configuration run its trials'
(`ConfigurationProvenance`: each tag's value where its trials agree, else each of their values, so that its
`node.*` tags name every node one of its trials ran on; the requirements of the first of them to report); the sweep's
run the driver's, its `node.*` tags the driver's node. The tag `node.of` says whose node a run's `node.*` tags
describe (`the trial`, `its trials`, `the sweep's driver`). The researcher's own files and their digests are in every
run's `code_version` tag (`with_user_code`: '3f2a1bc + my_sweep.py@9c1e0d2a4b7f').
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

ENVIRONMENT_ARTIFACT = "environment/requirements.txt"
DEVICE_TAG = "device"  # the device the run's model trained on: "cpu", "cuda:0 (NVIDIA H200)"
KEY_PACKAGES = ("torch", "transformers", "sentence-transformers", "tokenizers", "ray", "mlflow", "optuna", "datasets",
                "numpy", "scipy", "scikit-learn", "pandas", "accelerate", "nvidia-ml-py")


def _flag(value: bool | None) -> str:
    return "unknown" if value is None else str(bool(value)).lower()


NODE_OF_TAG = "node.of"
TRIAL_NODE, TRIALS_NODES, DRIVER_NODE = "the trial", "its trials", "the sweep's driver"
DIFFERING_SEPARATOR = " | "  # between the values of a configuration's tag where its trials differ


def with_user_code(version: str, user_code: list[dict] | None) -> str:
    """The code version of a run: sentsweep's (`sentsweep.version.code_version`) and each module of the researcher's
    own with its content digest ('3f2a1bc + my_sweep.py@9c1e0d2a4b7f'), so runs of an edited loss are told apart."""
    return " + ".join([version] + [f"{Path(entry['path']).name}@{entry['digest']}" for entry in user_code or []])


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
        tags |= {DEVICE_TAG: str(node["device"])} if node.get("device") else {}
    return tags


def requirements_text(environment: dict) -> str:
    """Every installed package of `environment`, pinned, one per line, under a header naming Python and
    sentsweep's commit."""
    code = environment.get("sentsweep", {})
    header = [f"# Python {environment.get('python')}; sentsweep {code.get('version')} at commit "
              f"{code.get('commit') or 'unknown'} (dirty: {_flag(code.get('dirty'))})"]
    return "\n".join(header + [f"{name}=={version}" for name, version in environment.get("packages", {}).items()]
                     ) + "\n"


def provenance_operations(trial_id: str | dict | None, environment: dict | str, node_of: str = TRIAL_NODE
                          ) -> list[dict]:
    """The writer operations (`sentsweep.tracking.writer`) that record `environment` (a dict, or the JSON text a
    trial reports) on the run of `trial_id` (None: the sweep's run, whose `node_of` is `DRIVER_NODE`): its tags and
    its requirements artifact."""
    environment = _parsed(environment)
    return [{"op": "tags", "trial": trial_id, "tags": provenance_tags(environment) | {NODE_OF_TAG: node_of}},
            {"op": "text", "trial": trial_id, "file": ENVIRONMENT_ARTIFACT, "content": requirements_text(environment)}]


def merged_tags(tag_sets: list[Mapping[str, str]]) -> dict[str, str]:
    """The tags of runs described together: each tag's value where they agree, else their distinct values in
    sorted order, joined by `DIFFERING_SEPARATOR` (a tag only some of them carry: the values of those that do)."""
    values: dict[str, set[str]] = {}
    for tags in tag_sets:
        for key, value in tags.items():
            values.setdefault(key, set()).add(value)
    return {key: DIFFERING_SEPARATOR.join(sorted(found)) for key, found in values.items()}


class ConfigurationProvenance:
    """The provenance of configuration runs from their trials' environments as the trials report them: `report`
    gives the writer operations that tag configuration `address` (`sentsweep.tracking.configurations.address`)
    with what its trials reported so far (`merged_tags`), and, with the first report, its requirements artifact."""

    def __init__(self) -> None:
        self._reported: dict[str, dict[str, dict[str, str]]] = {}  # config hash -> {trial id: its tags}

    def report(self, address: dict, trial_id: str, environment: dict | str) -> list[dict]:
        environment = _parsed(environment)
        trials = self._reported.setdefault(address["configuration"], {})
        first = not trials
        trials[trial_id] = provenance_tags(environment)
        operations = [{"op": "tags", "trial": address,
                       "tags": merged_tags(list(trials.values())) | {NODE_OF_TAG: TRIALS_NODES}}]
        if first:
            operations.append({"op": "text", "trial": address, "file": ENVIRONMENT_ARTIFACT,
                               "content": requirements_text(environment)})
        return operations


def _parsed(environment: dict | str) -> dict:
    return json.loads(environment) if isinstance(environment, str) else environment
