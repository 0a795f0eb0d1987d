"""The environment a trial runs in, as its process sees it: sentsweep's code, Python, every installed package, the
node and its devices. A trial reports it once, with its first result (`sentsweep.trainables.session`), and the
driver makes it the trial run's provenance tags and its `environment/requirements.txt` artifact
(`sentsweep.tracking.provenance`): on a cluster each trial's own node, not the driver's.

The devices are the trial's: Ray Tune sets CUDA_VISIBLE_DEVICES to the GPUs it gave the trial, and torch sees only
those. The GPU driver's version comes from NVML (the `gpu` extra) or `nvidia-smi`, where either is present.
"""

from __future__ import annotations

import os
import platform
import socket
import subprocess
from dataclasses import asdict
from functools import lru_cache
from importlib import metadata

from sentsweep.version import sentsweep_code

ENVIRONMENT_KEY = "environment"  # the first report's entry: `trial_environment()` as JSON text


def installed_packages() -> dict[str, str]:
    """{distribution name: version} of every package importable in this process, sorted by name."""
    found = {}
    for distribution in metadata.distributions():
        name = distribution.metadata["Name"]
        if name:
            found.setdefault(name.lower().replace("_", "-"), distribution.version)
    return dict(sorted(found.items()))


def python_version() -> str:
    """'3.11.2 (CPython)'."""
    return f"{platform.python_version()} ({platform.python_implementation()})"


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), else what `platform` knows of it."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def gpu_driver_version() -> str | None:
    """The NVIDIA driver's version (NVML, else nvidia-smi), None where there is neither."""
    try:
        import pynvml  # lazy: pynvml

        pynvml.nvmlInit()
        try:
            version = pynvml.nvmlSystemGetDriverVersion()
        finally:
            pynvml.nvmlShutdown()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:  # noqa: BLE001 - no NVML library, no driver: try the command line
        pass
    try:
        result = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip().splitlines()[0] if result.stdout.strip() else None


def gpu_devices() -> list[dict]:
    """[{name, memory_mib}] of the GPUs this process sees (the trial's), none without CUDA."""
    import torch  # lazy: torch

    if not torch.cuda.is_available():
        return []
    devices = []
    for index in range(torch.cuda.device_count()):
        properties = torch.cuda.get_device_properties(index)
        devices.append({"name": properties.name, "memory_mib": properties.total_memory // 2**20})
    return devices


def training_device() -> str:
    """The device a trial's model is put on (sentence-transformers, and the methods that place theirs, take the
    first GPU torch sees, else the CPU): 'cuda:0 (NVIDIA H200)' or 'cpu'."""
    import torch  # lazy: torch

    return f"cuda:0 ({torch.cuda.get_device_name(0)})" if torch.cuda.is_available() else "cpu"


def ray_node_id() -> str | None:
    """The Ray node this process runs on, where it runs under Ray."""
    try:
        import ray  # lazy: ray

        return ray.get_runtime_context().get_node_id() if ray.is_initialized() else None
    except Exception:  # noqa: BLE001 - no runtime context: not under Ray
        return None


def node_description() -> dict:
    """The node and devices of this process: hostname, Ray node id, CPU model and count, GPUs, driver, CUDA, and the
    device a trial trains on (`training_device`)."""
    import torch  # lazy: torch

    gpus = gpu_devices()
    return {
        "hostname": socket.gethostname(),
        "ray_node_id": ray_node_id(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "gpus": gpus,
        "gpu_driver": gpu_driver_version() if gpus else None,
        "cuda": torch.version.cuda,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "device": training_device(),
    }


@lru_cache(maxsize=1)
def _process_environment() -> dict:
    """What stays the same for every trial a worker process runs: the code, Python and the packages."""
    return {"sentsweep": asdict(sentsweep_code()), "python": python_version(), "packages": installed_packages()}


def trial_environment() -> dict:
    """sentsweep's version and commit, Python, every installed package, and the node (`node_description`)."""
    return _process_environment() | {"node": node_description()}
