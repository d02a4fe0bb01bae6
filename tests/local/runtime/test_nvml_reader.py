"""NVML per-process GPU use, and the exporter preferring it over the emulated activity.

No NVIDIA GPU can run on the build machine, so the mapping from NVML's answers to what the exporter
exports is tested with a stand-in for the third-party ``pynvml`` module that answers as NVML does
(the shapes of ``nvmlDeviceGetComputeRunningProcesses`` / ``nvmlDeviceGetProcessUtilization``), and
the real ``NvmlReader.open()`` is checked to degrade to None here. The real-GPU run is the device
check described in the issue's note.
"""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest

from rayqueue_local.runtime import nvml as nvml_module
from rayqueue_local.runtime.metrics import GpuDevice, GpuMetricsExporter
from rayqueue_local.runtime.nvml import GpuUsage, NvmlReader


class NotFound(Exception):
    """pynvml.NVMLError_NotFound: no utilisation sample since the given timestamp."""


def fake_nvml(
    running: dict[int, list[tuple[int, int]]], samples: dict[int, list[tuple[int, int, int]]]
) -> NS:
    """GPU index -> [(pid, bytes)] running, GPU index -> [(pid, smUtil, timestamp)] samples."""
    seen: list[tuple[int, int]] = []

    def utilisation(handle: int, since: int) -> list[NS]:
        seen.append((handle, since))
        rows = [NS(pid=p, smUtil=u, timeStamp=t) for p, u, t in samples.get(handle, []) if t > since]
        if not rows:
            raise NotFound("Not Found")
        return rows

    return NS(
        nvmlInit=lambda: None,
        nvmlShutdown=lambda: None,
        nvmlDeviceGetCount=lambda: len(running),
        nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlDeviceGetUUID=lambda h: f"GPU-{h}".encode(),
        nvmlDeviceGetComputeRunningProcesses=lambda h: [NS(pid=p, usedGpuMemory=b) for p, b in running[h]],
        nvmlDeviceGetProcessUtilization=utilisation,
        seen=seen,
    )


def test_busy_process_reports_its_sm_use_and_memory() -> None:
    nvml = fake_nvml({0: [(10, 2 * 2**30), (99, 2**30)]}, {0: [(10, 97, 100), (99, 50, 100)]})
    usage = NvmlReader.open(nvml=nvml).usage({10, 11})
    assert usage == GpuUsage(97.0, 2048, ("GPU-0",))


def test_idle_process_holding_memory_is_zero_percent_but_holds_a_gpu() -> None:
    nvml = fake_nvml({0: [(10, 1200 * 2**20)], 1: []}, {})
    usage = NvmlReader.open(nvml=nvml).usage({10})
    assert usage.sm_percent == 0.0 and usage.memory_mib == 1200 and usage.holds_gpu


def test_samples_are_read_since_the_last_timestamp() -> None:
    nvml = fake_nvml({0: [(10, 2**20)]}, {0: [(10, 80, 100)]})
    reader = NvmlReader.open(nvml=nvml)
    assert reader.usage({10}).sm_percent == 80.0
    assert reader.usage({10}).sm_percent == 0.0  # no new sample: the process did nothing since
    assert nvml.seen == [(0, 0), (0, 100)]


def test_processes_on_no_gpu_hold_none() -> None:
    nvml = fake_nvml({0: [(5, 2**20)]}, {0: [(5, 90, 1)]})
    assert NvmlReader.open(nvml=nvml).usage({10}) == GpuUsage(0.0, 0, ())


def test_no_driver_means_no_reader() -> None:
    def broken() -> None:
        raise RuntimeError("NVML Shared Library Not Found")

    assert NvmlReader.open(nvml=NS(nvmlInit=broken)) is None
    assert NvmlReader.open(nvml=fake_nvml({}, {})) is None  # a driver but no GPU


def test_without_the_nvml_package_there_is_no_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nvml_module, "_PYNVML", None)  # as when nvidia-ml-py is not installed
    assert NvmlReader.open() is None


def test_exporter_prefers_measured_over_activity_and_pinned_over_both() -> None:
    exp = GpuMetricsExporter(pods=list, activity=lambda ns, c: True)
    device = GpuDevice(0, "demo", "rc-head", "ray-head", "rc")
    measured: dict[str, float | None] = {"rc": 0.0}
    exp.set_utilisation_source(lambda ns, c: measured[c])
    assert exp.utilisation(device) == 0.0  # holds a GPU, idle: measured 0 beats "a job runs"
    measured["rc"] = None
    assert exp.utilisation(device) >= 80.0  # no real GPU held: the emulated activity again
    exp.set_utilisation("demo", "rc", 12)
    assert exp.utilisation(device) == 12.0
