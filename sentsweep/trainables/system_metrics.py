"""A trial's machine usage (CPU, memory, disk, network, and GPU where NVML finds one), for the run's System metrics.

MLflow's `SystemMetricsMonitor` logs to a run itself, but a trial runs in a Ray worker with no route to the
tracking server (the driver logs everything). So the trial process samples on a daemon thread every
`MLFLOW_SYSTEM_METRICS_SAMPLING_INTERVAL` seconds (MLflow's variable; default `DEFAULT_INTERVAL_S`), and each
report carries the means since the previous report under the names `SystemMetricsMonitor` would log
(`system/cpu_utilization_percentage`, `system/system_memory_usage_megabytes`, ...): the driver logs them like any
other result, and the MLflow UI shows the `system/` metrics on the run's System metrics tab.

CPU, memory, disk and network are read with psutil as MLflow's `CPUMonitor`, `DiskMonitor` and `NetworkMonitor`
read them (`mlflow.system_metrics.metrics`), not through those classes: importing any module of MLflow imports all
of MLflow, which cost every trial process 1.3 s of CPU or more and 70 MiB (docs/performance.md) and gave it nothing
else (tests/trainables/test_system_metrics.py compares names and values with MLflow's monitors). GPUs are sampled by
MLflow's
`GPUMonitor`, imported only on a node where NVML finds a GPU, beside which that cost is small.
"""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict

import psutil  # a dependency of Ray and MLflow

PREFIX = "system/"  # SystemMetricsMonitor's prefix, which the UI's System metrics tab shows
DEFAULT_INTERVAL_S = 5.0
INTERVAL_VARIABLE = "MLFLOW_SYSTEM_METRICS_SAMPLING_INTERVAL"  # mlflow.environment_variables

_process_sampler: SystemMetricsSampler | None = None
_process_sampler_lock = threading.Lock()


class SystemMetricsSampler:
    """Samples the machine on a daemon thread; `take` returns the means since the last take."""

    def __init__(self, interval_s: float) -> None:
        self._network_at_start = psutil.net_io_counters()  # counted since boot: usage is the difference
        self._gpu = _gpu_monitor()
        self.interval_s = interval_s
        self._lock = threading.Lock()
        self._samples: defaultdict[str, list[float]] = defaultdict(list)
        self._network: dict[str, float] = {}
        self.new_window()
        threading.Thread(target=self._sample_forever, daemon=True, name="sentsweep-system-metrics").start()

    def new_window(self) -> None:
        """Forget what was sampled so far: the next `take` covers from now on. psutil's CPU reading is the
        usage since its previous call, so one is taken here and dropped."""
        with self._lock:
            self._collect()
            self._clear()

    def take(self) -> dict[str, float]:
        """The means since the last take (or `new_window`), rounded as MLflow's monitors round them, and the
        network's traffic since the sampler started, as `system/...` metrics; sampled now if the thread has not
        sampled since, so every report has them."""
        with self._lock:
            if not self._samples:
                self._collect()
            values = {key: round(sum(samples) / len(samples), 1) for key, samples in self._samples.items()}
            values |= self._network
            if self._gpu is not None:
                values |= self._gpu.aggregate_metrics()
            self._clear()
        return {PREFIX + key: float(value) for key, value in values.items()}

    def _sample_forever(self) -> None:
        while True:
            time.sleep(self.interval_s)
            with self._lock:
                self._collect()

    def _collect(self) -> None:
        memory, disk, network = psutil.virtual_memory(), psutil.disk_usage(os.sep), psutil.net_io_counters()
        for key, value in {
            "cpu_utilization_percentage": psutil.cpu_percent(),
            "system_memory_usage_megabytes": memory.used / 1e6,
            "system_memory_usage_percentage": memory.used / memory.total * 100,
            "disk_usage_percentage": disk.percent,
            "disk_usage_megabytes": disk.used / 1e6,
            "disk_available_megabytes": disk.free / 1e6,
        }.items():
            self._samples[key].append(value)
        start = self._network_at_start
        self._network = {  # not averaged: the traffic so far, in MLflow's arithmetic
            "network_receive_megabytes": network.bytes_recv / 1e6 - start.bytes_recv / 1e6,
            "network_transmit_megabytes": network.bytes_sent / 1e6 - start.bytes_sent / 1e6,
        }
        if self._gpu is not None:
            self._gpu.collect_metrics()

    def _clear(self) -> None:
        self._samples.clear()
        if self._gpu is not None:
            self._gpu.clear_metrics()


def process_sampler() -> SystemMetricsSampler:
    """This process's sampler, started at first use: one thread however many trials the process runs."""
    global _process_sampler
    with _process_sampler_lock:
        if _process_sampler is None:
            _process_sampler = SystemMetricsSampler(float(os.environ.get(INTERVAL_VARIABLE) or DEFAULT_INTERVAL_S))
        return _process_sampler


def _gpu_monitor():
    """MLflow's NVIDIA GPU monitor where NVML finds a GPU, else None (no `nvidia-ml-py`, no driver, an NVML
    error): usage metrics never fail a trial, and on a node without one no trial process imports MLflow."""
    try:
        import pynvml

        pynvml.nvmlInit()
        if not pynvml.nvmlDeviceGetCount():
            return None
        from mlflow.system_metrics.metrics.gpu_monitor import GPUMonitor

        return GPUMonitor()
    except Exception:  # noqa: BLE001 - ImportError, RuntimeError, pynvml.NVMLError: all mean "no GPU metrics"
        return None
