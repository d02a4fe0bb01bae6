"""A DCGM-style GPU metrics exporter for the emulated pods of the local control plane.

NVIDIA's dcgm-exporter (run with ``--kubernetes``, as its Helm chart and the GPU Operator do) serves
one series per GPU and field, labelled with the device (``gpu``, ``UUID``, ``pci_bus_id``,
``device``, ``modelName``, ``Hostname``) and with the pod the GPU is allocated to (``pod``,
``namespace``, ``container``) [k8s-semantics.md §5]. Scraped through a ServiceMonitor without
``honorLabels`` those three collide with the exporter's own target labels and Prometheus renames
them ``exported_pod``, ``exported_namespace``, ``exported_container``.

:class:`GpuMetricsExporter` does the same for every Running pod that requests ``nvidia.com/gpu``;
:mod:`rayqueue_local.runtime.prometheus` scrapes it with the exporter's target labels, so the renaming
really happens in Prometheus. ``label_style="scraped"`` emits the ``exported_*`` names directly,
for a reader that does not go through that Prometheus.

The utilisation is, in this order: a value pinned with :meth:`GpuMetricsExporter.set_utilisation`
(tests, demos); the value *measured* on a real GPU when a utilisation source is set (on a machine
with NVIDIA GPUs and the ``rayqueue_local[gpu]`` extra, :mod:`rayqueue_local.runtime.nvml` reads the
SM use of the GPUs that the cluster's Ray head processes hold); else what the cluster's work does on
the GPUs it was given, as told by an *activity source* ``(namespace, cluster) -> bool | set[int]``:
the ordinals (within the cluster: the head's GPUs first, then the workers') of the GPUs that work
computes on, busy (80-100 %), the others 0 (the KubeRay controller's source,
:mod:`rayqueue_local.runtime.gpuwork`, reads it from the head's processes: a job given a GPU that
computes is busy, a ``sleep`` or a CPU-only job is not); a bool marks all of the cluster's GPUs.

Both signals a scale-to-zero policy reads are served, consistently: ``DCGM_FI_DEV_GPU_UTIL`` (percent)
and ``DCGM_FI_PROF_GR_ENGINE_ACTIVE`` (a 0-1 ratio). ``mig_profile`` (e.g. ``"1g.5gb"``) emulates
MIG: each allocated ``nvidia.com/gpu`` is one MIG instance of a parent GPU, its series labelled as
dcgm-exporter labels them (``gpu``/``UUID``/``device`` of the parent, ``GPU_I_PROFILE``,
``GPU_I_ID``), and ``DCGM_FI_DEV_GPU_UTIL`` is not served for it (DCGM reads nothing per MIG
instance, NVIDIA/DCGM#80). ``gr_engine_reads_zero`` emulates dcgm-exporter#662 (GR_ENGINE_ACTIVE
reading 0 under load).

The exposition is ``prometheus_client``'s (a custom collector; its text format and HTTP server), so
escaping, number formatting and content negotiation are the reference implementation's.

Example:
    >>> pods = [{"metadata": {"name": "rc-head-x", "namespace": "demo", "uid": "u1",
    ...                       "labels": {"ray.io/cluster": "rc"}},
    ...          "spec": {"containers": [{"name": "ray-head",
    ...                   "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
    ...          "status": {"phase": "Running"}}]
    >>> exp = GpuMetricsExporter(pods=lambda: pods)
    >>> exp.set_utilisation("demo", "rc", 90)
    >>> [l for l in exp.render().splitlines() if l.startswith("DCGM_FI_DEV_GPU_UTIL{")][0][-5:]
    ' 90.0'
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import Any

from prometheus_client.core import GaugeMetricFamily

from rayqueue_local.runtime.exposition import MetricsEndpoint

log = logging.getLogger(__name__)

__all__ = ["GpuDevice", "GpuMetricsExporter", "gpu_request", "pods_with_gpus"]

_GPU_RESOURCE = "nvidia.com/gpu"
_MIG_PROFILE = re.compile(r"^([1-7])g\.[0-9]+gb$")
_MODEL_NAME = "NVIDIA A100-SXM4-40GB"
_FB_TOTAL_MIB = 40960
_IDLE_POWER_W = 55.0
_BUSY_POWER_W = 320.0

#: (metric, type, help) in the order dcgm-exporter's default counters list them.
_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
    ("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."),
    ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
    ("DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active."),
)


def gpu_request(pod: dict[str, Any]) -> list[tuple[str, int]]:
    """``[(container, gpus)]`` for the containers of ``pod`` that ask for ``nvidia.com/gpu``
    (limits, else requests, as the device plugin allocates).

    Example:
        >>> c = {"name": "c", "resources": {"requests": {"nvidia.com/gpu": 2}}}
        >>> gpu_request({"spec": {"containers": [c]}})
        [('c', 2)]
    """
    out: list[tuple[str, int]] = []
    for container in pod.get("spec", {}).get("containers", []) or []:
        res = container.get("resources", {}) or {}
        value = (res.get("limits") or {}).get(_GPU_RESOURCE, (res.get("requests") or {}).get(_GPU_RESOURCE))
        if value is None:
            continue
        with contextlib.suppress(TypeError, ValueError):
            count = int(str(value))
            if count > 0:
                out.append((container.get("name", ""), count))
    return out


def pods_with_gpus(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Running, not-deleting pods that have GPUs allocated, sorted by namespace and name.

    Example:
        >>> pods_with_gpus([{"metadata": {"name": "p"}, "status": {"phase": "Pending"}}])
        []
    """
    keep = [
        p
        for p in pods
        if p.get("status", {}).get("phase") == "Running"
        and not p.get("metadata", {}).get("deletionTimestamp")
        and gpu_request(p)
    ]
    return sorted(keep, key=lambda p: (p["metadata"].get("namespace", ""), p["metadata"]["name"]))


