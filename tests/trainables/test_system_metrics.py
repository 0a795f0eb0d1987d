"""A trial's System metrics: MLflow's own monitors' readings under their names, sampled without importing MLflow."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import psutil
import pytest
from mlflow.system_metrics.metrics.cpu_monitor import CPUMonitor
from mlflow.system_metrics.metrics.disk_monitor import DiskMonitor
from mlflow.system_metrics.metrics.network_monitor import NetworkMonitor

from sentsweep.trainables import system_metrics
from sentsweep.trainables.system_metrics import PREFIX, SystemMetricsSampler


class Machine:
    """psutil's readings, fixed by the test: what MLflow's monitors and the sampler both read."""

    def __init__(self) -> None:
        self.set(cpu=0.0, memory_used=0, received=0, sent=0)

    def set(self, cpu: float, memory_used: int, received: int, sent: int) -> None:
        self.cpu = cpu
        self.memory = SimpleNamespace(used=memory_used, total=32_000_000_000)
        self.network = SimpleNamespace(bytes_recv=received, bytes_sent=sent)

    def install(self, monkeypatch) -> None:
        monkeypatch.setattr(psutil, "cpu_percent", lambda: self.cpu)
        monkeypatch.setattr(psutil, "virtual_memory", lambda: self.memory)
        monkeypatch.setattr(psutil, "net_io_counters", lambda: self.network)
        monkeypatch.setattr(psutil, "disk_usage", lambda path: SimpleNamespace(percent=41.7, used=123_456_789_012,
                                                                               free=172_839_456_123))


def test_the_sampler_reports_what_mlflows_monitors_report_from_the_same_readings(monkeypatch):
    machine = Machine()
    machine.install(monkeypatch)
    monkeypatch.setattr(system_metrics, "_gpu_monitor", lambda: None)  # a CPU node's metrics, wherever it runs
    machine.set(cpu=12.0, memory_used=9_000_000_000, received=5_000_000, sent=1_000_000)
    monitors = [CPUMonitor(), DiskMonitor(), NetworkMonitor()]  # the network's traffic counts from here
    sampler = SystemMetricsSampler(interval_s=3600)  # its thread never samples within the test
    # two samples in the window: the means, rounded to one decimal as MLflow rounds them
    for cpu, used, received, sent in ((12.0, 9_000_000_000, 5_500_000, 1_200_000),
                                      (37.25, 9_123_456_789, 7_345_678, 1_987_654)):
        machine.set(cpu=cpu, memory_used=used, received=received, sent=sent)
        for monitor in monitors:
            monitor.collect_metrics()
        sampler._collect()
    mlflow_metrics = {}
    for monitor in monitors:
        mlflow_metrics.update(monitor.aggregate_metrics())
    assert sampler.take() == {PREFIX + key: float(value) for key, value in mlflow_metrics.items()}
    assert mlflow_metrics["cpu_utilization_percentage"] == 24.6  # (12.0 + 37.25) / 2, by hand
    assert mlflow_metrics["network_receive_megabytes"] == pytest.approx(2.345678)  # since the monitors started


def test_a_trial_process_on_a_node_without_a_gpu_never_imports_mlflow():
    """Importing MLflow costs a process seconds of CPU: a trial (the trainables, a report's system metrics) needs
    none of it; the driver logs everything."""
    if system_metrics._gpu_monitor() is not None:
        pytest.skip("NVML finds a GPU here: the trial samples it with MLflow's GPU monitor")
    probe = ("import sys\n"
             "from sentsweep.trainables.catalog import train\n"
             "from sentsweep.trainables.system_metrics import process_sampler\n"
             "assert process_sampler().take()\n"
             "print(sorted(name for name in sys.modules if name.split('.')[0] == 'mlflow'))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
