"""KubeRay's behaviour for the local control plane: RayCluster and RayJob with real local Ray heads.

:func:`kuberay_controllers` builds the controllers a control plane runs, from its
:class:`~rayqueue_local.options.ControlPlaneOptions` (``cp.options``): none without
``kuberay_enabled``; a real local Ray head per running RayCluster with ``ray_enabled`` (otherwise
clusters are ready at once on KubeRay's default ports and RayJobs are simulated for
``simulated_job_seconds``), at most ``max_starting_heads`` starting at once; a real Prometheus with
``prometheus_enabled``. What ``cp.unavailable`` names (``"ray"``, ``"prometheus"``: the control plane
found it cannot run here) is not attempted: a cluster's head fails at once with that reason.

Modules: :mod:`.raycluster` and :mod:`.rayjob` (the controllers), :mod:`.runtime` (the Ray heads),
:mod:`.autoscaling` (Ray's own autoscaler and real worker nodes for ``enableInTreeAutoscaling``),
:mod:`.submitter` (the RayJob's K8sJobMode submitter pod from ``submitterPodTemplate``) over
:mod:`rayqueue_local.runtime.kubelet` (a pod's volumes and init containers, run locally),
:mod:`.resources` (pure helpers), :mod:`.gpumetrics`.

Example:
    >>> from rayqueue_local.options import ControlPlaneOptions
    >>> class CP: options, unavailable = ControlPlaneOptions(ray_enabled=False), {}
    >>> [c.name for c in kuberay_controllers(CP())]
    ['kuberay-raycluster', 'kuberay-rayjob', 'gpu-metrics']
    >>> CP.options = ControlPlaneOptions(kuberay_enabled=False); kuberay_controllers(CP())
    []
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.controllers.kuberay.autoscaling import InTreeAutoscaling
from rayqueue_local.controllers.kuberay.gpumetrics import GpuMetricsController
from rayqueue_local.controllers.kuberay.raycluster import RayClusterController
from rayqueue_local.controllers.kuberay.rayjob import RayJobController
from rayqueue_local.controllers.kuberay.runtime import RayRuntime
from rayqueue_local.controllers.plane import Plane
from rayqueue_local.options import ControlPlaneOptions

__all__ = [
    "GpuMetricsController",
    "RayClusterController",
    "RayJobController",
    "RayRuntime",
    "kuberay_controllers",
]


def kuberay_controllers(cp: Plane) -> list[Any]:
    """The RayCluster, RayJob and GPU-metrics controllers for ``cp``, sharing one Ray runtime
    (none unless ``cp.options.kuberay_enabled``); the runtime is published as ``cp.ray_runtime``."""
    options: ControlPlaneOptions = cp.options
    if not options.kuberay_enabled:
        return []
    unavailable: dict[str, str] = getattr(cp, "unavailable", {})
    runtime = RayRuntime(
        enabled=options.ray_enabled,
        unavailable=unavailable.get("ray"),
        max_starting=options.max_starting_heads,
    )
    cp.ray_runtime = runtime  # published for tests and tools
    prometheus = options.prometheus_enabled and "prometheus" not in unavailable
    # Ray's own autoscaler and real worker nodes for clusters with in-tree autoscaling (needs Ray)
    autoscaling = (
        InTreeAutoscaling(lambda: (cp.server, cp.ca_cert_path, cp.auth))
        if options.ray_enabled and "ray" not in unavailable
        else None
    )
    return [
        RayClusterController(runtime, autoscaling),
        RayJobController(runtime, simulated_job_seconds=options.simulated_job_seconds),
        GpuMetricsController(cp, runtime=runtime, prometheus=prometheus),
    ]
