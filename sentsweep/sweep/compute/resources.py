"""What a sweep asks of the Ray cluster per trial, checked once Ray is up and before any trial starts: first a
request no node can ever run (`sentsweep.sweep.compute.cluster`), then how many trials share a GPU
(`sentsweep.sweep.compute.gpu_packing`, which reads the cluster's nodes: the entry point sits above both), each probe
kept in the storage path (`sentsweep.sweep.compute.probe_records`)."""

from __future__ import annotations

from collections.abc import Mapping

from sentsweep.sweep.compute.cluster import check_schedulable, cluster_address, cluster_nodes
from sentsweep.sweep.compute.gpu_packing import gpu_cpu_cap, measure_on_cluster, probe_configs, settle_gpus
from sentsweep.sweep.compute.probe_records import probes_file, recording
from sentsweep.sweep.config.options import GPUS_AUTO, SweepOptions


def check_resources(options: SweepOptions, constants: Mapping, method_settings: Mapping[str, Mapping],
                    stages: list[tuple[str, dict]], storage_path: str) -> float:
    """Once Ray is initialised, before any trial (and any MLflow run): refuse a request no node of a fixed
    cluster can run, then settle GPU packing, keeping each probe in `storage_path`'s probes file; returns the GPUs
    per trial to request (--gpus-per-trial, or the fraction chosen for 'auto')."""
    address, nodes = cluster_address(), cluster_nodes()
    requested = options.gpus_per_trial
    gpu_possible = options.autoscaling or any(node.gpus > 0 for node in nodes)
    # auto: the probe, on a whole GPU with the trial's CPUs, chooses a fraction of one GPU; without GPUs, none
    needed = (1.0 if gpu_possible else 0.0) if requested == GPUS_AUTO else requested
    check_schedulable(options.cpus_per_trial, needed, address, nodes, options.autoscaling)
    return settle_gpus(requested, probe_configs(constants, method_settings, stages),
                       recording(measure_on_cluster(options.cpus_per_trial, options.pending_timeout),
                                 probes_file(storage_path)), gpu_possible,
                       cpu_cap=lambda: gpu_cpu_cap(options.cpus_per_trial, cluster_nodes()))
