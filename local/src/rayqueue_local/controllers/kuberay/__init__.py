"""KubeRay's behaviour for the local control plane: RayCluster and RayJob with real local Ray heads.

:func:`kuberay_controllers` builds the controllers a control plane runs. Options are read from the
control plane with defaults, so that pure API tests start no process:

- ``cp.kuberay_enabled`` (default ``False``, implied by ``cp.ray_enabled``): run the RayCluster,
  RayJob and GPU-metrics controllers at all. Off by default so that a control plane used for pure
  API tests (which write RayCluster status themselves) has no controller owning that status.
- ``cp.ray_enabled`` (default ``False``): start a real local Ray head per running RayCluster;
  without it, clusters become ready at once on KubeRay's default ports and RayJobs are simulated.
- ``cp.prometheus_enabled`` (default ``False``): start a real Prometheus scraping the GPU metrics.
- ``cp.max_starting_heads`` (default 2), ``cp.simulated_job_seconds`` (default 1.0).

Modules: :mod:`.raycluster` and :mod:`.rayjob` (the controllers), :mod:`.runtime` (the Ray heads),
:mod:`.submitter` (the RayJob's K8sJobMode submitter pod from ``submitterPodTemplate``) over
:mod:`.kubelet` (a pod's volumes and init containers, run locally), :mod:`.resources` (pure
helpers), :mod:`.gpumetrics`.

Example:
    >>> class CP: kuberay_enabled = True
    >>> [c.name for c in kuberay_controllers(CP())]
    ['kuberay-raycluster', 'kuberay-rayjob', 'gpu-metrics']
    >>> kuberay_controllers(object())
    []
"""

from __future__ import annotations

import contextlib
from typing import Any

from rayqueue_local.controllers.kuberay.gpumetrics import GpuMetricsController
from rayqueue_local.controllers.kuberay.raycluster import RayClusterController
from rayqueue_local.controllers.kuberay.rayjob import RayJobController
from rayqueue_local.controllers.kuberay.runtime import RayRuntime

__all__ = [
    "GpuMetricsController",
    "RayClusterController",
    "RayJobController",
    "RayRuntime",
    "kuberay_controllers",
]


def kuberay_controllers(cp: Any) -> list[Any]:
    """The RayCluster, RayJob and GPU-metrics controllers for ``cp``, sharing one Ray runtime
    (none unless ``cp.kuberay_enabled`` or ``cp.ray_enabled``)."""
    if not (getattr(cp, "kuberay_enabled", False) or getattr(cp, "ray_enabled", False)):
        return []
    runtime = RayRuntime(
        enabled=bool(getattr(cp, "ray_enabled", False)),
        max_starting=int(getattr(cp, "max_starting_heads", 2)),
    )
    with contextlib.suppress(AttributeError):  # published for tests and tools
        cp.ray_runtime = runtime
    return [
        RayClusterController(runtime),
        RayJobController(runtime, simulated_job_seconds=float(getattr(cp, "simulated_job_seconds", 1.0))),
        GpuMetricsController(cp, runtime=runtime, prometheus=bool(getattr(cp, "prometheus_enabled", False))),
    ]