@dataclass(frozen=True)
class GpuDevice:
    """One emulated GPU and the pod/container it is allocated to."""

    index: int
    namespace: str
    pod: str
    container: str
    cluster: str | None
    ordinal: int = 0
    mig_slots: int = 0  # MIG instances per parent GPU (0: not MIG)

    @property
    def gpu(self) -> int:
        """The physical GPU's index (a MIG instance's parent)."""
        return self.index // self.mig_slots if self.mig_slots else self.index

    @property
    def mig_instance(self) -> int | None:
        """The MIG GPU instance id (1-based within the parent), None without MIG."""
        return self.index % self.mig_slots + 1 if self.mig_slots else None

    @property
    def uuid(self) -> str:
        """A stable device UUID in NVIDIA's ``GPU-<uuid>`` form, derived from the (parent's) index."""
        return "GPU-" + str(uuid.uuid5(uuid.NAMESPACE_URL, f"rayqueue-local-gpu/{self.gpu}"))

    @property
    def pci_bus_id(self) -> str:
        """A PCI bus id in the form DCGM prints."""
        return f"00000000:{0x10 + self.gpu:02X}:00.0"


def _head_first(pod: dict[str, Any]) -> tuple[str, bool, str]:
    meta = pod["metadata"]
    head = (meta.get("labels") or {}).get("ray.io/node-type") == "head" or "-head-" in meta["name"]
    return (meta.get("namespace", ""), not head, meta["name"])


