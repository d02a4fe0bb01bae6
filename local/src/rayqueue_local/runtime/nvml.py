"""Real GPU use from NVML, for the processes of a local Ray head (the ``rayqueue_local[gpu]`` extra).

On a machine with NVIDIA GPUs and ``nvidia-ml-py`` installed, :meth:`NvmlReader.open` initialises NVML
and :meth:`NvmlReader.usage` says how much of the GPUs a set of processes (one Ray head's session:
the head, its workers and its jobs' drivers) uses:

- which GPUs they hold and how much memory, from ``nvmlDeviceGetComputeRunningProcesses`` (per PID);
- their SM use, from ``nvmlDeviceGetProcessUtilization`` (per-PID samples since the last read).

That second number is what scale-to-zero needs: a process that still holds 1.2 GB of a GPU while
it does nothing shows 0 % SM use, the "idle but holding a GPU" case, where the device-level
utilisation of a shared GPU would count other tenants' work. Measured on an H100
(``nvidia-ml-py``, a torch matmul loop): device utilisation rises from 0 to 99 % within 0.5 s of the
loop starting and falls to 0 within 0.5 s of it stopping, and the per-PID SM use follows it.

Without the package, without a driver or without a GPU, :meth:`NvmlReader.open` returns None and the
exporter keeps its emulated activity (:mod:`rayqueue_local.runtime.metrics`).
NVML reference: https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html

Example:
    >>> reader = NvmlReader.open()            # None on a machine without NVIDIA GPUs
    >>> reader is None or isinstance(reader.usage({1}), GpuUsage)
    True
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from types import ModuleType
from typing import Any

try:  # the optional rayqueue_local[gpu] extra
    import pynvml as _installed_pynvml
except ImportError:  # pragma: no cover - depends on the machine
    _installed_pynvml = None

log = logging.getLogger(__name__)

#: ``pynvml`` when ``nvidia-ml-py`` is installed, else None.
_PYNVML: ModuleType | None = _installed_pynvml

__all__ = ["GpuUsage", "NvmlReader"]

_MIB = 1024 * 1024


@dataclass(frozen=True)
class GpuUsage:
    """What a set of processes uses of the machine's GPUs.

    ``sm_percent`` is the highest per-process SM use on any GPU they hold (0 when they hold none),
    ``memory_mib`` the GPU memory they hold in all, ``devices`` the UUIDs of those GPUs.

    Example:
        >>> GpuUsage(0.0, 1200, ("GPU-1",)).holds_gpu
        True
    """

    sm_percent: float
    memory_mib: int
    devices: tuple[str, ...]

    @property
    def holds_gpu(self) -> bool:
        """Whether the processes hold any GPU at all."""
        return bool(self.devices)


class NvmlReader:
    """Reads per-process GPU use through NVML (``pynvml``, from the ``nvidia-ml-py`` package).

    Build one with :meth:`open`; ``nvml`` is the ``pynvml`` module (given explicitly only by tests
    of the mapping on machines without a GPU).

    Example (with a stand-in for ``pynvml``: one GPU on which PID 7 holds 1.2 GB and uses no SM):
        >>> from types import SimpleNamespace as NS
        >>> fake = NS(nvmlInit=lambda: None, nvmlDeviceGetCount=lambda: 1,
        ...           nvmlDeviceGetHandleByIndex=lambda i: i, nvmlDeviceGetUUID=lambda h: b"GPU-0",
        ...           nvmlDeviceGetComputeRunningProcesses=lambda h: [NS(pid=7, usedGpuMemory=1200 * 2**20)],
        ...           nvmlDeviceGetProcessUtilization=lambda h, t: [NS(pid=7, smUtil=0, timeStamp=5)])
        >>> NvmlReader.open(nvml=fake).usage({7})
        GpuUsage(sm_percent=0.0, memory_mib=1200, devices=('GPU-0',))
    """

    def __init__(self, nvml: ModuleType | Any) -> None:
        self._nvml = nvml
        self._handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(nvml.nvmlDeviceGetCount())]
        self._last_seen: dict[int, int] = {}

    def __repr__(self) -> str:
        return f"NvmlReader(gpus={len(self._handles)})"

    @classmethod
    def open(cls, nvml: ModuleType | Any | None = None) -> NvmlReader | None:
        """Initialise NVML; None where it cannot (no ``nvidia-ml-py``, no driver, no GPU).

        Example:
            >>> r = NvmlReader.open()
            >>> r is None or r.gpu_count >= 1
            True
        """
        nvml = nvml if nvml is not None else _PYNVML
        if nvml is None:
            return None
        try:
            nvml.nvmlInit()
            reader = cls(nvml)
        except Exception as exc:  # pynvml.NVMLError and its many subclasses: no driver, no GPU
            log.info("NVML not usable here (%s): GPU metrics stay emulated", exc)
            return None
        if not reader._handles:
            return None
        return reader

    @property
    def gpu_count(self) -> int:
        """How many GPUs NVML sees."""
        return len(self._handles)

    def usage(self, pids: set[int]) -> GpuUsage:
        """What the processes ``pids`` use now: per-PID SM use and memory across every GPU.

        Example:
            >>> r = NvmlReader.open()
            >>> r is None or r.usage(set()).holds_gpu is False
            True
        """
        nvml = self._nvml
        devices: list[str] = []
        memory = 0
        sm = 0.0
        for index, handle in enumerate(self._handles):
            try:
                running = nvml.nvmlDeviceGetComputeRunningProcesses(handle)
            except Exception as exc:  # pynvml.NVMLError (optional import): e.g. NOT_SUPPORTED on this GPU
                log.debug("NVML: GPU %d: running processes unreadable: %s", index, exc)
                continue
            mine = [p for p in running if p.pid in pids]
            if not mine:
                continue
            devices.append(_text(nvml.nvmlDeviceGetUUID(handle)))
            memory += sum(int(p.usedGpuMemory or 0) for p in mine) // _MIB
            sm = max(sm, self._sm_percent(index, handle, pids))
        return GpuUsage(sm, memory, tuple(devices))

    def _sm_percent(self, index: int, handle: Any, pids: set[int]) -> float:
        """The highest SM use of ``pids`` on one GPU since the last read (0 without new samples)."""
        nvml = self._nvml
        try:
            samples = nvml.nvmlDeviceGetProcessUtilization(handle, self._last_seen.get(index, 0))
        except Exception:  # NVML_ERROR_NOT_FOUND: no sample since the timestamp, i.e. no use
            return 0.0
        if samples:
            self._last_seen[index] = max(int(s.timeStamp) for s in samples)
        return float(max((s.smUtil for s in samples if s.pid in pids), default=0))

    def close(self) -> None:
        """Shut NVML down (idempotent)."""
        if self._nvml is not None:
            try:
                self._nvml.nvmlShutdown()
            except Exception as exc:  # pynvml.NVMLError (optional import): closing is best effort
                log.debug("nvmlShutdown: %s", exc)
            self._nvml = None


def _text(value: bytes | str) -> str:
    """NVML strings are bytes in older bindings, str in newer ones."""
    return value.decode() if isinstance(value, bytes) else value
