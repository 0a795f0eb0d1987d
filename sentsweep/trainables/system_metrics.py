"""A trial's machine usage (CPU, memory, disk, network, and GPU when there is one), for the run's System metrics.

MLflow's `SystemMetricsMonitor` logs to a run itself, but a trial runs in a Ray worker with no route to the
tracking server (the driver logs everything). So the trial process samples with MLflow's own monitors, on a
daemon thread every `MLFLOW_SYSTEM_METRICS_SAMPLING_INTERVAL` seconds (default `DEFAULT_INTERVAL_S`), and
each report carries the means since the previous report under the names `SystemMetricsMonitor` would log
(`system/cpu_utilization_percentage`, `system/system_memory_usage_megabytes`, ...): the driver logs them
like any other result, and the MLflow UI shows the `system/` metrics on the run's System metrics tab.
"""

from __future__ import annotations

import threading
import time

from mlflow.environment_variables import MLFLOW_SYSTEM_METRICS_SAMPLING_INTERVAL

PREFIX = "system/"  # SystemMetricsMonitor's prefix, which the UI's System metrics tab shows
DEFAULT_INTERVAL_S = 5.0

_process_sampler: SystemMetricsSampler | None = None
_process_sampler_lock = threading.Lock()


class SystemMetricsSampler:
    """Samples MLflow's system monitors on a daemon thread; `take` returns their means since the last take."""

    def __init__(self, interval_s: float) -> None:
        from mlflow.system_metrics.metrics.cpu_monitor import CPUMonitor
        from mlflow.system_metrics.metrics.disk_monitor import DiskMonitor
        from mlflow.system_metrics.metrics.network_monitor import NetworkMonitor

        gpu = _gpu_monitor()
        self.monitors = [CPUMonitor(), DiskMonitor(), NetworkMonitor(), *([gpu] if gpu else [])]
        self.interval_s = interval_s
        self._lock = threading.Lock()
        self._samples = 0
        self.new_window()
        threading.Thread(target=self._sample_forever, daemon=True, name="sentsweep-system-metrics").start()

    def new_window(self) -> None:
        """Forget what was sampled so far: the next `take` covers from now on. psutil's CPU reading is the
        usage since its previous call, so one is taken here and dropped."""
        with self._lock:
            self._collect()
            self._clear()

    def take(self) -> dict[str, float]:
        """The means since the last take (or `new_window`), as `system/...` metrics; sampled now if the thread
        has not sampled since, so every report has them."""
        with self._lock:
            if not self._samples:
                self._collect()
            values = {}
            for monitor in self.monitors:
                values.update(monitor.aggregate_metrics())
            self._clear()
        return {PREFIX + key: float(value) for key, value in values.items()}

    def _sample_forever(self) -> None:
        while True:
            time.sleep(self.interval_s)
            with self._lock:
                self._collect()

    def _collect(self) -> None:
        for monitor in self.monitors:
            monitor.collect_metrics()
        self._samples += 1

    def _clear(self) -> None:
        for monitor in self.monitors:
            monitor.clear_metrics()
        self._samples = 0


def process_sampler() -> SystemMetricsSampler:
    """This process's sampler, started at first use: one thread however many trials the process runs."""
    global _process_sampler
    with _process_sampler_lock:
        if _process_sampler is None:
            _process_sampler = SystemMetricsSampler(MLFLOW_SYSTEM_METRICS_SAMPLING_INTERVAL.get() or DEFAULT_INTERVAL_S)
        return _process_sampler


def _gpu_monitor():
    """MLflow's NVIDIA GPU monitor, or None where it cannot start (no `nvidia-ml-py`, no GPU, an NVML error):
    usage metrics never fail a trial."""
    from mlflow.system_metrics.metrics.gpu_monitor import GPUMonitor

    try:
        return GPUMonitor()
    except Exception:  # noqa: BLE001 - ImportError, RuntimeError, pynvml.NVMLError: all mean "no GPU metrics"
        return None