class GpuMetricsExporter(MetricsEndpoint):
    """A loopback ``/metrics`` endpoint with DCGM series for every GPU of every Running pod.

    ``pods`` returns the pods to look at (the control plane passes ``store.list("pods")``);
    ``activity`` says whether a Ray job runs on a cluster. ``start()`` serves on
    ``127.0.0.1:<port>`` (a free one unless given); ``render()`` works without serving.

    Example:
        >>> exp = GpuMetricsExporter(pods=lambda: [])
        >>> exp.start(); exp.url.startswith("http://127.0.0.1:")
        True
        >>> exp.stop()
    """

    def __init__(
        self,
        pods: Callable[[], list[dict[str, Any]]] | None = None,
        *,
        activity: Callable[[str, str], bool | Collection[int]] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        hostname: str = "rayqueue-local-node",
        model_name: str = _MODEL_NAME,
        label_style: str = "kubernetes",
        mig_profile: str | None = None,
        gr_engine_reads_zero: bool = False,
    ) -> None:
        if label_style not in ("kubernetes", "scraped"):
            raise ValueError(f"label_style: got {label_style!r}; allowed: 'kubernetes', 'scraped'")
        match = _MIG_PROFILE.match(mig_profile) if mig_profile is not None else None
        if mig_profile is not None and match is None:
            raise ValueError(f"mig_profile: got {mig_profile!r}; allowed: a MIG profile such as '1g.5gb'")
        self.mig_profile = mig_profile
        self._mig_slots = 7 // int(match.group(1)) if match else 0
        self.gr_engine_reads_zero = gr_engine_reads_zero
        self._pods: Callable[[], list[dict[str, Any]]] = pods or list
        self._activity = activity
        self.hostname, self.model_name, self.label_style = hostname, model_name, label_style
        self._lock = threading.Lock()
        self._overrides: dict[tuple[str, str], float] = {}
        self._allocation: dict[tuple[str, str], list[int]] = {}  # (ns, pod uid/name) -> gpu indices
        self._measured: Callable[[str, str], float | None] | None = None
        super().__init__(host=host, port=port)

    # -- configuration ----------------------------------------------------------------------
    def set_pod_source(self, pods: Callable[[], list[dict[str, Any]]]) -> None:
        """Where the pods come from (e.g. ``lambda: store.list("pods")``)."""
        self._pods = pods

    def set_activity_source(self, activity: Callable[[str, str], bool | Collection[int]] | None) -> None:
        """``(namespace, cluster) -> bool | set[int]``: the ordinals of that RayCluster's GPUs its work
        computes on (a bool: all of them or none)."""
        self._activity = activity

    def set_utilisation_source(self, measured: Callable[[str, str], float | None] | None) -> None:
        """``(namespace, cluster) -> percent | None``: the utilisation *measured* on a real GPU (NVML).

        A number wins over the activity source; None (the cluster's processes hold no real GPU,
        or nothing could be read) falls back to it.

        Example:
            >>> exp = GpuMetricsExporter(pods=lambda: [])
            >>> exp.set_utilisation_source(lambda ns, cluster: 37.0)
            >>> exp.utilisation(GpuDevice(0, "demo", "rc-head", "ray-head", "rc"))
            37.0
        """
        self._measured = measured

    def set_utilisation(self, namespace: str, cluster: str, value: float) -> None:
        """Pin the GPU utilisation (0-100) of every GPU of ``cluster``'s pods (tests, demos)."""
        if not 0 <= value <= 100:
            raise ValueError(f"utilisation: got {value}; allowed: 0..100")
        with self._lock:
            self._overrides[(namespace, cluster)] = float(value)

    def clear_utilisation(self, namespace: str | None = None, cluster: str | None = None) -> None:
        """Drop pinned values (all, one namespace's, or one cluster's): the activity rules again."""
        with self._lock:
            for key in list(self._overrides):
                if (namespace is None or key[0] == namespace) and (cluster is None or key[1] == cluster):
                    del self._overrides[key]

    # -- the model ---------------------------------------------------------------------------
    def devices(self) -> list[GpuDevice]:
        """The emulated GPUs now allocated, with stable indices (a device keeps its index while
        its pod lives; freed indices are reused, lowest first, as a node's devices would be), and
        their ordinals within their cluster (the head's first, as Ray numbers the head's GPUs)."""
        pods = sorted(pods_with_gpus(self._pods()), key=_head_first)
        out: list[GpuDevice] = []
        with self._lock:
            live = set()
            wanted: list[tuple[tuple[str, str], dict[str, Any], list[tuple[str, int]]]] = []
            for pod in pods:
                meta = pod["metadata"]
                key = (meta.get("namespace", ""), meta.get("uid") or meta["name"])
                live.add(key)
                wanted.append((key, pod, gpu_request(pod)))
            for key in list(self._allocation):
                if key not in live:
                    del self._allocation[key]
            used = {i for indices in self._allocation.values() for i in indices}
            ordinals: dict[tuple[str, str], int] = {}
            for key, pod, containers in wanted:
                total = sum(n for _, n in containers)
                indices = self._allocation.get(key, [])
                while len(indices) < total:
                    free = next(i for i in range(len(used) + total + 1) if i not in used)
                    used.add(free)
                    indices.append(free)
                self._allocation[key] = indices
                meta = pod["metadata"]
                cluster = (meta.get("labels") or {}).get("ray.io/cluster")
                it = iter(indices)
                for container, count in containers:
                    for _ in range(count):
                        ordinal = ordinals.get((key[0], cluster or meta["name"]), 0)
                        ordinals[(key[0], cluster or meta["name"])] = ordinal + 1
                        out.append(
                            GpuDevice(
                                next(it), key[0], meta["name"], container, cluster, ordinal, self._mig_slots
                            )
                        )
        return sorted(out, key=lambda d: d.index)

    def utilisation(self, device: GpuDevice, now: float | None = None) -> float:
        """GPU_UTIL of one device: the pinned value, else the measured one, else busy (80-100) or idle (0)."""
        cluster = device.cluster or device.pod
        with self._lock:
            pinned = self._overrides.get((device.namespace, cluster))
        if pinned is not None:
            return pinned
        if self._measured is not None and device.cluster:
            try:
                measured = self._measured(device.namespace, device.cluster)
            except Exception:  # a measurement must never break a scrape
                log.exception("GPU utilisation source failed")
                measured = None
            if measured is not None:
                return float(measured)
        busy = False
        if self._activity is not None and device.cluster:
            try:
                activity = self._activity(device.namespace, device.cluster)
                busy = activity if isinstance(activity, bool) else device.ordinal in activity
            except Exception:  # an activity source must never break a scrape
                log.exception("GPU activity source failed")
        if not busy:
            return 0.0
        tick = int((now if now is not None else time.time()) / 5)
        return float(80 + (device.index * 7 + tick) % 21)

    def values(self, device: GpuDevice) -> dict[str, float]:
        """Every field's value for ``device``, consistent with its utilisation."""
        util = self.utilisation(device)
        ratio = util / 100.0
        used = round(_FB_TOTAL_MIB * 0.8 * ratio) if util else 0
        return {
            "DCGM_FI_DEV_SM_CLOCK": 1410.0 if util else 210.0,
            "DCGM_FI_DEV_MEM_CLOCK": 1215.0,
            "DCGM_FI_DEV_GPU_TEMP": round(32 + 40 * ratio),
            "DCGM_FI_DEV_POWER_USAGE": round(_IDLE_POWER_W + (_BUSY_POWER_W - _IDLE_POWER_W) * ratio, 3),
            "DCGM_FI_DEV_GPU_UTIL": util,
            "DCGM_FI_DEV_MEM_COPY_UTIL": round(util * 0.4),
            "DCGM_FI_DEV_FB_FREE": float(_FB_TOTAL_MIB - used),
            "DCGM_FI_DEV_FB_USED": float(used),
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE": 0.0 if self.gr_engine_reads_zero else round(ratio * 0.95, 6),
            "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": round(ratio * 0.6, 6),
            "DCGM_FI_PROF_DRAM_ACTIVE": round(ratio * 0.5, 6),
        }

    def labels(self, device: GpuDevice) -> dict[str, str]:
        """The series labels of ``device``, in dcgm-exporter's order."""
        prefix = "exported_" if self.label_style == "scraped" else ""
        labels = {
            "gpu": str(device.gpu),
            "UUID": device.uuid,
            "pci_bus_id": device.pci_bus_id,
            "device": f"nvidia{device.gpu}",
            "modelName": self.model_name,
            "Hostname": self.hostname,
        }
        if self.mig_profile is not None:
            labels["GPU_I_PROFILE"] = self.mig_profile
            labels["GPU_I_ID"] = str(device.mig_instance)
        labels.update(
            {
                f"{prefix}container": device.container,
                f"{prefix}namespace": device.namespace,
                f"{prefix}pod": device.pod,
            }
        )
        return labels

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """One gauge family per DCGM field, a sample per device (``prometheus_client``'s collector API)."""
        devices = self.devices()
        rows = [(self.labels(d), self.values(d)) for d in devices]
        blank = GpuDevice(0, "", "", "", None, 0, self._mig_slots)
        names = list(rows[0][0]) if rows else list(self.labels(blank))
        for metric, _kind, text in _FIELDS:
            if metric == "DCGM_FI_DEV_GPU_UTIL" and self._mig_slots:
                continue  # not readable per MIG instance (NVIDIA/DCGM#80): dcgm-exporter serves none
            family = GaugeMetricFamily(metric, text, labels=names)
            for labels, values in rows:
                family.add_metric([labels[n] for n in names], values[metric])
            yield family
