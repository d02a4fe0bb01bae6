"""Pods, run for real on this machine: the local kubelet and the workload controllers.

:mod:`.kubelet` runs every pod that says what to run (``command``) as local processes;
:mod:`.workloads` makes the pods of ``apps/v1`` Deployments and ``batch/v1`` Jobs.
:func:`pod_controllers` builds them for a control plane.

Example:
    >>> class CP: server, ca_cert_path, auth = "", None, None
    >>> [c.name for c in pod_controllers(CP())]
    ['kubelet', 'deployment', 'job']
"""

from __future__ import annotations

from typing import Any

from rayqueue_local.controllers.plane import Plane
from rayqueue_local.controllers.pods.kubelet import KubeletController
from rayqueue_local.controllers.pods.podworker import KUBELET_BACKOFF
from rayqueue_local.controllers.pods.workloads import JOB_BACKOFF, DeploymentController, JobController

__all__ = ["DeploymentController", "JobController", "KubeletController", "pod_controllers"]


def pod_controllers(
    cp: Plane, *, restart_backoff: float = KUBELET_BACKOFF, job_backoff: float = JOB_BACKOFF
) -> list[Any]:
    """The kubelet, Deployment and Job controllers for ``cp``; the kubelet is published as
    ``cp.kubelet``. Tokens are issued by ``cp.auth.service_account_token`` (``None``: no
    credentials are projected into pods). ``restart_backoff`` and ``job_backoff``: the first
    back-off of a container restart and of a failed Job pod's replacement (upstream: 10 s each)."""
    auth = getattr(cp, "auth", None)
    kubelet = KubeletController(
        token_source=auth.service_account_token if auth is not None else None,
        server=getattr(cp, "server", ""),
        ca_cert_path=getattr(cp, "ca_cert_path", None),
        backoff_initial=restart_backoff,
    )
    cp.kubelet = kubelet
    return [kubelet, DeploymentController(), JobController(backoff_initial=job_backoff)]
