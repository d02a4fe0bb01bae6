"""GPU metrics for the local control plane: the DCGM-style exporter and, optionally, a real Prometheus.

:class:`GpuMetricsController` serves :class:`~rayqueue_local.runtime.metrics.GpuMetricsExporter` over
the store's pods, with the utilisation following what each cluster's work does on the GPUs it was
given (:class:`~rayqueue_local.runtime.gpuwork.ProcessGpuWork` over the processes of the cluster's
head in the :class:`~.runtime.RayRuntime`, with the GPU ids Ray handed its workers at run time as the
head's raylet tells them, :class:`~rayqueue_local.runtime.raygpus.RayletGpuHolders`: a job, task,
actor or Ray Train worker given a GPU that computes is busy, a ``sleep`` or a CPU-only job is not;
the same source of truth for KEDA's query and the reaper's), and starts a
:class:`~rayqueue_local.runtime.prometheus.PrometheusServer`
scraping it every second when the control plane asks for one (``cp.prometheus_enabled``).
It publishes both on the control plane as ``cp.gpu_metrics`` and ``cp.prometheus`` (``None``
without Prometheus), so a test or a KEDA trigger can use ``cp.prometheus.url``.

Example:
    >>> class CP: pass
    >>> ctrl = GpuMetricsController(CP(), runtime=None, prometheus=False)
    >>> ctrl.start(None); ctrl.exporter.url.startswith("http://127.0.0.1:")
    True
    >>> ctrl.stop()
"""

from __future__ import annotations

import logging
from typing import Any

from rayqueue_local.controllers.kuberay.runtime import RayRuntime
from rayqueue_local.controllers.plane import Plane
from rayqueue_local.runtime.gpuwork import ProcessGpuWork
from rayqueue_local.runtime.kubestate import KubeStateExporter
from rayqueue_local.runtime.metrics import GpuMetricsExporter
from rayqueue_local.runtime.nvml import NvmlReader
from rayqueue_local.runtime.prometheus import PrometheusServer
from rayqueue_local.runtime.raygpus import RayletGpuHolders

log = logging.getLogger(__name__)

__all__ = ["GpuMetricsController"]


class GpuMetricsController:
    """Runs the exporter (always; it is a thread) and Prometheus (when ``prometheus``)."""

    name = "gpu-metrics"

    def __init__(
        self, cp: Plane, *, runtime: RayRuntime | None, prometheus: bool, scrape_interval: float = 1.0
    ) -> None:
        self.cp = cp
        self.runtime = runtime
        self.want_prometheus = prometheus
        self.scrape_interval = scrape_interval
        self.exporter = GpuMetricsExporter()
        #: kube-state-metrics- and Kueue-style series (pod GPU requests, owners, queues), for usage reports.
        self.kubestate: KubeStateExporter | None = None
        self.prometheus: PrometheusServer | None = None
        self.nvml: NvmlReader | None = None
        self.work = ProcessGpuWork()
        self.holders = RayletGpuHolders()

    def gpu_work(self, namespace: str, cluster: str) -> set[int]:
        """The ordinals of the cluster's GPUs that its head's processes were given and compute on."""
        handle = self.runtime.find(namespace, cluster) if self.runtime is not None else None
        process = handle.head.process if handle is not None and handle.head is not None else None
        if handle is None or process is None:
            return set()
        return self.work.busy_gpus(process.pids(), held=self.holders.holders(handle.dashboard_url))

    def measured(self, namespace: str, cluster: str) -> float | None:
        """The SM use (%) that cluster's Ray head processes make of the real GPUs they hold, by NVML.

        None when there is no NVML, no such head, or its processes hold no GPU (then the exporter
        falls back to the emulated activity).
        """
        handle = self.runtime.find(namespace, cluster) if self.runtime is not None else None
        process = handle.head.process if handle is not None and handle.head is not None else None
        if self.nvml is None or process is None:
            return None
        usage = self.nvml.usage(set(process.pids()))
        return usage.sm_percent if usage.holds_gpu else None

    def start(self, store: Any) -> None:
        """Serve the exporter, start Prometheus (waits until it has scraped once), publish both."""
        if store is not None:
            self.exporter.set_pod_source(lambda: store.list("pods"))
        if self.runtime is not None:
            self.exporter.set_activity_source(self.gpu_work)
            self.nvml = NvmlReader.open()
            if self.nvml is not None:
                self.exporter.set_utilisation_source(self.measured)
                log.info("GPU metrics: real per-process SM use from NVML (%d GPUs)", self.nvml.gpu_count)
        self.exporter.start()
        self.cp.gpu_metrics = self.exporter
        self.cp.prometheus = None
        if self.want_prometheus:
            jobs = []
            if store is not None:
                self.kubestate = KubeStateExporter(objects=lambda key: store.list(key, copy=False))
                self.kubestate.start()
                # kube-prometheus-stack scrapes kube-state-metrics with honorLabels (its pod labels stay)
                jobs.append(
                    {
                        "job_name": "kube-state-metrics",
                        "targets": [self.kubestate.target],
                        "honor_labels": True,
                    }
                )
            prom = PrometheusServer(
                [self.exporter.target], scrape_interval=self.scrape_interval, extra_jobs=jobs
            )
            prom.start()
            try:
                prom.wait_ready()
            except Exception:  # whatever failed (re-raised below), stop what this start began
                prom.stop()
                self.exporter.stop()
                if self.kubestate is not None:
                    self.kubestate.stop()
                raise
            self.prometheus = prom
            self.cp.prometheus = prom
            log.info("Prometheus at %s scraping the GPU metrics at %s", prom.url, self.exporter.url)

    def stop(self) -> None:
        """Stop Prometheus and the exporter."""
        if self.prometheus is not None:
            self.prometheus.stop()
            self.prometheus = None
        if self.kubestate is not None:
            self.kubestate.stop()
            self.kubestate = None
        self.exporter.stop()
        if self.nvml is not None:
            self.nvml.close()
            self.nvml = None
